"""Fault injection for the races the stress runs found once and left open: a promotion whose
note its user renames during the move (one memory, two notes in the promoted folder), and a
supersede whose stale note its user edits between the two writes (a one-sided link, a 409 for
a save that is on disk). Each test puts the user's action exactly inside the window."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import REFERENCE, copy_vault
from tests.conftest import SAMPLE_VAULT
from tests.stress.crash_harness import memory_id, notes_on_disk
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.store import memory_store
from vaultmem.vault import writes

PROMOTED_REF = "dfc888ea-0e58-4d2e-8499-fe37117edeba"


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


def holders(app: App, ref: str) -> list[str]:
    return sorted(p for p, data in notes_on_disk(app.root).items()
                  if memory_id(data.decode("utf-8", "replace")) == ref)


def renamed_by_user(src: Path) -> Path:
    """What the user does: gives the note a name of their own, in its folder."""
    mine = src.with_name("My own name for it.md")
    os.rename(src, mine)
    return mine


@pytest.mark.timeout(60)
@pytest.mark.parametrize("system", ["atomic rename", "hard link then unlink"])
def test_a_promotion_renamed_by_its_user_mid_move_leaves_one_note(
    journalled_app: App, monkeypatch: pytest.MonkeyPatch, system: str
) -> None:
    """The promotion's move was a hard link then an unlink: a rename by the user in between
    left the note under the user's name and under the promoted name; the next sweep moved the
    user's one into the promoted folder too (one memory, two notes there). Now the move is one
    atomic no-replace rename, and the link-then-unlink fallback undoes its link."""
    app = journalled_app
    real_link, real_rename = os.link, writes.rename_noreplace if hasattr(
        writes, "rename_noreplace") else None
    done: list[Path] = []

    def user_renames_once(src: Path) -> None:
        if not done and Path(src).name != "My own name for it.md":
            done.append(renamed_by_user(Path(src)))

    def link_then_user(src: Any, dst: Any, **kwargs: Any) -> None:
        real_link(src, dst, **kwargs)
        user_renames_once(Path(src))  # between the link and the unlink

    def user_then_rename(src: Path, dst: Path) -> bool:
        user_renames_once(src)  # at the last instant before the one call
        assert real_rename is not None
        return real_rename(src, dst)

    monkeypatch.setattr(os, "link", link_then_user)
    if system == "atomic rename":
        monkeypatch.setattr(writes, "rename_noreplace", user_then_rename, raising=False)
    else:
        monkeypatch.setattr(writes, "rename_noreplace", lambda src, dst: False, raising=False)
    app.lifecycle.promote(PROMOTED_REF, REFERENCE)
    assert done, "the user's rename was not injected"
    monkeypatch.undo()
    app.sync.reindex()
    app.lifecycle.sweep(REFERENCE, dry_run=False)  # finishes any interrupted move
    found = holders(app, PROMOTED_REF)
    assert len(found) == 1, found
    assert found[0].startswith("STM/")


@pytest.mark.timeout(60)
def test_a_move_whose_source_was_deleted_mid_move_brings_nothing_back(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    """A user deleting the note between the link and the unlink: the move leaves nothing
    behind (the old code kept the linked copy: a deleted memory came back)."""
    source, target = tmp_path / "a.md", tmp_path / "STM" / "a.md"
    source.write_text("# A\n", encoding="utf-8")
    real_link = os.link

    def link_then_delete(src: Any, dst: Any, **kwargs: Any) -> None:
        real_link(src, dst, **kwargs)
        os.unlink(src)

    monkeypatch.setattr(os, "link", link_then_delete)
    monkeypatch.setattr(writes, "rename_noreplace", lambda src, dst: False)  # the fallback
    with pytest.raises(FileNotFoundError):
        writes.move_file(source, target)
    assert not source.exists() and not target.exists()


OLD = "The NAS admin page is on port 5000."
NEW = "The NAS admin page moved to port 5001 after the DSM 7 upgrade."


def detecting_app(tmp_path: Path) -> App:
    vault = tmp_path / "vault"
    (vault / "memories").mkdir(parents=True)
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "update_cosine": 0.3, "auto_supersede": True})
    app = build_app(settings)
    app.sync.reindex()
    return app


def user_edits_before_write(monkeypatch: pytest.MonkeyPatch, path: Callable[[], str],
                            times: int) -> list[str]:
    """The user appends a line to the note at `path()` just before vaultmem's next `times`
    guarded writes of it (after vaultmem read it)."""
    real = memory_store.edit_memory_note
    edits: list[str] = []

    def edit(root: Path, rel: str, *args: Any, **kwargs: Any) -> Any:
        if rel == path() and len(edits) < times:
            line = f"A line the user added ({len(edits) + 1}).\n"
            with open(root / rel, "a", encoding="utf-8") as handle:
                handle.write(line)
            edits.append(line)
        return real(root, rel, *args, **kwargs)

    monkeypatch.setattr(memory_store, "edit_memory_note", edit)
    return edits


@pytest.mark.timeout(60)
@pytest.mark.parametrize("explicit", [False, True])
def test_a_supersede_whose_old_note_is_edited_between_its_writes_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    """The successor's link was written, then the stale note's write found the user's edit:
    a one-sided link stayed on disk and the save, on disk too, was answered 409. Now the link
    is planned again from the notes as they are and both halves are written."""
    app = detecting_app(tmp_path)
    try:
        api = app.api(clock=lambda: REFERENCE)
        old = api.call("save", {"content": OLD})["memory"]
        edits = user_edits_before_write(monkeypatch, lambda: old["path"], times=1)
        saved = api.call("save", {"content": NEW, **({"supersedes": old["id"]} if explicit
                                                     else {})})
        assert edits
        assert saved["superseded"]["id"] == old["id"]
        assert saved["memory"]["supersedes"] == old["id"]
        text = (app.root / old["path"]).read_text(encoding="utf-8")
        assert f"stm_superseded_by: {saved['memory']['id']}" in text
        assert text.endswith(edits[0])  # the user's edit kept
    finally:
        app.close()


@pytest.mark.timeout(60)
def test_a_supersede_that_cannot_finish_takes_its_half_back_and_the_save_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user editing the stale note at every try: no one-sided link is left, and the save is
    answered as saved (the update proposed for review instead of a 409)."""
    app = detecting_app(tmp_path)
    try:
        api = app.api(clock=lambda: REFERENCE)
        old = api.call("save", {"content": OLD})["memory"]
        user_edits_before_write(monkeypatch, lambda: old["path"], times=100)
        saved = api.call("save", {"content": NEW})
        assert saved["created"] and saved["superseded"] is None
        assert saved["possible_update_of"]["applied"] is False
        new_text = (app.root / saved["memory"]["path"]).read_text(encoding="utf-8")
        assert "stm_supersedes" not in new_text
        assert f"stm_possible_update_of: {old['id']}" in new_text
        assert "stm_superseded_by" not in (app.root / old["path"]).read_text(encoding="utf-8")
    finally:
        app.close()
