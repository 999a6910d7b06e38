"""LanceIndex with the fake embedder: writes, reads, searches, persistence and rebuilds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from vaultmem.errors import IndexUnusableError
from vaultmem.index.base import SCHEMA_VERSION, ChunkRecord, IndexOptions, chunk_id_for
from vaultmem.index.identity import META_FILE
from vaultmem.index.lance import LanceIndex
from vaultmem.index.tables import sql_string
from vaultmem.index.upkeep import OPEN_FRAGMENT_LIMIT, Occasion

from ._support import EMBEDDER, NOTES, OPTIONS, all_notes, note


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def index(index_dir: Path) -> LanceIndex:
    idx = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    idx.apply(upserts=all_notes())
    return idx


def paths_of(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.path for hit in hits]


def stored_vectors(index_dir: Path, path: str) -> np.ndarray:
    """The vectors of one note's chunks as stored (read back from disk), in chunk order."""
    table = lancedb.connect(str(index_dir)).open_table("chunks")
    rows = table.search().where(f"path = {sql_string(path)}").select(["idx", "vector"])
    ordered = sorted(rows.to_arrow().to_pylist(), key=lambda row: row["idx"])
    return np.array([row["vector"] for row in ordered], dtype=np.float32)


def test_new_index_is_empty_and_not_rebuilt(index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert idx.rebuilt_reason is None
    assert idx.vector_search(EMBEDDER.embed_query("cats"), 5) == []
    assert idx.text_search("cats", 5) == []
    assert idx.stats()["chunks"] == 0


def test_upsert_then_vector_and_text_search_find_the_note(index: LanceIndex) -> None:
    vector_hits = index.vector_search(
        EMBEDDER.embed_query("A kitten plays with yarn on the rug."), 3
    )
    assert vector_hits[0].path == "animals/cats.md"
    assert vector_hits[0].chunk_id == "animals/cats.md#1"
    assert vector_hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in vector_hits] == sorted((h.score for h in vector_hits), reverse=True)
    text_hits = index.text_search("quarterly deadline", 3)
    assert text_hits[0].path == "finance/taxes.md"
    assert "quarterly" in text_hits[0].text
    assert text_hits[0].score > 0


def test_text_search_stems_and_searches_titles(index: LanceIndex) -> None:
    assert set(paths_of(index.text_search("decaying", 5))) == {
        "memory/decay.md",
        "memory/review.md",
    }
    # "taxes" occurs only in the title, which every chunk of that note carries.
    assert paths_of(index.text_search("taxes", 5)) == ["finance/taxes.md"] * 2


def test_only_the_chunks_table_is_stored(index: LanceIndex, index_dir: Path) -> None:
    assert index.stats()["chunks"] == sum(len(chunks) for _, chunks in all_notes())
    assert sorted(p.name for p in index_dir.iterdir()) == ["chunks.lance", META_FILE]


def test_retitle_keeps_vectors_and_rewrites_the_title(index: LanceIndex, index_dir: Path) -> None:
    before = stored_vectors(index_dir, "animals/dogs.md")
    record, _ = note("animals/dogs.md", NOTES["animals/dogs.md"])
    index.apply(retitles=[replace(record, title="Canines")])
    np.testing.assert_array_equal(stored_vectors(index_dir, "animals/dogs.md"), before)
    assert paths_of(index.text_search("canines", 5)) == ["animals/dogs.md"] * 2
    assert index.stats()["chunks"] == sum(len(chunks) for _, chunks in all_notes())


def test_a_retitle_to_the_same_names_writes_nothing(index: LanceIndex) -> None:
    before = index.stats()
    record, _ = note("finance/taxes.md", NOTES["finance/taxes.md"])
    index.apply(retitles=[replace(record, tags=("money",))])
    after = index.stats()
    assert after["chunk_version"] == before["chunk_version"]
    assert after["writes_since_optimize"] == before["writes_since_optimize"]


def test_move_keeps_vectors_and_rewrites_paths(index: LanceIndex, index_dir: Path) -> None:
    old_vectors = stored_vectors(index_dir, "animals/cats.md")
    record, _ = note("pets/felines.md", NOTES["animals/cats.md"])
    index.apply(moves=[("animals/cats.md", record)])
    np.testing.assert_array_equal(stored_vectors(index_dir, "pets/felines.md"), old_vectors)
    assert stored_vectors(index_dir, "animals/cats.md").size == 0
    assert "animals/cats.md" not in index.note_vectors()
    hit = index.vector_search(EMBEDDER.embed_query("kitten plays with yarn"), 1)[0]
    assert (hit.path, hit.chunk_id) == ("pets/felines.md", chunk_id_for("pets/felines.md", 1))
    text_hit = index.text_search("yarn", 1)[0]
    assert (text_hit.path, text_hit.chunk_id) == ("pets/felines.md", "pets/felines.md#1")
    assert paths_of(index.text_search("felines", 5)) == ["pets/felines.md"] * 2


def test_move_and_new_note_at_the_old_path_in_one_apply(index: LanceIndex) -> None:
    moved, _ = note("archive/cats.md", NOTES["animals/cats.md"])
    replacement = note("animals/cats.md", "Lions are big cats living in prides.")
    index.apply(moves=[("animals/cats.md", moved)], upserts=[replacement])
    assert index.text_search("yarn", 1)[0].path == "archive/cats.md"
    assert index.text_search("lions", 1)[0].path == "animals/cats.md"
    assert index.stats()["chunks"] == sum(len(c) for _, c in all_notes()) + 1


def test_deletes_remove_the_chunks(index: LanceIndex) -> None:
    index.apply(deletes=["finance/taxes.md", "not/there.md"])
    assert index.text_search("quarterly", 5) == []
    query = EMBEDDER.embed_query("quarterly tax filing deadline")
    assert "finance/taxes.md" not in paths_of(index.vector_search(query, 20))
    assert "finance/taxes.md" not in index.note_vectors()


def test_reupsert_replaces_all_chunks(index: LanceIndex, index_dir: Path) -> None:
    index.apply(upserts=[note("animals/cats.md", "Only one paragraph about lions now.")])
    assert index.text_search("yarn", 5) == []
    assert stored_vectors(index_dir, "animals/cats.md").shape == (1, EMBEDDER.dim)


def test_clear_empties_the_index_and_spends_the_rebuild_reason(index: LanceIndex,
                                                               index_dir: Path) -> None:
    index.close()
    (index_dir / META_FILE).write_text("{not json")
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    reopened.apply(upserts=all_notes())
    assert reopened.rebuilt_reason is not None
    reopened.clear()
    assert reopened.rebuilt_reason is None  # the indexer rebuilds: nothing left to report
    assert reopened.stats()["chunks"] == 0 and reopened.note_vectors() == {}
    assert reopened.text_search("kitten", 5) == []
    reopened.apply(upserts=[note("b.md", "alpha gamma")])
    assert paths_of(reopened.text_search("gamma", 5)) == ["b.md"]


def test_reopen_sees_everything(index: LanceIndex, index_dir: Path) -> None:
    vectors = index.note_vectors()
    index.close()
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.rebuilt_reason is None
    reopened_vectors = reopened.note_vectors()
    assert reopened_vectors.keys() == vectors.keys()
    for path, vector in vectors.items():
        np.testing.assert_allclose(reopened_vectors[path], vector, rtol=1e-6)
    assert reopened.text_search("puppy", 1)[0].path == "animals/dogs.md"


def test_embedder_change_rebuilds_empty(index: LanceIndex, index_dir: Path) -> None:
    index.close()
    reopened = LanceIndex(index_dir, "fake/other-model", OPTIONS)
    assert reopened.rebuilt_reason == (
        f"embedding model changed from {EMBEDDER.name} to fake/other-model"
    )
    assert reopened.stats()["chunks"] == 0
    assert LanceIndex(index_dir, "fake/other-model", OPTIONS).rebuilt_reason is None


def test_schema_version_change_rebuilds(index: LanceIndex, index_dir: Path) -> None:
    index.close()
    meta_path = index_dir / META_FILE
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "schema_version": 0}))
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.rebuilt_reason is not None and "schema" in reopened.rebuilt_reason
    assert reopened.stats()["chunks"] == 0


def test_an_index_with_the_old_notes_table_is_rebuilt_without_it(index: LanceIndex,
                                                                  index_dir: Path) -> None:
    index.close()
    lancedb.connect(str(index_dir)).create_table("notes", pa.table({"path": ["a.md"]}))
    meta_path = index_dir / META_FILE
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "schema_version": 2}))
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.rebuilt_reason == (
        f"index schema changed from v2 to v{SCHEMA_VERSION}")
    assert not (index_dir / "notes.lance").exists()
    assert reopened.stats()["chunks"] == 0


def _garble_manifests(index_dir: Path) -> None:
    for manifest in (index_dir / "chunks.lance" / "_versions").iterdir():
        manifest.write_bytes(b"not a manifest")


def _garble_data(index_dir: Path) -> None:
    for data_file in (index_dir / "chunks.lance" / "data").iterdir():
        data_file.write_bytes(b"\x00" * 64)


def _garble_meta(index_dir: Path) -> None:
    (index_dir / META_FILE).write_text("{not json")


def _drop_meta(index_dir: Path) -> None:
    (index_dir / META_FILE).unlink()


@pytest.mark.parametrize("damage", [_garble_manifests, _garble_data, _garble_meta, _drop_meta])
def test_damaged_index_is_rebuilt_not_a_crash(
    index: LanceIndex, index_dir: Path, damage: object
) -> None:
    index.close()
    (index_dir / "unrelated.txt").write_text("keep me")
    damage(index_dir)  # type: ignore[operator]
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.rebuilt_reason is not None
    assert reopened.stats()["chunks"] == 0
    assert (index_dir / "unrelated.txt").read_text() == "keep me"
    reopened.apply(upserts=all_notes())
    assert reopened.text_search("kitten", 1)[0].path == "animals/cats.md"


def test_index_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(IndexUnusableError):
        LanceIndex(target, EMBEDDER.name, OPTIONS)


def test_vector_dim_mismatch_is_an_index_error(index: LanceIndex) -> None:
    record, _ = note("odd.md", "odd")
    chunk = ChunkRecord("odd.md#0", "odd.md", 0, "", "odd", np.ones(8, dtype=np.float32))
    with pytest.raises(IndexUnusableError):
        index.apply(upserts=[(record, [chunk])])
    with pytest.raises(IndexUnusableError):
        index.vector_search(np.ones(8, dtype=np.float32), 3)


def test_two_changes_to_one_path_are_refused(index: LanceIndex) -> None:
    record, chunks = note("a.md", "alpha")
    with pytest.raises(ValueError):
        index.apply(upserts=[(record, chunks)], retitles=[record])


def test_paths_filter(index: LanceIndex) -> None:
    allowed = {"memory/decay.md", "finance/taxes.md"}
    vector_hits = index.vector_search(EMBEDDER.embed_query("kitten"), 10, paths=allowed)
    assert vector_hits and set(paths_of(vector_hits)) <= allowed
    text_hits = index.text_search("memory review tax", 10, paths=allowed)
    assert set(paths_of(text_hits)) == allowed
    assert index.text_search("kitten", 10, paths=allowed) == []
    assert index.vector_search(EMBEDDER.embed_query("kitten"), 10, paths=[]) == []
    assert index.text_search("kitten", 10, paths=["it's/odd.md"]) == []


def test_related_and_note_vectors(index: LanceIndex) -> None:
    related = index.related("memory/decay.md", 2)
    assert related[0][0] == "memory/review.md"
    assert "memory/decay.md" not in [path for path, _ in related]
    assert related[0][1] >= related[1][1]
    vectors = index.note_vectors()
    assert set(vectors) == set(NOTES)
    for vector in vectors.values():
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert set(index.note_vectors(["animals/cats.md", "nope.md"])) == {"animals/cats.md"}
    assert index.related("nope.md", 3) == []


def test_many_single_note_applies_then_optimize(index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, replace(OPTIONS, optimize_every=0))
    for i in range(200):
        idx.apply(upserts=[note(f"n/{i:03}.md", f"Note number n{i} about topic t{i % 7}.")])
    before = idx.stats()
    assert before["chunks"] == 200 and before["chunk_fragments"] >= 100
    query = EMBEDDER.embed_query("Note number n123 about topic t4.")
    assert idx.vector_search(query, 1)[0].path == "n/123.md"
    assert idx.text_search("n123", 1)[0].path == "n/123.md"
    idx.optimize()
    after = idx.stats()
    assert after["chunk_fragments"] < 5 and after["chunks"] == 200
    assert idx.text_search("n77", 1)[0].path == "n/077.md"
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.vector_search(query, 1)[0].path == "n/123.md"


def test_optimize_runs_automatically(index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, replace(OPTIONS, optimize_every=10))
    for i in range(20):
        idx.apply(upserts=[note(f"n/{i}.md", f"note n{i}")])
    stats = idx.stats()
    assert stats["writes_since_optimize"] == 0
    assert stats["chunk_fragments"] <= 2
    idx.apply(upserts=[note("n/20.md", "note n20")])
    assert idx.stats()["writes_since_optimize"] == 1


def test_upkeep_optimises_only_when_the_policy_says_so(index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, replace(OPTIONS, optimize_every=0))
    assert idx.upkeep(Occasion.SCHEDULED) is None  # nothing written
    for i in range(3):
        idx.apply(upserts=[note(f"n/{i}.md", f"note n{i}")])
    assert idx.stats()["chunk_fragments"] == 3  # every_writes=0: no optimise on writes
    reason = idx.upkeep(Occasion.INDEXED)
    assert reason is not None and reason.startswith("3 writes")
    stats = idx.stats()
    # compacted (the first write's fragment, in the full-text indexes made with the table,
    # stays apart from the rows written after it)
    assert stats["writes_since_optimize"] == 0 and stats["chunk_fragments"] < 3
    assert idx.upkeep(Occasion.SCHEDULED) is None


def test_a_search_that_meets_unoptimised_writes_says_so_and_the_search_upkeep_takes_them_in(
        index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, replace(OPTIONS, optimize_every=50))
    idx.apply(upserts=[note(f"n/{i}.md", f"note n{i}") for i in range(4)])
    idx.optimize()
    calls: list[int] = []
    idx.on_pile_searched = lambda: calls.append(idx.stats()["writes_since_optimize"])
    assert idx.text_search("n1", 1)[0].path == "n/1.md"
    assert calls == []  # nothing waits: no call
    for i in range(4, 7):
        idx.apply(upserts=[note(f"n/{i}.md", f"note n{i}")])
    assert idx.upkeep(Occasion.SCHEDULED) is None  # a small pile: the daemon's job leaves it
    assert idx.text_search("n5", 1)[0].path == "n/5.md"
    assert calls == [3]  # called after the search, outside the locks (it read the stats)
    reason = idx.upkeep(Occasion.SEARCHED)
    assert reason is not None and reason.startswith("3 writes since the last optimise")
    stats = idx.stats()  # the new rows compacted (the first fragment had no deletions)
    assert stats["chunk_fragments"] < 4 and stats["writes_since_optimize"] == 0
    assert idx.text_search("n5", 1)[0].path == "n/5.md"
    assert calls == [3]


def test_opening_an_index_with_leftover_fragments_optimises_it(index_dir: Path) -> None:
    # an earlier process wrote a few small batches and stopped before its next optimise
    idx = LanceIndex(index_dir, EMBEDDER.name, replace(OPTIONS, optimize_every=0))
    for i in range(OPEN_FRAGMENT_LIMIT + 3):
        idx.apply(upserts=[note(f"n/{i}.md", f"note n{i}")])
    assert idx.stats()["chunk_fragments"] > OPEN_FRAGMENT_LIMIT
    idx.close()
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert reopened.stats()["chunk_fragments"] <= 2
    assert reopened.text_search("n3", 1)[0].path == "n/3.md"


def test_searches_on_an_emptied_chunks_table(index_dir: Path) -> None:
    idx = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    idx.apply(upserts=[note("a.md", "alpha beta")])
    idx.apply(deletes=["a.md"])
    assert idx.text_search("alpha", 5) == []  # the FTS index is first built on an empty table
    assert idx.vector_search(EMBEDDER.embed_query("alpha"), 5) == []
    assert idx.related("a.md", 3) == [] and idx.note_vectors() == {}
    idx.apply(upserts=[note("b.md", "alpha gamma")])
    assert paths_of(idx.text_search("alpha", 5)) == ["b.md"]
    idx.optimize()
    assert paths_of(idx.text_search("gamma", 5)) == ["b.md"]


def _cache_after_edits(index_dir: Path, options: IndexOptions, edits: int) -> int:
    idx = LanceIndex(index_dir, EMBEDDER.name, options)
    idx.apply(upserts=[note(f"n/{i}.md", f"note n{i} about topic t{i % 7}") for i in range(40)])
    for i in range(edits):  # a daemon's life: single-note edits, searches, optimises
        idx.apply(upserts=[note(f"n/{i % 40}.md", f"note n{i % 40} edited {i} times")])
        idx.text_search(f"n{i % 40}", 3)
    return idx.stats()["cache_bytes"]


def test_lancedb_caches_stay_within_their_limits(tmp_path: Path) -> None:
    # LanceDB keeps every version's manifest: unbounded, the cache grows with every edit
    edits, cap = 80, 2**20
    unbounded = _cache_after_edits(tmp_path / "a", replace(OPTIONS, optimize_every=25), edits)
    small = replace(OPTIONS, optimize_every=25, index_cache_mb=1, metadata_cache_mb=1)
    bounded = _cache_after_edits(tmp_path / "b", small, edits)
    assert unbounded > 2 * cap  # the test can fail: the workload does outgrow the limit
    assert bounded <= 2 * cap


def test_the_app_opens_the_index_with_the_configured_limits(tmp_path: Path) -> None:
    from vaultmem.app import build_app
    from vaultmem.config import load_settings

    (tmp_path / "vault").mkdir()
    env = {"VAULTMEM_INDEX_CACHE_MB": "3"}
    settings = load_settings(tmp_path / "none.toml", env=env, overrides={
        "vault": tmp_path / "vault", "data_dir": tmp_path / "data", "embedding_model": "fake",
        "metadata_cache_mb": 2, "optimize_every_writes": 7})
    app = build_app(settings)
    try:
        assert app.index.options == IndexOptions(optimize_every=7, index_cache_mb=3,
                                                 metadata_cache_mb=2)
        assert app.index().stats()["cache_bytes"] >= 0
    finally:
        app.close()


@pytest.mark.timeout(60)
def test_searches_go_on_while_an_optimise_runs(tmp_path: Path) -> None:
    import threading

    index = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    try:
        index.apply(upserts=all_notes())
        started, release = threading.Event(), threading.Event()
        chunks = index._chunks
        real_optimize = chunks.optimize

        def slow_optimize(**options: object) -> None:
            started.set()
            release.wait(30)
            real_optimize(**options)

        chunks.optimize = slow_optimize
        worker = threading.Thread(target=index.optimize)
        worker.start()
        try:
            assert started.wait(30)
            query = "kitten yarn"
            assert index.text_search(query, 3)  # answered while the optimise is held up
            assert index.vector_search(EMBEDDER.embed_query(query), 3)
            writer = threading.Thread(target=index.apply, kwargs={"deletes": ["animals/dogs.md"]})
            writer.start()
            writer.join(0.5)
            assert writer.is_alive()  # a write waits for the optimise
        finally:
            release.set()
            worker.join(30)
        writer.join(30)
        assert not writer.is_alive()
        assert "animals/dogs.md" not in {h.path for h in index.text_search("puppy dogs", 5)}
    finally:
        index.close()


def _on_disk(index_dir: Path, paths: list[str]) -> list[tuple[object, ...]]:
    table = lancedb.connect(str(index_dir)).open_table("chunks")
    rows = table.search().select(["chunk_id", "path", "idx", "heading", "text", "vector"])
    return sorted((r["chunk_id"], r["path"], r["idx"], r["heading"], r["text"],
                   tuple(np.asarray(r["vector"], dtype=np.float32).tolist()))
                  for r in rows.to_arrow().to_pylist() if r["path"] in paths)


def _stored(index: LanceIndex, paths: list[str]) -> list[tuple[object, ...]]:
    return sorted((c.chunk_id, c.path, c.index, c.heading, c.text,
                   tuple(np.asarray(c.vector, dtype=np.float32).tolist()))
                  for c in index.stored_chunks(paths))


def test_stored_chunks_from_the_mirror_equal_the_rows_on_disk(index: LanceIndex,
                                                              index_dir: Path) -> None:
    """An edit's stored chunks come from the in-memory mirror: the same columns, bit for bit,
    as LanceDB holds, after writes, a move, a delete and a reopen."""
    paths = sorted(NOTES)
    assert _stored(index, paths) == _on_disk(index_dir, paths) != []
    moved_from, *rest = paths
    record, _ = note(moved_from, NOTES[moved_from])
    edited, chunks = note(rest[0], "A new body.\n\nMore text here.")
    chunks = [replace(c, heading=f"Heading {c.index}") for c in chunks]
    index.apply(moves=[(moved_from, replace(record, path="moved/here.md"))],
                upserts=[(edited, chunks)], deletes=[rest[1]])
    after = ["moved/here.md", *rest]
    assert _stored(index, after) == _on_disk(index_dir, after) != []
    assert index.stored_chunks([moved_from, rest[1]]) == []
    index.close()
    reopened = LanceIndex(index_dir, EMBEDDER.name, OPTIONS)
    assert _stored(reopened, after) == _on_disk(index_dir, after)


def test_the_index_builds_its_arrow_tables_with_the_system_allocator() -> None:
    """pyarrow's own pool kept freed pages resident; glibc's hands them back (lance.py)."""
    import pyarrow as pa

    import vaultmem.index.lance  # noqa: F401  (sets the pool when imported)

    assert pa.default_memory_pool().backend_name == "system"
