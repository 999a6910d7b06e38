"""Catalog.paths_in_folder: the notes directly in one folder, for thread context."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.index._support import note
from vaultmem.index.catalog import Catalog


def test_paths_in_folder_lists_direct_children_only(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        paths = ["Top 1.md", "c/Turn 2.md", "c/Turn 10.md", "c/Session 1/Turn 1.md",
                 "c2/Turn 1.md", "c/2023-01-01 t1.md", "c/2023-01-02 t1.md"]
        catalog.apply([note(path, "text")[0] for path in paths])
        assert catalog.paths_in_folder("c") == sorted(
            ["c/Turn 2.md", "c/Turn 10.md", "c/2023-01-01 t1.md", "c/2023-01-02 t1.md"])
        assert catalog.paths_in_folder("c", "2023-01-01") == ["c/2023-01-01 t1.md"]
        assert catalog.paths_in_folder("c/Session 1") == ["c/Session 1/Turn 1.md"]
        assert catalog.paths_in_folder("") == ["Top 1.md"]
        assert catalog.paths_in_folder("missing") == []
        catalog.apply([note("c/Turn 3.md", "one\n\ntwo")[0]])  # two chunks
        assert "c/Turn 3.md" in catalog.paths_in_folder("c")
        assert "c/Turn 3.md" not in catalog.paths_in_folder("c", max_chunks=1)
        assert "c/Turn 2.md" in catalog.paths_in_folder("c", max_chunks=1)
    finally:
        catalog.close()


_NAMES = ["Top.md", "é.md", "a/1.md", "a/10.md", "a/2.md", "a/2023-01-01 x.md", "a/b/1.md",
          "a/B.md", "a/b.md", "ab/1.md", "a/Z z.md", "a/日記.md", "a/b/c/1.md"]
_LISTED = [("", ""), ("a", ""), ("a", "2023"), ("a", "1"), ("a/b", ""), ("ab", ""), ("x", "")]


@settings(max_examples=40, deadline=None)
@given(writes=st.lists(st.tuples(
    st.dictionaries(st.sampled_from(_NAMES), st.tuples(st.integers(1, 3), st.booleans()),
                    max_size=6),
    st.sets(st.sampled_from(_NAMES), max_size=3)), min_size=1, max_size=6))
def test_kept_listings_follow_writes_as_a_fresh_read_lists_them(
    tmp_path_factory: pytest.TempPathFactory,
    writes: list[tuple[dict[str, tuple[int, bool]], set[str]]],
) -> None:
    """The listings a catalog keeps across its own writes (index/folder_lists.py) are those a
    catalog that reads them afresh lists, every filter, in the same order."""
    path = tmp_path_factory.mktemp("folders") / "catalog.sqlite3"
    kept = Catalog(path)
    try:
        for upserts, deletes in writes:
            for folder, prefix in _LISTED:  # listed, so kept before each write
                kept.paths_in_folder(folder, prefix)
            kept.apply([replace(note(name, "x")[0], chunk_count=chunks,
                                note_id="id" if memory else "")
                        for name, (chunks, memory) in upserts.items()],
                       deletes=sorted(deletes - upserts.keys()))
            fresh = Catalog(path)
            try:
                for folder, prefix in _LISTED:
                    for limit, memories in ((None, True), (1, False), (2, True)):
                        assert kept.paths_in_folder(
                            folder, prefix, max_chunks=limit, memories=memories
                        ) == fresh.paths_in_folder(
                            folder, prefix, max_chunks=limit, memories=memories)
            finally:
                fresh.close()
    finally:
        kept.close()
