"""The Indexer against the real chunk index, counting what it writes there and what it reads
from the catalog: a metadata-only change is a catalog write, a batch reads its own rows."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vaultmem.config import Settings
from vaultmem.errors import Stopping
from vaultmem.index.analysis import note_terms
from vaultmem.index.base import SCHEMA_VERSION, ChunkRecord, Vector
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.identity import META_FILE
from vaultmem.index.lance import LanceIndex
from vaultmem.index.upkeep import Occasion
from vaultmem.pipeline import indexer as indexer_module
from vaultmem.pipeline.indexer import Indexer
from vaultmem.pipeline.words_first import words_only
from vaultmem.settings_params import index_options, indexer_options
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import Note
from vaultmem.vault.parse_apart import ApartMap
from vaultmem.vault.scan import ScanResult

pytestmark = pytest.mark.timeout(120)

EMBEDDER = FakeEmbedder(32)
MEMORY = "memories/2024-05-01 ssh-keys.md"
OPTIONS = index_options(Settings())
STM = {"stm_created": "2024-05-01T10:00:00+00:00", "stm_last_used": "2024-05-01T10:00:00+00:00",
       "stm_use_count": "1", "stm_strength": "0.5"}


class CountingStore:
    """The real chunk index, recording every call that may write to it."""

    def __init__(self, path: Path) -> None:
        self.index = LanceIndex(path, EMBEDDER.name, OPTIONS)
        self.writes: list[dict[str, Any]] = []

    def __call__(self) -> CountingStore:
        return self

    def identity_problem(self) -> str | None:
        return self.index.rebuilt_reason

    def exists(self) -> bool:
        return True

    def apply(self, **change: Any) -> None:
        self.writes.append({name: value for name, value in change.items() if value})
        self.index.apply(**change)

    def clear(self) -> None:
        self.writes.append({"clear": True})
        self.index.clear()

    def stored_chunks(self, paths: Collection[str]) -> list[ChunkRecord]:
        return self.index.stored_chunks(paths)

    def upkeep(self, occasion: Occasion) -> str | None:
        return self.index.upkeep(occasion)


def memory_text(*, title: str = "SSH keys", tags: str = "[ssh]", aliases: str = "[]",
                **stm: str) -> str:
    fields = {"stm_id": "m-1", **STM, **stm, "stm_status": "active"}
    lines = ["---", f"title: {title}", f"tags: {tags}", f"aliases: {aliases}",
             *(f"{name}: {value}" for name, value in fields.items()), "---"]
    return "\n".join([*lines, "", "Deploy keys live in the password manager, never in dotfiles.",
                      ""])


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, MEMORY, memory_text())
    for i in range(6):
        write(root, f"notes/note {i}.md", f"# Note {i}\n\nWords about topic {i}.\n")
    return root


def make_indexer(tmp_path: Path, vault: Path, catalog: Catalog) -> tuple[Indexer, CountingStore]:
    store = CountingStore(tmp_path / "lance")
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, EMBEDDER,
                      indexer_options(Settings()))
    return indexer, store


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    yield catalog
    catalog.close()


@pytest.fixture
def indexed(tmp_path: Path, vault: Path, catalog: Catalog) -> Iterator[tuple[Indexer,
                                                                            CountingStore]]:
    indexer, store = make_indexer(tmp_path, vault, catalog)
    assert indexer.sync().added == 7
    store.writes.clear()
    yield indexer, store
    store.index.close()


@pytest.mark.parametrize("edit", [
    {"stm_use_count": "2", "stm_last_used": "2024-06-02T09:00:00+00:00", "stm_strength": "0.9"},
    {"stm_use_count": "3", "tags": "[ssh, security]"},
])
def test_a_metadata_only_change_writes_the_catalog_not_the_chunk_index(
    indexed: tuple[Indexer, CountingStore], vault: Path, catalog: Catalog, edit: dict[str, str]
) -> None:
    indexer, store = indexed
    before = catalog.records_for([MEMORY])[MEMORY]
    version = store.index.stats()["chunk_version"]
    write(vault, MEMORY, memory_text(**edit))
    report = indexer.sync(paths=[MEMORY])
    assert (report.meta_changed, report.chunks_embedded) == (1, 0)
    after = catalog.records_for([MEMORY])[MEMORY]
    assert after.file_hash != before.file_hash and after.body_hash == before.body_hash
    assert after.tags == (("ssh", "security") if "tags" in edit else ("ssh",))
    assert store.writes == []
    assert store.index.stats()["chunk_version"] == version


@pytest.mark.parametrize("edit", [{"title": "Deploy keys"}, {"aliases": "[Deploy keys]"}])
def test_a_new_name_rewrites_the_chunks_that_carry_it(
    indexed: tuple[Indexer, CountingStore], vault: Path, catalog: Catalog, edit: dict[str, str]
) -> None:
    indexer, store = indexed
    write(vault, MEMORY, memory_text(**edit))
    report = indexer.sync(paths=[MEMORY])
    assert (report.meta_changed, report.chunks_embedded) == (1, 0)
    assert [set(change) for change in store.writes] == [{"retitles"}]
    assert [hit.path for hit in store.index.text_search("deploy keys", 1)] == [MEMORY]


def test_a_move_rewrites_the_chunks_under_the_new_path(
    indexed: tuple[Indexer, CountingStore], vault: Path, catalog: Catalog
) -> None:
    indexer, store = indexed
    (vault / "notes/note 1.md").rename(vault / "notes/moved.md")
    report = indexer.sync(paths=["notes/note 1.md", "notes/moved.md"])
    assert (report.moved, report.chunks_embedded) == (1, 0)
    assert [set(change) for change in store.writes] == [{"moves"}]
    assert set(catalog.records_for(["notes/note 1.md", "notes/moved.md"])) == {"notes/moved.md"}
    assert store.index.text_search("moved", 1)[0].path == "notes/moved.md"


def test_a_batch_sync_reads_only_the_rows_of_its_paths(
    indexed: tuple[Indexer, CountingStore], vault: Path, catalog: Catalog
) -> None:
    indexer, _ = indexed
    statements: list[str] = []
    catalog._db.set_trace_callback(statements.append)
    write(vault, "notes/note 2.md", "# Note 2\n\nNew words.\n")
    write(vault, MEMORY, memory_text(stm_use_count="4"))
    report = indexer.sync(paths=["notes/note 2.md", MEMORY])
    catalog._db.set_trace_callback(None)
    assert (report.changed, report.meta_changed) == (1, 1)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert reads and all("WHERE path IN" in s for s in reads), reads
    assert not any("SUM(" in s.upper() for s in statements)
    assert len(catalog.records()) == 7


def test_after_a_rebuild_on_open_later_batches_keep_the_rest_of_the_catalog(
    tmp_path: Path, vault: Path, catalog: Catalog
) -> None:
    indexer, store = make_indexer(tmp_path, vault, catalog)
    indexer.sync()
    store.index.close()
    meta = tmp_path / "lance" / META_FILE
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "schema_version": 2}))
    indexer, store = make_indexer(tmp_path, vault, catalog)  # a new process: rebuilt on open
    try:
        assert indexer.sync().rebuilt_reason == (
            f"index schema changed from v2 to v{SCHEMA_VERSION}")
        write(vault, "notes/note 3.md", "# Note 3\n\nChanged.\n")
        report = indexer.sync(paths=["notes/note 3.md"])
        assert (report.rebuilt_reason, report.changed) == (None, 1)
        assert len(catalog.records()) == 7
        assert indexer.sync().touched == 0  # a full sync does not rebuild again either
        assert store.index.stats()["chunks"] == 7
    finally:
        store.index.close()


def test_a_batch_with_a_file_name_that_is_not_utf8_is_reported_not_fatal(
    indexed: tuple[Indexer, CountingStore], vault: Path, catalog: Catalog
) -> None:
    """The watcher hands such a name over with undecodable bytes (surrogates), which SQLite
    cannot take; the catalog holds the file under an escaped name, as the full scan does."""
    indexer, _ = indexed
    raw = bytes(vault / "notes") + b"/bad-\xff\xfe.md"
    with open(raw, "wb") as handle:
        handle.write(b"# Bad name\n")
    path = "notes/" + (b"bad-\xff\xfe.md").decode("utf-8", "surrogateescape")
    assert catalog.records_for([path]) == {}
    report = indexer.sync(paths=[path, "notes/note 2.md"])
    assert report.skipped == 1
    assert len(catalog.records()) == 8  # the seven notes and the skipped one, escaped


class OrderEmbedder(FakeEmbedder):
    """The fake embedder, recording the texts it embeds in order."""

    def __init__(self) -> None:
        super().__init__(32)
        self.name = EMBEDDER.name
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_first_index_writes_every_notes_words_then_vectors_newest_first(
    tmp_path: Path, vault: Path, catalog: Catalog,
) -> None:
    for n in range(6):  # note 0 the newest
        stamp = 1_700_000_000 - n * 86_400
        os.utime(vault / f"notes/note {n}.md", (stamp, stamp))
    embedder = OrderEmbedder()
    store = CountingStore(tmp_path / "lance")
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, embedder,
                      indexer_options(Settings()))
    try:
        assert indexer.sync().added == 7
        names, words, *vectors = [w["upserts"] for w in store.writes if "upserts" in w]
        assert [c.text for _, cs in names for c in cs] == [""] * 7  # names, no text
        assert len(words) == 7 and all(not np.any(c.vector) for _, cs in words for c in cs)
        assert vectors and all(np.any(c.vector) for batch in vectors for _, cs in batch
                               for c in cs)
        order = [text.split("\n")[0] for text in embedder.texts]
        notes = [n for n in order if n.startswith("note ")]
        assert notes == [f"note {n} — Note {n}" for n in range(6)], order  # newest first
        assert not any(words_only(r) for r in catalog.records().values())
    finally:
        store.index.close()


class HeldNotesEmbedder(FakeEmbedder):
    """Counts, at each bulk embedding, the parsed notes alive in the process."""

    def __init__(self) -> None:
        super().__init__(32)
        self.held: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.held.append(sum(isinstance(o, Note) for o in gc.get_objects()))
        return super().embed(texts)


def test_a_first_index_holds_only_the_notes_of_the_batch_it_embeds(
    tmp_path: Path, vault: Path, catalog: Catalog,
) -> None:
    """The words pass parses every note, the embedding parses each again in its turn: no
    parsed note is kept from one to the other, nor after its batch is written (a 10k-note
    vault's parsed notes were tens of MB held for the whole first index)."""
    for i in range(40):
        write(vault, f"more/note {i}.md", f"# More {i}\n\nWords about subject {i}.\n")
    embedder = HeldNotesEmbedder()
    store = CountingStore(tmp_path / "lance")
    options = replace(indexer_options(Settings()), batch_chunks=4)
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, embedder, options)
    try:
        assert indexer.sync().added == 47
        assert len(embedder.held) >= 10 and max(embedder.held) <= 4  # one batch's notes
    finally:
        store.index.close()


def test_notes_a_stopped_first_index_left_with_words_only_are_embedded_next_time(
    tmp_path: Path, vault: Path, catalog: Catalog,
) -> None:
    indexer, store = make_indexer(tmp_path, vault, catalog)
    writes: list[frozenset[str]] = []

    def stop_after_the_words(unwritten: frozenset[str]) -> None:
        writes.append(unwritten)
        if len(writes) == 2:  # the names, then the words: the embedding stops
            indexer.stop()

    try:
        with pytest.raises(Stopping):
            indexer.sync(between=stop_after_the_words)
        records = catalog.records()
        assert len(records) == 7 and all(words_only(r) for r in records.values())
        hits = store.index.stored_chunks(list(records))
        assert hits and not any(np.any(c.vector) for c in hits)  # words, no vector yet

        # the next start: a new indexer on the same catalog and chunk index
        again = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, EMBEDDER,
                        indexer_options(Settings()))
        report = again.sync()
        assert report.changed == 7 and report.chunks_embedded == len(hits)  # none kept
        assert not any(words_only(r) for r in catalog.records().values())
        assert all(np.any(c.vector) for c in store.index.stored_chunks(list(records)))
    finally:
        store.index.close()


def test_a_first_index_stopped_in_its_words_pass_stops_before_its_next_write(
    tmp_path: Path, vault: Path, catalog: Catalog,
) -> None:
    """A daemon told to stop during the words pass does not wait for the rest of it: the
    notes whose names only are written are embedded at the next start, like the others."""
    indexer, store = make_indexer(tmp_path, vault, catalog)
    try:
        with pytest.raises(Stopping, match="7 notes"):
            indexer.sync(between=lambda unwritten: indexer.stop())  # after the names
        assert len([w for w in store.writes if "upserts" in w]) == 1  # the names only
        records = catalog.records()
        assert len(records) == 7 and all(words_only(r) and r.chunk_count == 1
                                          for r in records.values())
        again = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, EMBEDDER,
                        indexer_options(Settings()))
        assert again.sync().changed == 7
        assert not any(words_only(r) for r in catalog.records().values())
        assert [h.path for h in store.index.text_search("topic", 10)]
    finally:
        store.index.close()


def words_pass_writes(tmp_path: Path, vault: Path) -> list[list[tuple[Any, list[Any]]]]:
    """The words pass's writes of a first index (names, then words), the chunks as tuples."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    indexer, store = make_indexer(tmp_path, vault, catalog)
    passes: list[frozenset[str]] = []

    def stop_after_the_words_pass(unwritten: frozenset[str]) -> None:
        passes.append(unwritten)
        if indexer.progress.state().by_words == "complete":
            indexer.stop()

    try:
        with pytest.raises(Stopping):
            indexer.sync(between=stop_after_the_words_pass)
        rows = store.index._chunks.to_arrow().to_pylist()
        languages = {path: record.language for path, record in catalog.records().items()}
        assert {languages["de/Sicherung.md"], languages["zh/备份.md"]} == {"de", "zh"}
        assert all(row["terms"] == note_terms(row["text"], languages[row["path"]])
                   for row in rows)  # made apart as the index makes them
        assert sum(bool(row["terms"]) for row in rows) >= 2
        return [[(record, [(c.chunk_id, c.heading, c.text, c.vector.tolist()) for c in chunks])
                 for record, chunks in write["upserts"]]
                for write in store.writes if "upserts" in write]
    finally:
        store.index.close()
        catalog.close()


def test_the_words_pass_writes_the_same_parsed_apart_as_here(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The notes parsed, chunked and judged in child processes (a vault of hundreds of notes
    or more) are written as those done in the daemon: the same rows, the same records, in the
    same order."""
    for i in range(40):
        write(vault, f"more/note {i}.md", f"---\ntags: [t{i % 3}]\n---\n# More {i}\n\n"
                                          f"Words about subject {i}.\n\n## Part\n\nMore.\n")
        stamp = 1_700_000_000 - i * 3_600
        os.utime(vault / f"more/note {i}.md", (stamp, stamp))
    write(vault, "de/Sicherung.md", "Die Sicherung läuft jede Nacht und kopiert die Fotos auf "
                                    "den Server im Dachboden, wenn er nicht schläft.\n")
    write(vault, "zh/备份.md", "备份任务每天晚上运行，并把照片复制到阁楼里的服务器上。\n")
    here = words_pass_writes(tmp_path / "here", vault)
    monkeypatch.setattr("vaultmem.vault.parse_apart.APART_NOTES", 2)
    monkeypatch.setattr("vaultmem.vault.parse_apart.GROUP_NOTES", 5)
    started: list[int] = []
    real_enter = ApartMap.__enter__

    def enter(self: ApartMap[Any, Any]) -> ApartMap[Any, Any]:
        entered = real_enter(self)
        started.append(len(multiprocessing.active_children()))
        return entered

    monkeypatch.setattr(ApartMap, "__enter__", enter)
    apart = words_pass_writes(tmp_path / "apart", vault)
    assert started and started[0] >= 1  # parsed in child processes
    assert apart == here and len(here) >= 2  # names, words
    assert not multiprocessing.active_children()


def test_a_first_index_writes_every_notes_names_before_parsing_any(
    tmp_path: Path, vault: Path, catalog: Catalog,
) -> None:
    write(vault, "notes/trip.md", "---\ntitle: Lisbon itinerary\naliases: [Portugal trip]\n"
                                  "---\n\nTrams and pastries.\n")
    indexer, store = make_indexer(tmp_path, vault, catalog)
    seen: list[tuple[list[str], list[str], bool]] = []

    def between(unwritten: frozenset[str]) -> None:
        if not seen:  # the first write: names only
            seen.append(([h.path for h in store.index.text_search("Lisbon", 5)],
                         [h.path for h in store.index.text_search("Portugal", 5)],
                         all(words_only(r) and r.chunk_count == 1
                             for r in catalog.records().values())))

    try:
        assert indexer.sync(between=between).added == 8
        assert seen == [(["notes/trip.md"], ["notes/trip.md"], True)]
        assert [h.path for h in store.index.text_search("pastries", 5)] == ["notes/trip.md"]
        assert not any(words_only(r) for r in catalog.records().values())
    finally:
        store.index.close()


def test_a_sync_leaving_much_text_out_of_the_full_text_index_optimises_at_its_end(
    tmp_path: Path, vault: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past lance.FLAT_TEXT_ROWS rows with text out of the index a search leaves their text
    out: the sync that wrote them (the first index here) brings them in before it returns, so
    an in-process search right after it finds every note by its words; a sync let in between
    another's slices leaves that to the outer one."""
    monkeypatch.setattr("vaultmem.index.lance.FLAT_TEXT_ROWS", 1)
    indexer, store = make_indexer(tmp_path, vault, catalog)
    optimised: list[int] = []
    original = store.index.optimize
    monkeypatch.setattr(store.index, "optimize", lambda: (optimised.append(1), original())[1])
    nested: list[int] = []

    def between(_: frozenset[str]) -> None:
        if not nested:  # a sync let in between two slices: an edit, 2 rows with text
            write(vault, "notes/note 5.md", "# Note 5\n\nNew words.\n\nAnd a second part.\n")
            before = len(optimised)
            indexer.sync(paths=["notes/note 5.md"])
            nested.append(len(optimised) - before)

    try:
        assert indexer.sync(between=between).added == 7
        assert nested == [0]  # the let-in sync did not optimise
        assert store.index._unindexed_text == 0  # the outer one did, at its end
        assert optimised
        hits = store.index.text_search("password manager dotfiles", 5)
        assert hits and hits[0].path == MEMORY
    finally:
        store.index.close()


def test_a_first_index_reads_no_note_swapped_for_a_link_out_of_the_vault_after_the_scan(
    tmp_path: Path, vault: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scan listed a note; a symlink to a file outside the vault replaced it before its
    read (`read_listed_note` checks the file opened): it fails, its text is not indexed."""
    (tmp_path / "secret.md").write_text("# Secret\n\nOutside words zanzibar.\n")
    write(vault, "notes/swapped.md", "# Swapped\n\nInside words.\n")
    real_scan = indexer_module.scan_vault

    def scan_then_swap(root: Path, rules: IgnoreRules) -> ScanResult:
        listed = real_scan(root, rules)
        (vault / "notes/swapped.md").unlink()
        (vault / "notes/swapped.md").symlink_to(tmp_path / "secret.md")
        return listed

    monkeypatch.setattr(indexer_module, "scan_vault", scan_then_swap)
    indexer, store = make_indexer(tmp_path, vault, catalog)
    report = indexer.sync()
    assert report.added == 7 and report.failed == 1
    assert [path for path, _ in report.failures] == ["notes/swapped.md"]
    assert "outside the vault" in report.failures[0][1]
    assert store.index.text_search("zanzibar", 5) == []
