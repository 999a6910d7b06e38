"""Consolidation: clusters of near-duplicate memories, merged into one, nothing deleted.

With the fake embedder (hashed bag of words) two notes whose titles and bodies have the same
words have cosine 1.0: "kettle descaling" and "kettle-descaling" tokenise alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import REFERENCE, ago, copy_vault, memory_note
from tests.conftest import SAMPLE_VAULT
from vaultmem.api.wire import to_wire
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.core.consolidation import cluster_id
from vaultmem.engine.consolidator import Consolidator
from vaultmem.engine.filters import SearchFilters
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.vault.notes import read_note

pytestmark = pytest.mark.timeout(120)

NOW = REFERENCE
KETTLE = ("The office kettle descales best with citric acid every second Friday morning before "
          "the team arrives, rinse it twice and boil plain water once.")
BIKE = ("Bike chain needs wax lube after rainy commutes along the canal path in winter, wipe the "
        "chain dry first and let the wax set overnight.")
BIKE_VARIANT = BIKE.replace("canal", "river").replace("winter", "autumn").replace(
    "overnight", "for an hour")
TAXES = ("Quarterly tax estimates are due mid April, June, September and January; pay them "
         "from the business account.")
RESTIC_OVER = "memories/2026-11-06 sam-prefers-restic-over-borg.md"
RESTIC_TO = "memories/2026-11-12 sam-prefers-restic-to-borg.md"


def _open(vault: Path, data: Path, daemon: bool = False, **overrides: Any) -> App:
    settings = load_settings(
        config_path=data.parent / "none.toml", env={},
        overrides={"vault": str(vault), "data_dir": str(data), "embedding_model": "fake",
                   **overrides},
    )
    app = build_app(settings, daemon=daemon)
    app.sync.reindex()
    return app


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture
def apps(tmp_path: Path) -> Iterator[list[App]]:
    opened: list[App] = []
    yield opened
    for app in opened:
        app.close()


def _consolidator(
    apps: list[App], vault: Path, daemon: bool = False, **overrides: Any
) -> tuple[App, Consolidator]:
    app = _open(vault, vault.parent / f"data{len(apps)}", daemon, **overrides)
    apps.append(app)
    return app, app.consolidator


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _kettle_pair(vault: Path) -> tuple[str, str]:
    _, first = memory_note(vault, "kettle descaling", use_count=3, created=ago(days=10),
                           last_used=ago(days=2), strength=1.2, body=KETTLE,
                           tags=("kitchen", "office"))
    _, second = memory_note(vault, "kettle-descaling", use_count=5, created=ago(days=6),
                            last_used=ago(hours=5), strength=0.8, body=KETTLE,
                            tags=("office", "chores"))
    return first, second


def _bike_pair(vault: Path) -> tuple[str, str]:
    _, first = memory_note(vault, "bike chain care", use_count=1, last_used=ago(days=1),
                           body=BIKE)
    _, second = memory_note(vault, "bike-chain-care", use_count=2, last_used=ago(days=3),
                            body=BIKE_VARIANT)
    return first, second


# listing ----------------------------------------------------------------------------------


def test_near_duplicates_form_one_stable_cluster(vault: Path, apps: list[App]) -> None:
    first, second = _kettle_pair(vault)
    memory_note(vault, "quarterly taxes", use_count=1, last_used=ago(days=1), body=TAXES)
    app, consolidator = _consolidator(apps, vault)
    listed = to_wire(consolidator.list_clusters(NOW))["clusters"]
    assert len(listed) == 1
    cluster = listed[0]
    assert {m["id"] for m in cluster["members"]} == {first, second}
    assert cluster["id"] == cluster_id([first, second])
    assert cluster["cohesion"] == pytest.approx(1.0, abs=1e-4)
    assert cluster["action"] == "merge"
    member = next(m for m in cluster["members"] if m["id"] == first)
    assert member["path"] == "memories/kettle descaling.md"
    assert member["title"] == "kettle descaling"
    assert member["use_count"] == 3
    assert member["score"] == pytest.approx(app.views.get(first, NOW).score, abs=1e-6)
    assert to_wire(consolidator.list_clusters(NOW))["clusters"] == listed
    assert [c.id for c in consolidator.clusters()] == [cluster["id"]]


def test_review_band_and_pinned_memories(vault: Path, apps: list[App]) -> None:
    _kettle_pair(vault)
    bike = _bike_pair(vault)
    _, pinned = memory_note(vault, "kettle + descaling", use_count=1, last_used=ago(days=1),
                            body=KETTLE, pinned=True)
    _, consolidator = _consolidator(apps, vault, merge_cohesion=0.97, review_cohesion=0.9)
    by_action = {c["action"]: c for c in to_wire(consolidator.list_clusters(NOW))["clusters"]}
    assert set(by_action) == {"merge", "review"}
    assert 0.9 <= by_action["review"]["cohesion"] < 0.97
    assert {m["id"] for m in by_action["review"]["members"]} == set(bike)
    # the pinned copy is identical to the kettle pair, yet never clustered
    assert pinned not in {m["id"] for m in by_action["merge"]["members"]}
    assert len(by_action["merge"]["members"]) == 2


# merging ----------------------------------------------------------------------------------


def test_merge_writes_one_note_and_archives_the_originals(vault: Path, apps: list[App]) -> None:
    first, second = _kettle_pair(vault)
    memory_note(vault, "quarterly taxes", use_count=1, last_used=ago(days=1), body=TAXES)
    originals = {first: vault / "memories/kettle descaling.md",
                 second: vault / "memories/kettle-descaling.md"}
    before_bytes = {memory_id: path.read_bytes() for memory_id, path in originals.items()}
    before = _digest(vault)
    app, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()

    result = to_wire(consolidator.merge(cluster.id, NOW))

    merged = result["merged_into"]
    assert result["cluster_id"] == cluster.id
    assert merged["use_count"] == 8
    assert merged["created"] == ago(days=10).isoformat()
    assert merged["last_used"] == ago(hours=5).isoformat()
    assert set(merged["tags"]) == {"kitchen", "office", "chores"}
    assert merged["strength"] == pytest.approx(min(1.2 + min(cluster.cohesion * 2 * 0.1, 0.5),
                                                   2.0), abs=1e-4)
    assert merged["status"] == "active" and merged["source"] == "consolidation"
    assert merged["path"].startswith("memories/") and merged["id"] not in originals
    body = read_note(vault, merged["path"]).body
    assert body.count("citric acid") == 1  # identical contents are kept once
    # the best-scoring member (5 uses, last used 5 h ago) gives the title and comes first
    assert merged["title"] == "kettle-descaling"
    assert "Merged from [[kettle-descaling]], [[kettle descaling]]." in body

    assert {a["id"] for a in result["archived"]} == set(originals)
    for item in result["archived"]:
        assert item["to"].startswith("memories/archive/")
        moved = (vault / item["to"]).read_bytes().decode()
        assert "stm_status: archived" in moved
        assert f"stm_merged_into: {merged['id']}" in moved
        restored = moved.replace("stm_status: archived", "stm_status: active").replace(
            f"stm_merged_into: {merged['id']}\n", "")
        assert restored.encode() == before_bytes[item["id"]]
        assert not originals[item["id"]].exists()

    after = _digest(vault)
    assert len(after) == len(before) + 1
    assert sum(p.endswith(".md") for p in after) == sum(p.endswith(".md") for p in before) + 1
    moved_names = {a["to"] for a in result["archived"]} | {merged["path"]}
    assert set(after) - set(before) == moved_names

    hits = [h.path for h in app.search.search("kettle descales citric acid", NOW).hits]
    assert hits[0] == merged["path"]
    assert not any(h.startswith("memories/archive/") for h in hits)
    archived = app.search.search("kettle descales citric acid", NOW,
                                 filters=SearchFilters(statuses=("archived",)))
    assert {h.path for h in archived.hits} == {a["to"] for a in result["archived"]}
    assert consolidator.clusters() == []


def test_unknown_or_stale_cluster_changes_nothing(vault: Path, apps: list[App]) -> None:
    _kettle_pair(vault)
    app, consolidator = _consolidator(apps, vault)
    [stale] = consolidator.clusters()
    memory_note(vault, "kettle descaling!", use_count=1, last_used=ago(days=1), body=KETTLE)
    app.sync.reindex()
    [current] = consolidator.clusters()
    assert len(current.members) == 3 and current.id != stale.id
    before = _digest(vault)
    for bad in (stale.id, "c-000000000000"):
        with pytest.raises(NotFound, match="cluster changed or no longer exists"):
            to_wire(consolidator.merge(bad, NOW))
    assert _digest(vault) == before


def test_a_keep_apart_cluster_is_not_merged(vault: Path, apps: list[App]) -> None:
    _bike_pair(vault)
    _, consolidator = _consolidator(apps, vault, merge_cohesion=0.99, review_cohesion=0.97)
    [cluster] = consolidator.clusters()
    assert cluster.action == "keep"
    before = _digest(vault)
    with pytest.raises(InvalidInput, match="kept apart"):
        to_wire(consolidator.merge(cluster.id, NOW))
    assert _digest(vault) == before


def test_crash_before_archiving_leaves_originals_active(
    vault: Path, apps: list[App], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _kettle_pair(vault)
    app, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()
    before = _digest(vault)

    def crash(*_: object) -> None:
        raise OSError("simulated crash")

    monkeypatch.setattr("vaultmem.store.memory_store.edit_memory_note", crash)
    with pytest.raises(OSError, match="simulated crash"):
        to_wire(consolidator.merge(cluster.id, NOW))
    monkeypatch.undo()

    after = _digest(vault)
    assert {k: v for k, v in after.items() if k in before} == before  # originals untouched
    [new_path] = set(after) - set(before)
    app.sync.reindex()
    [again] = consolidator.clusters()
    new_id = app.views.get(new_path, NOW).id
    assert set(again.members) == {first, second, new_id}


def test_merge_in_the_daemon_carries_pending_touches(vault: Path, apps: list[App]) -> None:
    first, second = _kettle_pair(vault)
    app, consolidator = _consolidator(apps, vault, daemon=True)
    journal = app.journal
    for _ in range(2):
        app.uses.touch(first, NOW)  # journalled, not yet in the note
    assert len(journal) == 1
    [cluster] = consolidator.clusters()
    result = to_wire(consolidator.merge(cluster.id, NOW))
    assert result["merged_into"]["use_count"] == 3 + 2 + 5
    moved = {a["id"]: read_note(vault, a["to"]).fields for a in result["archived"]}
    assert moved[first]["stm_use_count"] == 5 and moved[first]["stm_status"] == "archived"
    assert moved[second]["stm_merged_into"] == result["merged_into"]["id"]
    assert journal.all() == []  # nothing pending would re-activate an archived note


def test_auto_merge_merges_only_cohesive_clusters(vault: Path, apps: list[App]) -> None:
    kettle = _kettle_pair(vault)
    bike = _bike_pair(vault)
    memory_note(vault, "quarterly taxes", use_count=1, last_used=ago(days=1), body=TAXES)
    _, consolidator = _consolidator(apps, vault, merge_cohesion=0.97, review_cohesion=0.9)
    bike_files = {p: (vault / p).read_bytes()
                  for p in ("memories/bike chain care.md", "memories/bike-chain-care.md")}

    result = to_wire(consolidator.auto_merge(NOW))

    assert [m["cluster_id"] for m in result["merged"]] == [cluster_id(kettle)]
    assert {a["id"] for a in result["merged"][0]["archived"]} == set(kettle)
    assert [c["id"] for c in result["review"]] == [cluster_id(bike)]
    assert result["skipped"] == []
    assert {p: (vault / p).read_bytes() for p in bike_files} == bike_files
    assert to_wire(consolidator.auto_merge(NOW))["merged"] == []


# the sample vault -------------------------------------------------------------------------


def test_sample_vault_restic_memories_form_a_cluster(tmp_path: Path, apps: list[App]) -> None:
    vault = copy_vault(SAMPLE_VAULT, tmp_path / "sample")
    app, consolidator = _consolidator(apps, vault)
    restic = {app.views.get(RESTIC_OVER, NOW).id, app.views.get(RESTIC_TO, NOW).id}
    clusters = to_wire(consolidator.list_clusters(NOW))["clusters"]
    [cluster] = [c for c in clusters if {m["id"] for m in c["members"]} & restic]
    assert {m["id"] for m in cluster["members"]} == restic
    assert cluster["cohesion"] >= 0.83  # default threshold, no tuning needed
    assert cluster["action"] == ("merge" if cluster["cohesion"] >= 0.9 else "review")

    best = max(m["score"] for m in cluster["members"])
    result = to_wire(consolidator.merge(cluster["id"], NOW))
    merged = result["merged_into"]
    assert merged["title"] == "Sam prefers Restic over Borg for NAS backups"  # best score
    assert set(merged["tags"]) == {"homelab", "backup"}
    # one member is a preference, the other untyped: the merged memory stays a preference
    # (the slower-fading type) and scores above its best member
    assert merged["type"] == "preference" and merged["score"] > best
    body = read_note(vault, merged["path"]).body
    assert body.count("Sam prefers Restic over Borg for NAS backups") == 2  # title and link
    assert "## Sam prefers Restic over Borg" not in body  # the title is not repeated
    assert body.startswith("# Sam prefers Restic over Borg for NAS backups\n\nSam prefers")
    assert "## Sam prefers Restic to Borg for backups to the NAS" in body
    assert "> [!info] Merged by vaultmem on 2026-11-20" in body
    assert "`vaultmem restore <id>` brings one back" in body
    assert ("Merged from [[2026-11-06 sam-prefers-restic-over-borg|Sam prefers Restic over Borg "
            "for NAS backups]], [[2026-11-12 sam-prefers-restic-to-borg|") in body
    assert {a["to"] for a in result["archived"]} == {
        "memories/archive/2026-11-06 sam-prefers-restic-over-borg.md",
        "memories/archive/2026-11-12 sam-prefers-restic-to-borg.md",
    }


def test_two_devices_merging_one_cluster_write_one_memory(tmp_path: Path, vault: Path,
                                                          apps: list[App]) -> None:
    """Synced vaults: each device's daemon may merge the same cluster before the sync carries
    either result. Both name the merged memory alike (same id, same note), so sync sees one
    note changed twice (at worst a conflict copy that reconcile folds in), not two memories."""
    _kettle_pair(vault)
    other = copy_vault(vault, tmp_path / "other" / "vault")
    results = []
    for root in (vault, other):
        _, consolidator = _consolidator(apps, root)
        [cluster] = consolidator.clusters()
        results.append(to_wire(consolidator.merge(cluster.id, NOW))["merged_into"])
    assert results[0]["id"] == results[1]["id"] and results[0]["path"] == results[1]["path"]
    here, there = (root / results[0]["path"] for root in (vault, other))
    assert here.read_bytes() == there.read_bytes()


def test_a_superseded_memory_is_never_clustered(vault: Path, apps: list[App]) -> None:
    first, second = _kettle_pair(vault)
    app, consolidator = _consolidator(apps, vault)
    assert len(to_wire(consolidator.list_clusters(NOW))["clusters"]) == 1
    app.api(clock=lambda: NOW).call("supersede", {"id": first, "by": second})
    assert to_wire(consolidator.list_clusters(NOW))["clusters"] == []


def test_a_merged_note_its_user_edits_before_the_explanation_is_left_as_they_wrote_it(
        vault: Path, apps: list[App], monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: the user appends a line to the new merged note between its creation
    and the callout that explains the merge. The merge completes; the note keeps exactly the
    user's bytes (no callout added after their line); an untouched merge still gets it."""
    import vaultmem.engine.consolidator as consolidation

    _kettle_pair(vault)
    _app, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()
    create = consolidation.create_memory_note
    edited: list[bytes] = []

    def create_then_user_edits(root: Path, *args: Any, **kwargs: Any) -> Any:
        path, text = create(root, *args, **kwargs)
        with (root / path).open("a", encoding="utf-8") as note:
            note.write("My own line, typed at once.\n")
        edited.append((root / path).read_bytes())
        return path, text

    monkeypatch.setattr(consolidation, "create_memory_note", create_then_user_edits)
    result = to_wire(consolidator.merge(cluster.id, NOW))

    text = (vault / result["merged_into"]["path"]).read_bytes()
    assert edited and text == edited[0]
    assert b"vaultmem:merged" not in text and text.endswith(b"My own line, typed at once.\n")
    assert len(result["archived"]) == 2


def test_a_second_merge_of_restored_members_never_takes_a_deleted_merged_memorys_id(
        vault: Path, apps: list[App]) -> None:
    """Seen by the concurrent-write seeds (seed 93, 2026-11-29): a merged note the user had
    edited and deleted came back under its id with another text. Merge, the user deletes the
    merged note and restores both members, merge again the same day: the new memory must not
    carry the deleted one's id (uses, links and undo records name that id)."""
    first, second = _kettle_pair(vault)
    app, _ = _consolidator(apps, vault)
    api = app.api(clock=lambda: NOW)
    [cluster] = api.call("clusters", {})["clusters"]
    deleted = api.call("merge_cluster", {"cluster_id": cluster["id"]})["merged_into"]
    (vault / deleted["path"]).unlink()
    app.sync.reindex()
    for member in (first, second):
        app.restorer.restore(member, NOW)
    app.sync.reindex()
    [again] = api.call("clusters", {})["clusters"]
    assert {m["id"] for m in again["members"]} == {first, second}
    merged = api.call("merge_cluster", {"cluster_id": again["id"]})["merged_into"]
    assert merged["id"] != deleted["id"] and merged["status"] == "active"


def test_members_merged_again_after_an_undo_go_into_a_new_active_memory(
        vault: Path, apps: list[App]) -> None:
    """Merge, undo (the merged memory archived, the members back), merge again the same day:
    the members were archived into the first, archived memory (its id found again as if an
    interrupted merge had written it), leaving no active memory of them at all."""
    first, second = _kettle_pair(vault)
    app, _ = _consolidator(apps, vault)
    api = app.api(clock=lambda: NOW)
    [cluster] = api.call("clusters", {})["clusters"]
    undone = api.call("merge_cluster", {"cluster_id": cluster["id"]})["merged_into"]
    api.call("undo", {})
    app.sync.reindex()
    [again] = api.call("clusters", {})["clusters"]
    merged = api.call("merge_cluster", {"cluster_id": again["id"]})["merged_into"]
    assert merged["id"] != undone["id"] and merged["status"] == "active"
    assert api.call("get", {"id": undone["id"]})["status"] == "archived"
    for member in (first, second):
        assert api.call("get", {"id": member})["merged_into"] == merged["id"]
