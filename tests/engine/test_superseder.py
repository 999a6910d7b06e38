"""Explicit updates: `save --supersedes`, `supersede`, `unsupersede`, and restore undoing it.

Both notes keep every byte but their `stm_*` lines; the stale memory fades (forget decision,
never promoted) and comes back current on restore or unsupersede.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vaultmem.api.ops import Api
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.errors import InvalidInput, NotFound
from vaultmem_testing.apps import fake_app

NOW = datetime.fromisoformat("2026-10-20T10:00:00+00:00")
OLD = "The NAS admin page is on port 5000."
NEW = "The NAS admin page moved to port 5001 after the DSM 7 upgrade."


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "NAS.md").write_text("# NAS\n\nThe NAS sits in the hall cupboard.\n",
                                            encoding="utf-8")
    with fake_app(vault, tmp_path / "data") as app:
        yield app


def api(app: App, now: datetime = NOW) -> Api:
    return app.api(clock=lambda: now)


def non_stm(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("stm_")]


def test_save_with_supersedes_links_both_notes_and_touches_only_stm_lines(app: App) -> None:
    old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
    before = (app.root / old["path"]).read_text(encoding="utf-8")
    later = NOW + timedelta(hours=1)
    saved = api(app, later).call("save", {"content": NEW, "tags": ["homelab"],
                                          "supersedes": old["id"]})
    new = saved["memory"]
    assert saved["superseded"]["id"] == old["id"]
    assert new["supersedes"] == old["id"] and new["superseded_by"] is None
    after = (app.root / old["path"]).read_text(encoding="utf-8")
    assert f"stm_superseded_by: {new['id']}" in after
    assert non_stm(after) == non_stm(before)
    assert f"stm_supersedes: {old['id']}" in (app.root / new["path"]).read_text("utf-8")
    stale = api(app, later).call("get", {"id": old["id"]})
    assert stale["superseded_by"] == new["id"]
    assert stale["decision"] == "forget" and "superseded by" in stale["reason"]


def test_a_superseded_memory_is_never_promoted_and_the_sweep_archives_it(app: App) -> None:
    old = api(app).call("save", {"content": OLD})["memory"]
    for hours in (1, 2, 3):
        api(app, NOW + timedelta(hours=hours)).call("touch", {"id": old["id"]})
    new = api(app).call("save", {"content": NEW, "supersedes": old["id"]})["memory"]
    later = api(app, NOW + timedelta(hours=4))
    plan = later.call("promote", {"dry_run": True})
    assert old["id"] not in [item["id"] for item in plan["promote"]]
    with pytest.raises(InvalidInput, match="never promoted"):
        later.call("promote", {"id": old["id"], "dry_run": True})
    swept = later.call("sweep", {"dry_run": False})
    assert [m["id"] for m in swept["archived"]] == [old["id"]]
    archived = later.call("get", {"id": old["id"]})
    assert archived["status"] == "archived" and archived["superseded_by"] == new["id"]


def test_restore_undoes_a_supersede_on_both_sides(app: App) -> None:
    old = api(app).call("save", {"content": OLD})["memory"]
    new = api(app).call("save", {"content": NEW, "supersedes": old["id"]})["memory"]
    later = api(app, NOW + timedelta(hours=4))
    later.call("sweep", {"dry_run": False})
    restored = later.call("restore", {"id": old["id"]})["memory"]
    assert restored["status"] == "active" and restored["superseded_by"] is None
    assert later.call("get", {"id": new["id"]})["supersedes"] is None
    assert restored["decision"] == "keep"


@pytest.mark.parametrize("undo_by", ["old", "new"])
def test_unsupersede_from_either_side(app: App, undo_by: str) -> None:
    old = api(app).call("save", {"content": OLD})["memory"]
    new = api(app).call("save", {"content": NEW})["memory"]
    linked = api(app).call("supersede", {"id": old["id"], "by": new["path"]})
    assert linked["superseded"]["superseded_by"] == new["id"]
    assert linked["by"]["supersedes"] == old["id"]
    undone = api(app).call("unsupersede", {"id": (old if undo_by == "old" else new)["id"]})
    assert undone["unsuperseded"]["id"] == old["id"]
    assert undone["unsuperseded"]["superseded_by"] is None
    assert undone["successor"]["supersedes"] is None
    for memory in (old, new):
        text = (app.root / memory["path"]).read_text(encoding="utf-8")
        assert "stm_supersede" not in text
    with pytest.raises(InvalidInput, match="nothing to undo"):
        api(app).call("unsupersede", {"id": old["id"]})


def test_bad_supersedes_change_nothing(app: App) -> None:
    old = api(app).call("save", {"content": OLD})["memory"]
    files = sorted(p.name for p in (app.root / "memories").iterdir())
    with pytest.raises(NotFound):
        api(app).call("save", {"content": NEW, "supersedes": "no-such-id"})
    with pytest.raises(InvalidInput, match="nothing to update"):
        api(app).call("save", {"content": OLD, "supersedes": old["id"]})
    with pytest.raises(InvalidInput, match="regular note"):
        api(app).call("save", {"content": NEW, "supersedes": "Notes/NAS.md"})
    with pytest.raises(InvalidInput, match="itself"):
        api(app).call("supersede", {"id": old["id"], "by": old["path"]})
    with pytest.raises(InvalidInput):
        api(app).call("supersede", {"id": old["id"]})
    assert sorted(p.name for p in (app.root / "memories").iterdir()) == files
    assert "stm_supersede" not in (app.root / old["path"]).read_text(encoding="utf-8")


def test_refusals_keep_links_consistent(app: App) -> None:
    a = api(app).call("save", {"content": OLD})["memory"]
    b = api(app).call("save", {"content": NEW})["memory"]
    c = api(app).call("save", {"content": "The NAS admin page is on port 5002 since May."})
    c_id = c["memory"]["id"]
    api(app).call("supersede", {"id": a["id"], "by": b["id"]})
    with pytest.raises(InvalidInput, match="already superseded"):
        api(app).call("supersede", {"id": a["id"], "by": c_id})
    with pytest.raises(InvalidInput, match="itself superseded"):
        api(app).call("supersede", {"id": b["id"], "by": a["id"]})
    with pytest.raises(InvalidInput, match="already supersedes"):
        api(app).call("supersede", {"id": c_id, "by": b["id"]})
    chained = api(app).call("supersede", {"id": b["id"], "by": c_id})  # a → b → c
    assert chained["superseded"]["supersedes"] == a["id"]
    assert chained["by"]["supersedes"] == b["id"]


def test_search_ranks_the_successor_first_and_marks_the_stale_memory(app: App) -> None:
    old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
    for hours in (1, 2, 3):  # the stale fact kept being used: it would rank first
        api(app, NOW + timedelta(hours=hours)).call("touch", {"id": old["id"]})
    query = {"query": "which port is the NAS admin page on", "top_k": 10}
    before = api(app, NOW + timedelta(hours=4)).call("search", query)["results"]
    new = api(app).call("save", {"content": NEW, "tags": ["homelab"]})["memory"]
    plain = api(app, NOW + timedelta(hours=4)).call("search", query)["results"]
    ids = [hit["id"] for hit in plain]
    assert ids.index(old["id"]) < ids.index(new["id"])  # not linked yet: the stale one first
    assert all(hit["superseded_by"] is None for hit in before + plain)
    api(app).call("supersede", {"id": old["id"], "by": new["id"]})
    results = api(app, NOW + timedelta(hours=4)).call("search", query)["results"]
    ids = [hit["id"] for hit in results]
    assert ids.index(new["id"]) < ids.index(old["id"])
    stale = results[ids.index(old["id"])]
    assert stale["superseded_by"] == {
        "id": new["id"], "path": new["path"], "title": new["title"], "uri": new["uri"]}
    assert all(hit["superseded_by"] is None for hit in results if hit["id"] != old["id"])
    # the order of everything else is what it was
    others = [i for i in ids if i not in (old["id"], new["id"])]
    assert others == [i for i in (h["id"] for h in plain) if i not in (old["id"], new["id"])]


def detecting_app(tmp_path: Path, **overrides: object) -> App:
    vault = tmp_path / "vault"
    (vault / "memories").mkdir(parents=True)
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "update_cosine": 0.3, **overrides})
    app = build_app(settings)
    app.sync.reindex()
    return app


def test_a_detected_update_is_proposed_not_applied(tmp_path: Path) -> None:
    app = detecting_app(tmp_path)
    try:
        old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
        api(app).call("save", {"content": "The NAS admin page is on port 5000 says the "
                               "manual.", "tags": ["work"]})  # another scope
        again = api(app).call("save", {"content": "Port 5000 is where the NAS admin page is.",
                                       "tags": ["homelab"]})
        assert again["possible_update_of"] is None  # same values, no cue: a restatement
        saved = api(app).call("save", {"content": NEW, "tags": ["homelab"]})
        update = saved["possible_update_of"]
        assert update["id"] in (old["id"], again["memory"]["id"])  # never the other scope
        assert update["applied"] is False
        assert "5000 → 5001" in update["reason"] and update["cosine"] >= 0.3
        assert saved["superseded"] is None and saved["memory"]["supersedes"] is None
        assert api(app).call("get", {"id": update["id"]})["superseded_by"] is None
    finally:
        app.close()


def test_auto_supersede_applies_a_detected_update(tmp_path: Path) -> None:
    app = detecting_app(tmp_path, auto_supersede=True)
    try:
        old = api(app).call("save", {"content": OLD})["memory"]
        saved = api(app).call("save", {"content": NEW})
        assert saved["possible_update_of"]["applied"] is True
        assert saved["superseded"]["id"] == old["id"]
        # the wire's key order (docs/protocol.md), as it was before results were typed
        assert list(saved) == ["created", "reinforced", "memory", "superseded",
                               "possible_update_of"]
        assert list(saved["possible_update_of"]) == ["id", "path", "title", "uri", "reason",
                                                     "cosine", "applied"]
        assert list(saved["superseded"]) == ["id", "path", "title", "uri"]
        assert saved["memory"]["supersedes"] == old["id"]
        assert api(app).call("get", {"id": old["id"]})["superseded_by"] == saved["memory"]["id"]
    finally:
        app.close()


def test_review_lists_a_proposed_update_until_it_is_applied(tmp_path: Path) -> None:
    app = detecting_app(tmp_path)
    try:
        old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
        new = api(app).call("save", {"content": NEW, "tags": ["homelab"]})["memory"]
        api(app).call("save", {"content": "Sam prefers restic over borg for backups.",
                               "tags": ["homelab"]})
        updates = api(app).call("review", {})["updates"]
        assert [(u["id"], u["by"]["id"]) for u in updates] == [(old["id"], new["id"])]
        assert "5000 → 5001" in updates[0]["reason"]
        text = (app.root / new["path"]).read_text(encoding="utf-8")
        assert f"stm_possible_update_of: {old['id']}" in text  # kept in the note until settled
        api(app).call("supersede", {"id": updates[0]["id"], "by": updates[0]["by"]["id"]})
        assert api(app).call("review", {})["updates"] == []
        assert "stm_possible_update_of" not in (app.root / new["path"]).read_text("utf-8")
    finally:
        app.close()


def test_a_proposed_update_is_dismissed_with_unsupersede(tmp_path: Path) -> None:
    app = detecting_app(tmp_path)
    try:
        api(app).call("save", {"content": OLD})
        new = api(app).call("save", {"content": NEW})["memory"]
        assert new["possible_update_of"] is not None
        before = (app.root / new["path"]).read_text(encoding="utf-8")
        undone = api(app).call("unsupersede", {"id": new["id"]})
        assert undone["dismissed"]["possible_update_of"] is None
        assert api(app).call("review", {})["updates"] == []
        after = (app.root / new["path"]).read_text(encoding="utf-8")
        assert non_stm(after) == non_stm(before)
        with pytest.raises(InvalidInput, match="nothing to undo"):
            api(app).call("unsupersede", {"id": new["id"]})
    finally:
        app.close()


@pytest.mark.model
@pytest.mark.timeout(600)
def test_the_nas_port_update_with_the_real_model(tmp_path: Path) -> None:
    """The reported case, with the real model and the default threshold: the update is
    proposed, and once confirmed the successor ranks first although the stale fact was used
    more and scores higher."""
    vault = tmp_path / "vault"
    (vault / "memories").mkdir(parents=True)
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "default"})
    app = build_app(settings)
    try:
        old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
        saved = api(app).call("save", {"content": NEW, "tags": ["homelab"]})
        assert saved["possible_update_of"]["id"] == old["id"]
        for minutes in (10, 20, 30):
            api(app, NOW + timedelta(minutes=minutes)).call("touch", {"id": old["id"]})
        later = api(app, NOW + timedelta(hours=1))
        later.call("supersede", {"id": old["id"], "by": saved["memory"]["id"]})
        results = later.call("search", {"query": "which port is the NAS admin page on"})["results"]
        assert [r["id"] for r in results[:2]] == [saved["memory"]["id"], old["id"]]
        assert results[1]["superseded_by"]["id"] == saved["memory"]["id"]
        assert results[1]["score"] > results[0]["score"]  # the stale one was used more
        assert later.call("promote", {"dry_run": True})["promote"] == []
    finally:
        app.close()


def test_a_detected_update_the_user_edits_meanwhile_still_answers_the_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: the new note changes between its creation and the proposal's guarded
    rewrite. The memory is written, so the save is answered as saved (a 409 would make the
    client save it again), and the user's version of the note is kept."""
    app = detecting_app(tmp_path)
    try:
        old = api(app).call("save", {"content": OLD, "tags": ["homelab"]})["memory"]
        real_rewrite = app.store.rewrite

        def edited_meanwhile(paths: Any, plan: Any, **kwargs: Any) -> Any:
            def edit_then_plan(current: Any) -> Any:  # after the read, before the write
                note = app.root / paths[0]
                note.write_text(note.read_text(encoding="utf-8") + "\nMy own line.\n", "utf-8")
                return plan(current)

            return real_rewrite(paths, edit_then_plan, **kwargs)

        monkeypatch.setattr(app.store, "rewrite", edited_meanwhile)
        saved = api(app).call("save", {"content": NEW, "tags": ["homelab"]})
        monkeypatch.setattr(app.store, "rewrite", real_rewrite)
        assert saved["created"] is True
        assert saved["possible_update_of"]["id"] == old["id"]
        assert saved["possible_update_of"]["applied"] is False
        text = (app.root / saved["memory"]["path"]).read_text(encoding="utf-8")
        assert text.endswith("\nMy own line.\n") and NEW in text  # the user's version
        assert "stm_possible_update_of" not in text
        assert api(app).call("get", {"id": saved["memory"]["id"]})["id"] == saved["memory"]["id"]
    finally:
        app.close()
