"""Rows written since the last optimise: while many with text wait for it, a full-text search
scans their names, not their text (a scan of their text cost up to seconds a search during a
first index); the indexed rows rank as before, and the optimise brings every word back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.index import full_text, lance
from vaultmem.index.lance import LanceIndex

from ._support import EMBEDDER, OPTIONS, all_notes, note

NEW = {
    "garden/tomatoes.md": "Heirloom seedlings want warmth.\n\nPinch the suckers weekly.",
    "garden/compost.md": "Turn the heap often.\n\nBrown leaves balance kitchen scraps.",
}


def _index(tmp_path: Path) -> LanceIndex:
    index = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    index.apply(upserts=all_notes())
    assert index.text_search("kitten", 5)  # the full-text indexes are made, every row in them
    return index


def _paths(index: LanceIndex, query: str) -> list[str]:
    return [hit.path for hit in index.text_search(query, 10)]


def _scores(index: LanceIndex, query: str) -> list[tuple[str, float]]:
    return [(hit.chunk_id, round(hit.score, 4)) for hit in index.text_search(query, 10)]


@pytest.mark.parametrize(("limit", "text_at_once"), [
    (3, False),  # 4 rows with text written, more than the limit: their text waits
    (4, True),  # not more than the limit: searched by their text as before
], ids=["many rows: names until the optimise", "a few rows: text at once"])
def test_unindexed_rows_are_found_by_their_names_and_by_their_text_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, text_at_once: bool
) -> None:
    index = _index(tmp_path)
    indexed_before = _scores(index, "kitten memory review deadline")
    monkeypatch.setattr(lance, "FLAT_TEXT_ROWS", limit)
    index.apply(upserts=[note(path, body) for path, body in NEW.items()])  # 4 rows with text
    assert _paths(index, "tomatoes")[0] == "garden/tomatoes.md"  # by its name
    assert _paths(index, "compost")[0] == "garden/compost.md"
    by_text = {"garden/tomatoes.md"} if text_at_once else set()
    assert set(_paths(index, "heirloom seedlings suckers")) == by_text
    # the rows in the index rank as they did, with the same scores
    assert _scores(index, "kitten memory review deadline") == indexed_before
    index.optimize()
    assert set(_paths(index, "heirloom seedlings suckers")) == {"garden/tomatoes.md"}
    index.close()


def test_names_rows_without_text_do_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words pass's names rows (no text) cost a scan nothing worth avoiding."""
    index = _index(tmp_path)
    monkeypatch.setattr(lance, "FLAT_TEXT_ROWS", 0)
    names = []
    for path, body in NEW.items():
        record, chunks = note(path, body)
        names.append((record, [replace(chunks[0], text="", vector=np.zeros_like(
            chunks[0].vector))]))
    index.apply(upserts=names)
    assert index._unindexed_text == 0
    index.apply(upserts=[note("garden/tomatoes.md", NEW["garden/tomatoes.md"])])
    assert index._unindexed_text == 2
    assert _paths(index, "heirloom") == []  # over the limit (0): left to the optimise
    index.optimize()
    assert index._unindexed_text == 0
    assert _paths(index, "heirloom") == ["garden/tomatoes.md"]
    index.close()


def test_a_filtered_search_keeps_to_its_notes_while_rows_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(tmp_path)
    monkeypatch.setattr(lance, "FLAT_TEXT_ROWS", 1)
    index.apply(upserts=[note(path, body) for path, body in NEW.items()])
    hits = index.text_search("compost kitten tomatoes", 10, paths={"garden/compost.md"})
    assert {hit.path for hit in hits} == {"garden/compost.md"}
    index.close()


def _scored(rows: list[tuple[int, float]]) -> pa.Table:
    return pa.table({"_rowid": pa.array([r for r, _ in rows], pa.uint64()),
                     "_score": pa.array([s for _, s in rows], pa.float32())})


@given(first=st.dictionaries(st.integers(0, 30), st.integers(1, 9), max_size=12),
       second=st.dictionaries(st.integers(0, 30), st.integers(1, 9), max_size=12),
       k=st.integers(0, 15))
def test_best_scores_keeps_each_row_once_with_its_higher_score(
    first: dict[int, int], second: dict[int, int], k: int
) -> None:
    merged = full_text.best_scores(_scored(list(first.items())),
                                   _scored(list(second.items())), k)
    rows = merged.column("_rowid").to_pylist()
    scores = merged.column("_score").to_pylist()
    best = {r: max(first.get(r, 0), second.get(r, 0)) for r in {*first, *second}}
    assert len(rows) == len(set(rows)) == min(k, len(best))
    assert all(scores[i] == best[r] for i, r in enumerate(rows))
    assert scores == sorted(scores, reverse=True)
    assert sorted(best.values(), reverse=True)[:k] == scores


def test_a_matrix_out_of_step_reads_the_same_query_rows_not_a_scan_of_every_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An optimise that commits between a search's query and the look-up of its rows leaves
    the matrix without their ids: the hits are then read with the same query (the indexes and
    the names), with their scores, never by a scan of every waiting row's text (seconds)."""
    index = _index(tmp_path)
    monkeypatch.setattr(lance, "FLAT_TEXT_ROWS", 3)
    index.apply(upserts=[note(path, body) for path, body in NEW.items()])
    expected = _scores(index, "tomatoes kitten")
    assert _paths(index, "heirloom seedlings suckers") == []
    monkeypatch.setattr(full_text.VectorMatrix, "hits_by_row_id", lambda *_: None)
    monkeypatch.setattr(full_text, "_read", lambda *_: pytest.fail("the whole text scanned"))
    assert _scores(index, "tomatoes kitten") == expected
    assert _paths(index, "heirloom seedlings suckers") == []  # its text waits, as before
    hits = index.text_search("tomatoes", 3)
    assert hits[0].path == "garden/tomatoes.md" and hits[0].text.startswith("Heirloom")
    index.close()


def test_best_scores_carries_the_columns_of_each_rows_better_score() -> None:
    first = pa.table({"_rowid": pa.array([1, 2], pa.uint64()),
                      "_score": pa.array([3.0, 1.0], pa.float32()),
                      "text": pa.array(["one-first", "two-first"])})
    second = pa.table({"_rowid": pa.array([2, 3], pa.uint64()),
                       "_score": pa.array([5.0, 2.0], pa.float32()),
                       "text": pa.array(["two-second", "three-second"])})
    merged = full_text.best_scores(first, second, 3, ("text",))
    assert merged.column("_rowid").to_pylist() == [2, 1, 3]
    assert merged.column("text").to_pylist() == ["two-second", "one-first", "three-second"]


def _unindexed(index: LanceIndex) -> dict[str, int]:
    return {config.columns[0]: config.num_unindexed_rows
            for config in index._chunks.list_indices() if config.index_type == "FTS"}


@pytest.mark.parametrize("limit", [3, 4])
def test_a_write_past_the_title_limit_remakes_the_title_index_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """More rows than TITLE_ROWS out of the title index: the write remakes it (a search scans
    no waiting row's title, which cost up to 300 ms a search in a first index's words pass);
    the text waits for the optimise as before, and the same rows rank alike."""
    index = _index(tmp_path)
    monkeypatch.setattr(lance, "FLAT_TEXT_ROWS", 0)
    indexed_before = _scores(index, "kitten memory review deadline")
    monkeypatch.setattr(lance, "TITLE_ROWS", limit)
    index.apply(upserts=[note(path, body) for path, body in NEW.items()])  # 4 rows
    remade = limit < 4
    assert _unindexed(index) == {"text": 4, "title": 0 if remade else 4, "terms": 4}
    assert index._untitled == (0 if remade else 4)
    assert _paths(index, "tomatoes")[0] == "garden/tomatoes.md"  # by its name, either way
    assert _paths(index, "heirloom seedlings suckers") == []  # its text waits
    assert _scores(index, "kitten memory review deadline") == indexed_before
    index.optimize()
    assert _unindexed(index) == {"text": 0, "title": 0, "terms": 0}
    assert set(_paths(index, "heirloom seedlings suckers")) == {"garden/tomatoes.md"}
    index.close()
