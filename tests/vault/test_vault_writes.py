"""Atomic and guarded writes, including fault injection and races."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from vaultmem.errors import ConcurrentEdit, FrontmatterError
from vaultmem.vault import memories
from vaultmem.vault.memories import NoteEdit, edit_memory_note
from vaultmem.vault.writes import (
    TEMP_PREFIX,
    atomic_write,
    create_new,
    guarded_write,
    move_file,
    sha256_bytes,
)

ORIGINAL = b"---\r\ntitle: 'Mine'  # keep\r\nstm_use_count: 1\r\n---\r\nbody \xf0\x9f\x8e\x89\r\n"


def _temp_files(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(TEMP_PREFIX)]


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "note.md"
    path.write_bytes(ORIGINAL)
    return path


class TestAtomicWrite:
    def test_replaces_content_and_keeps_permission_bits(self, note: Path) -> None:
        note.chmod(0o640)
        atomic_write(note, b"new")
        assert note.read_bytes() == b"new"
        assert stat.S_IMODE(note.stat().st_mode) == 0o640
        assert _temp_files(note.parent) == []

    def test_writes_through_a_symlink_and_keeps_it(self, note: Path) -> None:
        link = note.parent / "link.md"
        link.symlink_to(note.name)
        atomic_write(link, b"via link")
        assert link.is_symlink()
        assert note.read_bytes() == b"via link"

    @pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
    def test_failure_mid_way_leaves_original_and_no_temp(
        self, note: Path, monkeypatch: pytest.MonkeyPatch, failing: str
    ) -> None:
        _inject_failure(monkeypatch, failing)
        with pytest.raises(OSError, match="injected"):
            atomic_write(note, b"x" * 100_000)
        assert note.read_bytes() == ORIGINAL
        assert _temp_files(note.parent) == []

    def test_edit_stm_failure_leaves_original(
        self, note: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        _inject_failure(monkeypatch, "replace")
        with pytest.raises(OSError):
            _edit(note, {"stm_use_count": 2})
        assert note.read_bytes() == ORIGINAL
        assert _temp_files(note.parent) == []


def _inject_failure(monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    def boom(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.EIO, "injected failure")

    if failing == "replace":
        monkeypatch.setattr(os, "replace", boom)
    elif failing == "fsync":
        monkeypatch.setattr(os, "fsync", boom)
    else:
        real_fdopen = os.fdopen

        class HalfWriter:
            def __init__(self, fd: int, *args: Any, **kwargs: Any) -> None:
                self._file = real_fdopen(fd, *args, **kwargs)

            def __enter__(self) -> HalfWriter:
                return self

            def __exit__(self, *exc: object) -> None:
                self._file.close()

            def write(self, data: bytes) -> int:
                self._file.write(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "injected failure: disk full")

            def __getattr__(self, name: str) -> Any:
                return getattr(self._file, name)

        monkeypatch.setattr(os, "fdopen", HalfWriter)


class TestGuardedWrite:
    def test_writes_when_unchanged(self, note: Path) -> None:
        guarded_write(note, b"new", sha256_bytes(ORIGINAL))
        assert note.read_bytes() == b"new"

    def test_refuses_when_changed(self, note: Path) -> None:
        note.write_bytes(b"user edit")
        with pytest.raises(ConcurrentEdit):
            guarded_write(note, b"new", sha256_bytes(ORIGINAL))
        assert note.read_bytes() == b"user edit"
        assert _temp_files(note.parent) == []

    def test_refuses_when_deleted(self, note: Path) -> None:
        note.unlink()
        with pytest.raises(ConcurrentEdit):
            guarded_write(note, b"new", sha256_bytes(ORIGINAL))
        assert not note.exists()


def _edit(path: Path, updates: dict[str, Any], expected_hash: str | None = None) -> str | None:
    """An stm_* edit as the memory store makes it: from the text it read, guarded."""
    raw = path.read_bytes()
    written = edit_memory_note(path.parent, path.name, raw.decode("utf-8"),
                               expected_hash or sha256_bytes(raw), NoteEdit(updates))
    return None if written is None else written[0].file_hash


class TestEditStm:
    def test_edits_only_stm_lines(self, note: Path) -> None:
        new_hash = _edit(note, {"stm_use_count": 2, "stm_status": "active"})
        data = note.read_bytes()
        assert data == ORIGINAL.replace(
            b"stm_use_count: 1\r\n", b"stm_use_count: 2\r\nstm_status: active\r\n"
        )
        assert new_hash == sha256_bytes(data)

    def test_no_write_when_nothing_changes(
        self, note: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(memories, "guarded_write", _must_not_be_called)
        assert _edit(note, {"stm_use_count": 1}) is None

    def test_stale_expected_hash_raises_and_writes_nothing(self, note: Path) -> None:
        with pytest.raises(ConcurrentEdit):
            _edit(note, {"stm_use_count": 2}, expected_hash=sha256_bytes(b"older"))
        assert note.read_bytes() == ORIGINAL

    def test_user_edit_during_the_splice_wins(
        self, note: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real_splice = memories.splice_stm
        user_bytes = ORIGINAL.replace(b"body", b"the user typed this")

        def splice_while_user_saves(text: str, updates: Any) -> str:
            result = real_splice(text, updates)
            note.write_bytes(user_bytes)  # the user saves in Obsidian right now
            return result

        monkeypatch.setattr(memories, "splice_stm", splice_while_user_saves)
        with pytest.raises(ConcurrentEdit):
            _edit(note, {"stm_use_count": 5})
        assert note.read_bytes() == user_bytes
        assert _temp_files(note.parent) == []

    @pytest.mark.parametrize(
        "raw",
        [
            b"---\ntitle: a\ntitle: b\n---\nbody",
            b"---\ntitle: x\n\tbad: 1\n---\n",
            b"---\ntitle: 'unclosed\n---\n",
            b"---\n- a list\n---\n",
        ],
    )
    def test_malformed_note_is_left_byte_identical(self, tmp_path: Path, raw: bytes) -> None:
        path = tmp_path / "bad.md"
        path.write_bytes(raw)
        with pytest.raises(FrontmatterError):
            _edit(path, {"stm_x": 1})
        assert path.read_bytes() == raw


def _must_not_be_called(*_args: object) -> None:
    raise AssertionError("nothing should be written")


class TestCreateNew:
    def test_creates_with_parents(self, tmp_path: Path) -> None:
        target = tmp_path / "a" / "b" / "new.md"
        create_new(target, b"hello")
        assert target.read_bytes() == b"hello"
        assert _temp_files(target.parent) == []

    def test_never_overwrites(self, note: Path) -> None:
        with pytest.raises(FileExistsError):
            create_new(note, b"other")
        assert note.read_bytes() == ORIGINAL
        assert _temp_files(note.parent) == []

    def test_never_overwrites_without_hard_links(
        self, note: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def no_links(*_args: Any, **_kwargs: Any) -> None:
            raise OSError(errno.EPERM, "hard links not supported")

        monkeypatch.setattr(os, "link", no_links)
        with pytest.raises(FileExistsError):
            create_new(note, b"other")
        assert note.read_bytes() == ORIGINAL
        create_new(tmp_path / "fresh.md", b"fresh")
        assert (tmp_path / "fresh.md").read_bytes() == b"fresh"
        assert _temp_files(tmp_path) == []

    def test_racing_creators_exactly_one_wins(self, tmp_path: Path) -> None:
        for round_number in range(30):
            target = tmp_path / f"race-{round_number}.md"
            outcomes = _race_creators(target, workers=4)
            winners = [w for w, outcome in outcomes.items() if outcome == "created"]
            assert len(winners) == 1
            assert sorted(outcomes) == [0, 1, 2, 3]
            assert target.read_bytes() == f"worker {winners[0]}".encode()
        assert _temp_files(tmp_path) == []


def _race_creators(target: Path, workers: int) -> dict[int, str]:
    outcomes: dict[int, str] = {}
    barrier = threading.Barrier(workers)

    def create(worker: int) -> None:
        barrier.wait()
        try:
            create_new(target, f"worker {worker}".encode())
            outcomes[worker] = "created"
        except FileExistsError:
            outcomes[worker] = "exists"

    threads = [threading.Thread(target=create, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


class TestMoveFile:
    def test_moves_into_new_folder(self, note: Path, tmp_path: Path) -> None:
        destination = tmp_path / "archive" / "note.md"
        move_file(note, destination)
        assert destination.read_bytes() == ORIGINAL
        assert not note.exists()

    @pytest.mark.parametrize("hard_links", [True, False])
    def test_never_overwrites(
        self, note: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hard_links: bool
    ) -> None:
        if not hard_links:
            monkeypatch.setattr(os, "link", _no_link)
        destination = tmp_path / "taken.md"
        destination.write_bytes(b"someone else")
        with pytest.raises(FileExistsError):
            move_file(note, destination)
        assert destination.read_bytes() == b"someone else"
        assert note.read_bytes() == ORIGINAL

    def test_fallback_without_hard_links_moves(
        self, note: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(os, "link", _no_link)
        move_file(note, tmp_path / "moved.md")
        assert (tmp_path / "moved.md").read_bytes() == ORIGINAL
        assert not note.exists()


def _no_link(*_args: Any, **_kwargs: Any) -> None:
    raise OSError(errno.EPERM, "hard links not supported")
