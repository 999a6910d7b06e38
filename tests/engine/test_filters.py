"""The filter index: the same allowed notes as reading every catalog row, kept current by the
indexer's writes, rebuilt after another process's, and no full catalog read per search."""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.core.memory import ACTIVE, ARCHIVED, PROMOTED
from vaultmem.engine.filters import FilterIndex, SearchFilters
from vaultmem.errors import InvalidInput
from vaultmem.index.base import NoteRecord
from vaultmem.index.catalog import Catalog
from vaultmem.store.memory_notes import MemoryNote

pytestmark = pytest.mark.timeout(120)

FOLDERS = ("Inbox", "Projects", "Projects/Web", "Projects/Web/Old", "Areas")
TAGS = ("project", "project/web", "idea", "Reading", "linux")
TYPES = ("fact", "decision", "preference")


def _note(root: Path, path: str, tags: list[str], mtime: datetime, extra: list[str]) -> None:
    lines = ["---", f"tags: [{', '.join(tags)}]", *extra, "---",
             f"# {Path(path).stem}", "", f"Words about {' '.join(tags) or 'nothing'} here.", ""]
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("\n".join(lines), encoding="utf-8")
    os.utime(file, (mtime.timestamp(), mtime.timestamp()))


def _vault(root: Path) -> None:
    rng = random.Random(18)
    for i in range(60):
        tags = rng.sample(TAGS, rng.randint(0, 2))
        mtime = REFERENCE - timedelta(days=rng.uniform(0, 60))
        _note(root, f"{rng.choice(FOLDERS)}/Note {i}.md", tags, mtime, [])
    for i in range(24):
        status = (ACTIVE, PROMOTED, ARCHIVED)[i % 3]
        folder = {ACTIVE: "memories", PROMOTED: "STM", ARCHIVED: "memories/archive"}[status]
        used = REFERENCE - timedelta(days=rng.uniform(0, 40))
        _note(root, f"{folder}/Memory {i}.md", rng.sample(TAGS, rng.randint(0, 2)), REFERENCE, [
            f'stm_id: "m-{i:03d}"', f"stm_created: {(used - timedelta(days=5)).isoformat()}",
            f"stm_last_used: {used.isoformat()}", "stm_use_count: 1", "stm_strength: 1.0",
            f"stm_status: {status}", f"stm_type: {TYPES[i % 3]}"])


@contextmanager
def _app(tmp_path: Path) -> Iterator[App]:
    """An app as the daemon builds it (with the usage journal) on a generated vault."""
    _vault(tmp_path / "vault")
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": tmp_path / "vault", "data_dir": tmp_path / "data", "embedding_model": "fake"})
    app = build_app(settings, daemon=True)
    try:
        app.sync.reindex()
        yield app
    finally:
        app.close()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    with _app(tmp_path) as app:
        yield app


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """One vault for the read-only cases."""
    with _app(tmp_path_factory.mktemp("filters")) as app:
        yield app


def _reference(filters: SearchFilters, records: dict[str, NoteRecord],
               memories: dict[str, MemoryNote], now: datetime) -> set[str]:
    """The rule the filter index must follow, read straight from every row and memory."""
    since = now - timedelta(days=filters.window_days) if filters.window_days else None
    want_any = {t.lower().lstrip("#") for t in filters.tags_any}
    want_all = {t.lower().lstrip("#") for t in filters.tags_all}
    folder = (filters.folder or "").strip("/")

    def match(wanted: set[str], tags: set[str]) -> bool:
        return any(t == w or t.startswith(w + "/") for w in wanted for t in tags)

    allowed = set()
    for path, record in records.items():
        memory = memories.get(path)
        tags = {t.lower() for t in record.tags}
        if record.status != "indexed":
            continue
        if folder and not (path == folder or path.startswith(folder + "/")):
            continue
        if want_any and not match(want_any, tags):
            continue
        if want_all and not all(match({t}, tags) for t in want_all):
            continue
        if memory is None:
            if filters.type or not filters.include_regular:
                continue
            if since and record.mtime_ns < since.timestamp() * 1e9:
                continue
        else:
            if filters.type and memory.state.type != filters.type:
                continue
            if since and memory.state.last_used < since:
                continue
            narrowed = set(filters.statuses) != {ACTIVE, PROMOTED}  # else dropped after ranking
            if narrowed and memory.state.status not in filters.statuses:
                continue
        allowed.add(path)
    return allowed


CASES = [
    SearchFilters(folder="Projects"),
    SearchFilters(folder="Projects/Web/"),
    SearchFilters(folder="memories"),
    SearchFilters(tags_any=("project",)),
    SearchFilters(tags_any=("#reading", "linux")),
    SearchFilters(tags_all=("project", "idea")),
    SearchFilters(tags_all=("project/web",), folder="Projects"),
    SearchFilters(type="fact"),
    SearchFilters(type="decision", tags_any=("idea",)),
    SearchFilters(window_days=10),
    SearchFilters(window_days=30, folder="Inbox"),
    SearchFilters(include_regular=False),
    SearchFilters(statuses=(ARCHIVED,)),
    SearchFilters(statuses=(ACTIVE, PROMOTED, ARCHIVED), tags_any=("linux",)),
    SearchFilters(include_regular=False, window_days=20, statuses=(ACTIVE,)),
]


@pytest.mark.parametrize("filters", CASES, ids=[repr(c)[13:60] for c in CASES])
def test_the_filter_index_allows_what_reading_every_row_allows(
    shared_app: App, filters: SearchFilters
) -> None:
    engine = shared_app
    records = engine.catalog.records()
    memories = {m.path: m for m in engine.store.iter_memories()}
    expected = _reference(filters, records, memories, REFERENCE)
    allowed = engine.search.filters.allowed(filters, REFERENCE, engine.store.iter_memories)
    # a memory of another status may be left out early (it is dropped after ranking anyway)
    hidden = {p for p, m in memories.items() if m.state.status not in filters.statuses}
    assert allowed - hidden == expected - hidden
    assert allowed <= expected
    # a non-trivial case list: most cases allow some notes and not all
    assert len(expected) < len(records) or filters.statuses != (ACTIVE, PROMOTED)


def test_the_index_follows_the_indexers_writes_without_rereading_the_catalog(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = app
    projects = SearchFilters(folder="Projects")
    before = engine.search.filters.allowed(projects, REFERENCE, engine.store.iter_memories)
    root = app.settings.vault

    def no_full_read() -> dict[str, NoteRecord]:
        raise AssertionError("the filter index read every catalog row again")

    moved = sorted(before)[0]
    (root / "Projects/Fresh.md").write_text("---\ntags: [idea]\n---\n# Fresh\n\nNew.\n")
    (root / "Areas" / Path(moved).name).parent.mkdir(exist_ok=True)
    (root / moved).rename(root / "Areas" / Path(moved).name)
    engine.sync.reindex()
    monkeypatch.setattr(engine.catalog, "records", no_full_read)
    after = engine.search.filters.allowed(projects, REFERENCE, engine.store.iter_memories)
    assert after == (before - {moved}) | {"Projects/Fresh.md"}
    idea = engine.search.filters.allowed(SearchFilters(tags_any=("idea",), folder="Projects"),
                                  REFERENCE, engine.store.iter_memories)
    assert "Projects/Fresh.md" in idea


def test_another_processs_catalog_write_rebuilds_the_index(app: App) -> None:
    engine = app
    everything = SearchFilters(tags_any=("project",))
    before = engine.search.filters.allowed(everything, REFERENCE, engine.store.iter_memories)
    other = Catalog(engine.catalog.path)  # a second connection, as another process has
    try:
        gone = sorted(before)[0]
        other.apply(deletes=[gone])
    finally:
        other.close()
    after = engine.search.filters.allowed(everything, REFERENCE, engine.store.iter_memories)
    assert after == before - {gone}


def test_a_rebuilt_catalog_empties_the_index(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        index = FilterIndex(catalog)
        record = NoteRecord("A/n.md", "h", "b", "n", ("x",), (), (), "", "indexed", "", 1, 1, 1)
        catalog.apply([record])
        assert index.allowed(SearchFilters(folder="A"), REFERENCE, list) == {"A/n.md"}
        catalog.reset("fake")
        assert index.allowed(SearchFilters(), REFERENCE, list) == set()
        with pytest.raises(InvalidInput, match="folder 'A'"):
            index.allowed(SearchFilters(folder="A"), REFERENCE, list)
    finally:
        catalog.close()


@pytest.mark.parametrize(("filters", "message"), [
    (SearchFilters(folder="No Such Folder"), "no indexed note is in the folder 'No Such Folder'"),
    (SearchFilters(folder="projects"), "did you mean 'Projects'?"),
    (SearchFilters(tags_any=("nosuchtag",)), "no indexed note has the tag #nosuchtag"),
    (SearchFilters(tags_any=("project", "#NoSuchTag")), "the tag #nosuchtag"),
    (SearchFilters(tags_all=("project", "nosuchtag")), "the tag #nosuchtag"),
])
def test_a_filter_naming_no_folder_or_tag_is_an_error_not_an_empty_answer(
    shared_app: App, filters: SearchFilters, message: str
) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        shared_app.search.search("project words", REFERENCE, filters=filters)
    api = shared_app.api(clock=lambda: REFERENCE)
    with pytest.raises(InvalidInput, match=re.escape(message)):
        body = {"query": "project words", "folder": filters.folder,
                "tags": list(filters.tags_any), "all_tags": list(filters.tags_all)}
        api.call("search", {k: v for k, v in body.items() if v})


def test_a_filtered_search_reads_no_full_catalog(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = app
    engine.search.search("project words", REFERENCE, filters=SearchFilters(folder="Inbox"))

    def no_full_read() -> dict[str, NoteRecord]:
        raise AssertionError("a filtered search read every catalog row")

    monkeypatch.setattr(engine.catalog, "records", no_full_read)
    for filters in (SearchFilters(folder="Projects"), SearchFilters(tags_any=("idea",)),
                    SearchFilters(type="fact", window_days=30)):
        hits = engine.search.search("words about", REFERENCE, filters=filters).hits
        allowed = engine.search.filters.allowed(filters, REFERENCE, engine.store.iter_memories)
        assert hits and {hit.path for hit in hits} <= allowed
