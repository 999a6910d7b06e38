"""`undo` takes back a whole sweep or merge: every note it moved or rewrote is back byte for
byte where it was; a merged note is archived; a note changed since is left alone and named."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, memory_note
from tests.engine.test_consolidator import KETTLE, TAXES
from vaultmem.api.ops import Api
from vaultmem.api.schemas import RESPONSES
from vaultmem.api.validation import validate
from vaultmem.app import App
from vaultmem.errors import InvalidInput, NotFound
from vaultmem_testing.apps import fake_app

NOW = REFERENCE
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Kitchen.md").write_text("# Kitchen\n\nCitric acid for the kettle.\n",
                                                encoding="utf-8")
    memory_note(vault, "old grafana panel order", use_count=1, last_used=ago(days=300),
                body="The NAS dashboard keeps disks first.", memory_id="m-faded")
    memory_note(vault, "kettle descaling", use_count=5, last_used=ago(hours=2), body=KETTLE,
                memory_id="m-kettle")
    memory_note(vault, "quarterly taxes", use_count=1, last_used=ago(hours=3), body=TAXES,
                memory_id="m-taxes")
    with fake_app(vault, tmp_path / "data") as app:
        yield app


@pytest.fixture
def api(app: App) -> Api:
    return app.api(clock=lambda: NOW)


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_undo_puts_back_exactly_what_a_sweep_archived_and_promoted(app: App, api: Api) -> None:
    before = digest(app.root)
    swept = api.call("sweep", {"dry_run": False})
    assert [m["id"] for m in swept["archived"]] == ["m-faded"]
    assert [m["id"] for m in swept["promoted"]] == ["m-kettle"]
    assert digest(app.root) != before
    undone = api.call("undo", {"operation": swept["operation"]})
    validate(RESPONSES["undo"], undone, "undo")
    assert undone["kind"] == "sweep" and undone["skipped"] == [] and undone["archived"] == []
    assert {(m["from"], m["to"]) for m in undone["restored"]} == {
        (swept["archived"][0]["to"], swept["archived"][0]["from"]),
        (swept["promoted"][0]["to"], swept["promoted"][0]["from"])}
    assert digest(app.root) == before  # every byte, every name
    assert api.call("get", {"id": "m-kettle"})["status"] == "active"
    listed = api.call("list", {"status": ["active"]})
    assert {m["id"] for m in listed["memories"]} == {"m-faded", "m-kettle", "m-taxes"}
    with pytest.raises(InvalidInput, match="was undone"):
        api.call("undo", {"operation": swept["operation"]})


def test_undo_takes_back_a_merge_and_archives_the_merged_note(app: App, api: Api) -> None:
    memory_note(app.root, "kettle-descaling", use_count=2, last_used=ago(hours=5), body=KETTLE,
                memory_id="m-kettle-2")
    app.sync.reindex()
    before = digest(app.root)
    [cluster] = api.call("clusters", {})["clusters"]
    merged = api.call("merge_cluster", {"cluster_id": cluster["id"]})
    new_id = merged["merged_into"]["id"]
    undone = api.call("undo", {})  # the last operation
    assert undone["operation"] == merged["operation"] and undone["kind"] == "merge_cluster"
    assert undone["skipped"] == [] and len(undone["restored"]) == 2
    assert [a["id"] for a in undone["archived"]] == [new_id]
    after = digest(app.root)
    assert {p: h for p, h in after.items() if p in before} == before  # originals as they were
    assert set(after) - set(before) == {undone["archived"][0]["to"]}
    assert api.call("get", {"id": new_id})["status"] == "archived"
    assert api.call("get", {"id": "m-kettle-2"})["merged_into"] is None


def test_a_note_changed_since_is_left_alone_and_named(app: App, api: Api) -> None:
    swept = api.call("sweep", {"dry_run": False})
    archived = app.root / swept["archived"][0]["to"]
    archived.write_text(archived.read_text(encoding="utf-8") + "\nA line the user added.\n",
                        encoding="utf-8")
    changed = archived.read_bytes()
    undone = api.call("undo", {})
    assert [s["path"] for s in undone["skipped"]] == [swept["archived"][0]["to"]]
    assert "changed since the sweep" in undone["skipped"][0]["reason"]
    assert archived.read_bytes() == changed
    assert [r["to"] for r in undone["restored"]] == [swept["promoted"][0]["from"]]


def test_dry_runs_are_not_operations_and_nothing_is_left_to_undo(api: Api) -> None:
    dry = api.call("sweep", {"dry_run": True})
    assert "operation" not in dry
    assert api.call("undo", {"list": True}) == {"operations": []}
    with pytest.raises(NotFound, match="nothing to undo"):
        api.call("undo", {})
    with pytest.raises(NotFound, match="no operation 'op-nope'"):
        api.call("undo", {"operation": "op-nope"})
