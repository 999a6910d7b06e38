"""Whole reads once per call: `status`, a sweep promoting several memories, a merge and the
scheduled consolidation read every catalog row and scan the vault at most once each (the
memory notes once too), in-process and in the daemon (where the watcher keeps the catalog
current and the vault is not scanned at all)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import vaultmem.vault.notes
import vaultmem.vault.scan
from tests.cli._support import REFERENCE, ago, memory_note
from vaultmem.api.wire import to_wire
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.core.consolidation import cluster_id

pytestmark = pytest.mark.timeout(120)

NOW = REFERENCE
KETTLE = ("The office kettle descales best with citric acid every second Friday morning before "
          "the team arrives, rinse it twice and boil plain water once.")
TAXES = ("Quarterly tax estimates are due mid April, June, September and January; pay them "
         "from the business account.")
FACTS = {
    "backup rotation": "Offsite backups rotate weekly to the garage drive; see [[wifi password "
                       "location]] for the router.",
    "wifi password location": "The router card sits in the hallway drawer under the spare keys.",
    "plant watering": "The fern wants water on Mondays and Thursdays, the cactus once a month.",
}


@pytest.fixture(params=["in-process", "daemon"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextmanager
def _app(tmp_path: Path, mode: str) -> Iterator[App]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(data), "embedding_model": "fake"})
    data.mkdir()
    app = build_app(settings, daemon=mode == "daemon")
    try:
        app.sync.reindex()
        yield app
    finally:
        app.close()


@contextmanager
def counted(app: App, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the whole reads: every catalog row (`records`), the catalog's list of memory
    paths, the vault scan (wherever a module took it from `vault.scan`), note vectors asked of
    the index (the number of paths each time)."""
    counts: Counter[str] = Counter()
    vectors: list[int] = []
    live = [True]  # reads after the block are not counted

    def counting(name: str, run: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            counts[name] += live[0]
            return run(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(app.catalog, "records", counting("records", app.catalog.records))
    monkeypatch.setattr(app.catalog, "all_memory_paths",
                        counting("memory paths", app.catalog.all_memory_paths))
    scan = vaultmem.vault.scan.scan_vault
    for module in [m for name, m in sys.modules.items() if name.startswith("vaultmem.")]:
        if getattr(module, "scan_vault", None) is scan:
            monkeypatch.setattr(module, "scan_vault", counting("scan", scan))
    index = app.index()  # the chunk index the use cases open (one per App)
    note_vectors = index.note_vectors

    def asked(paths: Any) -> Any:
        paths = list(paths)
        if live[0]:
            vectors.append(len(paths))
        return note_vectors(paths)

    monkeypatch.setattr(index, "note_vectors", asked)
    yield counts
    live[0] = False
    counts["vectors asked"] = len(vectors)
    counts["vectors first"] = vectors[0] if vectors else 0
    counts["vectors later"] = sum(vectors[1:])


def _whole(counts: Counter[str]) -> tuple[int, int, int]:
    return counts["records"], counts["memory paths"], counts["scan"]


def test_status_reads_the_catalog_and_the_vault_once(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "plain.md").write_text("# Plain\n\nA regular note.\n", encoding="utf-8")
    for name, body in FACTS.items():
        memory_note(vault, name, use_count=1, last_used=ago(days=2), body=body)
    with _app(tmp_path, mode) as app, counted(app, monkeypatch) as counts:
        api = app.api(clock=lambda: NOW, daemon_status=(lambda: {}) if mode == "daemon" else None)
        data = api.call("status", {})
    assert data["memories"]["total"] == 3 and data["notes"] == 4
    if mode == "in-process":
        assert data["unindexed_changes"] == 0
        assert _whole(counts) == (1, 0, 1), counts
    else:  # the watcher keeps the catalog current: no scan
        assert _whole(counts) == (1, 0, 0), counts


def test_status_judges_languages_without_parsing_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The language sample is re-read whenever the number of indexed notes changes; reading
    it used to parse each sampled note's Markdown (~0.7 ms per KB, and far longer beside a
    sync parsing a large note), which held up every such status call."""
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    for n in range(5):
        (vault / "notes" / f"plain {n}.md").write_text(
            f"# Plain {n}\n\n{KETTLE} {TAXES} Note {n}.\n", encoding="utf-8")
    with _app(tmp_path, "daemon") as app:
        api = app.api(clock=lambda: NOW, daemon_status=lambda: {})
        api.call("status", {})
        (vault / "notes" / "new.md").write_text(f"# New\n\n{TAXES} {KETTLE}\n", encoding="utf-8")
        app.sync.sync_paths(["notes/new.md"])
        parsed: list[str] = []
        parse = vaultmem.vault.notes.parse_note

        def counting(path: str, *args: Any, **kwargs: Any) -> Any:
            parsed.append(path)
            return parse(path, *args, **kwargs)

        monkeypatch.setattr(vaultmem.vault.notes, "parse_note", counting)
        data = api.call("status", {})
    assert data["languages"]["sampled"] == 6 and data["notes"] == 6
    assert parsed == []

def test_a_sweep_promoting_several_reads_once(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    for name, body in FACTS.items():  # used often and lately: each is promoted
        memory_note(vault, name, use_count=6, last_used=ago(hours=2), body=body)
    memory_note(vault, "faded", use_count=1, last_used=ago(days=300), body=TAXES)
    stranded, _ = memory_note(vault, "stranded", use_count=1, last_used=ago(days=1),
                              body="Archived before a crash, never moved.")
    stranded.write_text(stranded.read_text().replace("stm_status: active",
                                                     "stm_status: archived"))
    with _app(tmp_path, mode) as app, counted(app, monkeypatch) as counts:
        swept = app.api(clock=lambda: NOW).call("sweep", {"dry_run": False})
    assert [m["from"] for m in swept["finished_moves"]] == ["memories/stranded.md"]
    assert [m["from"] for m in swept["archived"]] == ["memories/faded.md"]
    promoted = {m["from"]: m for m in swept["promoted"]}
    assert set(promoted) == {f"memories/{name}.md" for name in FACTS}
    # each promotion still links to the notes its memory links to
    links = promoted["memories/backup rotation.md"]["links"]
    assert any("wifi password location" in link for link in links), links
    if mode == "in-process":
        assert _whole(counts) == (1, 0, 1), counts
    else:
        assert _whole(counts) == (1, 1, 0), counts


def _pairs(vault: Path) -> list[str]:
    """Two clusters of identical memories (cosine 1.0 with the fake embedder)."""
    ids = []
    for names, body in ((("kettle descaling", "kettle-descaling"), KETTLE),
                        (("quarterly taxes", "quarterly-taxes"), TAXES)):
        pair = [memory_note(vault, name, use_count=2, last_used=ago(days=1), body=body)[1]
                for name in names]
        ids.append(cluster_id(pair))
    memory_note(vault, "plant watering", use_count=1, last_used=ago(days=1),
                body=FACTS["plant watering"])
    return ids


def test_a_merge_reads_once(tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kettle, _ = _pairs(tmp_path / "vault")
    with _app(tmp_path, mode) as app, counted(app, monkeypatch) as counts:
        merged = app.api(clock=lambda: NOW).call("merge_cluster", {"cluster_id": kettle})
    assert merged["cluster_id"] == kettle and len(merged["archived"]) == 2
    assert _whole(counts) == ((1, 0, 1) if mode == "in-process" else (1, 1, 0)), counts
    assert counts["vectors asked"] == 1, counts


def test_auto_merge_plans_again_from_what_it_read(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters = _pairs(tmp_path / "vault")
    with _app(tmp_path, mode) as app:
        candidates = len(app.consolidator.clusters()) * 2 + 1
        with counted(app, monkeypatch) as counts:
            done = to_wire(app.consolidator.auto_merge(NOW))
        assert sorted(m["cluster_id"] for m in done["merged"]) == sorted(clusters)
        assert done["skipped"] == [] and done["review"] == []
        # the merged memories are clustered no further: nothing is left to merge
        assert app.consolidator.clusters() == []
    assert _whole(counts) == ((1, 0, 1) if mode == "in-process" else (1, 1, 0)), counts
    # the index is asked for every candidate's vector once, then only for each merged note's
    assert counts["vectors first"] == candidates
    assert counts["vectors later"] == len(clusters), counts


def test_auto_merge_from_its_snapshot_still_refuses_a_concurrent_edit(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member pinned by its user after the snapshot was read, before its cluster's turn:
    the merge re-reads it under the store's lock, sees the pin and leaves the cluster alone
    (the user's bytes untouched)."""
    vault = tmp_path / "vault"
    kettle, taxes = _pairs(vault)
    pinned = vault / "memories" / "quarterly-taxes.md"
    with _app(tmp_path, mode) as app:
        consolidator = app.consolidator
        merge = consolidator._merge
        edited: list[bytes] = []

        def user_pins_then_merge(cluster: str, *args: Any) -> Any:
            if cluster == taxes:
                text = pinned.read_text(encoding="utf-8")
                pinned.write_text(text.replace("stm_status: active",
                                               "stm_status: active\nstm_pinned: true"),
                                  encoding="utf-8")
                edited.append(pinned.read_bytes())
            return merge(cluster, *args)

        monkeypatch.setattr(consolidator, "_merge", user_pins_then_merge)
        done = to_wire(consolidator.auto_merge(NOW))
    assert [m["cluster_id"] for m in done["merged"]] == [kettle]
    assert [s["cluster_id"] for s in done["skipped"]] == [taxes]
    assert "cluster changed" in done["skipped"][0]["reason"]
    assert edited and pinned.read_bytes() == edited[0]
