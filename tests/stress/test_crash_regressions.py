"""Deterministic guards for the bugs the crash cycles of test_crash.py found: each replays one
race (a sweep against later touches and pins, a flush against a rename or a move, a save or a
merge whose note is moved at once, temp files of an interrupted write)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import REFERENCE, copy_vault
from tests.conftest import SAMPLE_VAULT
from tests.stress.crash_harness import (
    memory_id,
    notes_on_disk,
)
from vaultmem.api.wire import to_wire
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.errors import ConcurrentEdit
from vaultmem.store import memory_store
from vaultmem.vault.frontmatter import parse
from vaultmem.vault.writes import remove_stale_temp_files


@pytest.fixture
def journalled_app(tmp_path: Path) -> Iterator[App]:
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": copy_vault(SAMPLE_VAULT, tmp_path / "vault"), "data_dir": tmp_path / "data",
        "embedding_model": "fake"})
    app = build_app(settings, daemon=True)
    app.sync.reindex()
    try:
        yield app
    finally:
        app.close()


@pytest.mark.timeout(60)
def test_sweep_keeps_uses_and_pins_recorded_after_its_plan(
    journalled_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep used to write the state it planned with, undoing uses (and pins) recorded
    between its plan and its writes: acknowledged touches were lost, pinned notes archived."""
    lifecycle, uses, views = journalled_app.lifecycle, journalled_app.uses, journalled_app.views
    planned = lifecycle.plan
    touched: dict[str, int] = {}
    pinned: list[str] = []

    def plan_then_use(now: Any, snapshot: Any = None) -> Any:
        memories, plan = planned(now, snapshot)
        for item in plan.promote + plan.archive[1:]:
            touched[item.id] = uses.touch(item.id, now).state.use_count
        uses.set_pinned(plan.archive[0].id, True, now)
        pinned.append(plan.archive[0].id)
        return memories, plan

    monkeypatch.setattr(lifecycle, "plan", plan_then_use)
    result = to_wire(lifecycle.sweep(REFERENCE, dry_run=False))
    assert result["promoted"] and result["archived"]
    for ref, uses in touched.items():
        assert views.get(ref, REFERENCE).state.use_count == uses
    assert pinned[0] not in {move["id"] for move in result["archived"]}
    view = views.get(pinned[0], REFERENCE)
    assert view.state.pinned and view.state.status == "active"


@pytest.mark.timeout(60)
def test_flush_finds_a_memory_renamed_before_the_index_saw_it(journalled_app: App) -> None:
    """A flush used to drop the pending uses of a memory renamed since the catalog last saw
    it ("memory gone"), so acknowledged touches vanished after a user's rename."""
    store = journalled_app.store
    assert store.journal is not None
    ref = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
    uses = journalled_app.uses.touch(ref, REFERENCE).state.use_count
    old = journalled_app.root / "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
    new = journalled_app.root / "Inbox/Sessions.md"
    os.rename(old, new)  # no watcher here: the catalog still lists the old path
    report = store.flush()
    assert report.written == ["Inbox/Sessions.md"] and len(store.journal) == 0
    assert parse(new.read_text(encoding="utf-8"))[0]["stm_use_count"] == uses
    assert not old.exists()


@pytest.mark.timeout(60)
def test_flush_waits_for_a_move_in_progress(
    journalled_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush used to write a memory while a sweep was moving it (between the new name's
    link and the old name's unlink): the flushed copy was then unlinked, losing its uses."""
    store = journalled_app.store
    assert store.journal is not None
    ref = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
    uses: list[int] = []

    def move_with_a_flush_inside(src: Path, dst: Path) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.link(src, dst)
        uses.append(journalled_app.uses.touch(ref, REFERENCE).state.use_count)  # pending, old path
        flusher = threading.Thread(target=store.flush)
        flusher.start()
        flusher.join(timeout=0.5)
        os.unlink(src)
        flushers.append(flusher)

    flushers: list[threading.Thread] = []
    monkeypatch.setattr("vaultmem.vault.memories.move_file", move_with_a_flush_inside)
    moved = to_wire(journalled_app.lifecycle.promote(ref, REFERENCE))["promoted"][0]
    flushers[0].join(timeout=30)
    store.flush()
    holders = [p for p, d in notes_on_disk(journalled_app.root).items()
               if memory_id(d.decode()) == ref]
    assert holders == [moved["to"]]
    text = (journalled_app.root / moved["to"]).read_text(encoding="utf-8")
    assert parse(text)[0]["stm_use_count"] == uses[0]


@pytest.mark.timeout(60)
def test_save_answers_when_its_note_is_moved_at_once(
    journalled_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save used to re-read its new note to answer: when the user moved the note at once,
    the written memory was answered with 404, and a client would save it again."""
    sync_part, root = journalled_app.sync, journalled_app.root
    sync = sync_part.sync_paths
    moved: list[str] = []

    def move_then_sync(paths: Any) -> Any:
        for path in paths:
            if path.startswith("memories/") and (root / path).exists() and not moved:
                os.rename(root / path, root / "Inbox" / "Moved.md")
                moved.append(path)
        return sync(paths)

    monkeypatch.setattr(sync_part, "sync_paths", move_then_sync)
    content = "The garage door opener switched to a rolling code in May 2026."
    answer = journalled_app.lifecycle.save(content, REFERENCE)
    assert answer.created and answer.memory.path == moved[0]
    assert memory_id((root / "Inbox" / "Moved.md").read_text()) == answer.memory.id


@pytest.mark.timeout(60)
def test_sweep_and_merge_survive_a_note_moved_under_them(
    journalled_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note renamed by its user between vaultmem's state write and its move used to fail
    the whole sweep or merge with a 500 (FileNotFoundError); now the move is left to a later
    sweep, and a merge whose original vanished is refused as a concurrent edit (409)."""
    app, root = journalled_app, journalled_app.root
    write = memory_store.edit_memory_note
    renamed: list[Path] = []

    def write_then_user_renames(vault: Path, path: str, *args: Any) -> Any:
        written = write(vault, path, *args)
        if not renamed:
            renamed.append(root / "Inbox" / "Renamed by hand.md")
            os.rename(root / path, renamed[0])
        return written

    monkeypatch.setattr(memory_store, "edit_memory_note", write_then_user_renames)
    first = to_wire(app.lifecycle.sweep(REFERENCE, dry_run=False))
    monkeypatch.setattr(memory_store, "edit_memory_note", write)
    moved_id = memory_id(renamed[0].read_text(encoding="utf-8"))
    assert moved_id not in {m["id"] for m in first["archived"]}
    app.sync.sync_paths(["Inbox/Renamed by hand.md"])  # what the watcher would do
    second = to_wire(app.lifecycle.sweep(REFERENCE, dry_run=False))
    assert [m["id"] for m in second["finished_moves"]] == [moved_id]

    consolidator = app.consolidator
    cluster = to_wire(consolidator.list_clusters(REFERENCE))["clusters"][0]
    merged = consolidator._write_merged

    def write_merged_then_user_deletes(*args: Any) -> Any:
        os.unlink(root / cluster["members"][-1]["path"])
        return merged(*args)

    monkeypatch.setattr(consolidator, "_write_merged", write_merged_then_user_deletes)
    with pytest.raises(ConcurrentEdit):
        to_wire(consolidator.merge(cluster["id"], REFERENCE))


def test_start_up_removes_only_stale_temp_files(tmp_path: Path) -> None:
    """A kill between writing a temp file and renaming it left the temp file in the vault for
    good (sync tools carried it); the daemon now removes old ones when it starts."""
    (tmp_path / "memories").mkdir()
    stale = tmp_path / "memories" / ".vaultmem-tmp-0123456789abcdef.tmp"
    fresh = tmp_path / ".vaultmem-tmp-fedcba9876543210.tmp"
    user = tmp_path / "memories" / "draft.tmp"
    for path in (stale, fresh, user):
        path.write_text("x", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(user, (old, old))
    an_hour_before = datetime.fromtimestamp(old, UTC)
    assert remove_stale_temp_files(tmp_path, an_hour_before) == []  # the horizon is `now`'s
    assert stale.exists()
    now = datetime.now(UTC)
    assert remove_stale_temp_files(tmp_path, now) == ["memories/.vaultmem-tmp-0123456789abcdef.tmp"]
    assert not stale.exists() and fresh.exists() and user.exists()


# The kill cycles ------------------------------------------------------------------------------


class Killed(BaseException):
    """A SIGKILL landing at this point: nothing after it runs, no handler sees it."""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("indexed", [False, True], ids=["before-the-index-saw-it", "indexed"])
def test_merge_interrupted_after_its_note_then_merged_again_writes_one_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    """Found by test_crash.py (seed 663392436): a kill after a merge wrote its new note but
    before it archived an original left the originals active; the same cluster merged again the
    same day got the same consolidated id and wrote a second note carrying it (later promoted,
    two notes with one id). Merging it again now finishes the interrupted merge instead."""
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": copy_vault(SAMPLE_VAULT, tmp_path / "vault"), "data_dir": tmp_path / "data",
        "embedding_model": "fake"})
    first = build_app(settings, daemon=True)
    first.sync.reindex()
    cluster = to_wire(first.consolidator.list_clusters(REFERENCE))["clusters"][0]
    members = {m["id"] for m in cluster["members"]}
    before = notes_on_disk(first.root)

    def killed(*args: Any) -> Any:
        raise Killed

    monkeypatch.setattr(memory_store, "edit_memory_note", killed)
    with pytest.raises(Killed):
        first.consolidator.merge(cluster["id"], REFERENCE)
    first.close()
    monkeypatch.undo()
    interrupted = {p: memory_id(t.decode()) for p, t in notes_on_disk(first.root).items()
                   if p not in before}
    assert len(interrupted) == 1  # the new note, and no original archived
    [(new_path, new_id)] = interrupted.items()

    app = build_app(settings, daemon=True)  # the restart
    try:
        if indexed:  # but not close enough to the originals to join their cluster
            app.sync.reindex()
            index = app.index()
            vectors = index.note_vectors
            monkeypatch.setattr(index, "note_vectors", lambda paths: {
                p: v for p, v in vectors(paths).items() if p != new_path})
        result = to_wire(app.consolidator.merge(cluster["id"], REFERENCE))
        assert result["merged_into"]["id"] == new_id
        assert {m["id"] for m in result["archived"]} == members
        carriers = [p for p, t in notes_on_disk(app.root).items()
                    if memory_id(t.decode()) == new_id]
        assert carriers == [result["merged_into"]["path"]], carriers
        archived = [t.decode() for t in notes_on_disk(app.root).values()
                    if memory_id(t.decode()) in members]
        assert len(archived) == len(members)
        assert all(f"stm_merged_into: {new_id}" in text for text in archived)
    finally:
        app.close()
