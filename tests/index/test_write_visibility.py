"""Searches beside an index write: they do not wait for LanceDB's write (a delete and an add,
~200 ms during a first index), and they see the index as it was before the write or after it,
never between its delete and its add."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from vaultmem.index import lance
from vaultmem.index.lance import LanceIndex

from ._support import EMBEDDER, NOTES, OPTIONS, all_notes, note

CATS = "animals/cats.md"
NEW_CATS = "Cats chase laser dots.\n\nA tabby naps in the sunbeam."


def _paths(index: LanceIndex, query: str) -> set[str]:
    return {hit.path for hit in index.text_search(query, 10)}


@pytest.mark.timeout(60)
def test_a_search_goes_on_while_a_write_is_held_up_and_sees_the_index_before_it(
        tmp_path: Path) -> None:
    index = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    try:
        index.apply(upserts=all_notes())
        index.optimize()
        table = index._chunks
        real_add = table.add
        adding, release = threading.Event(), threading.Event()

        def slow_add(*args: object, **kwargs: object) -> object:
            adding.set()  # the note's old rows are deleted in LanceDB already
            release.wait(30)
            return real_add(*args, **kwargs)

        table.add = slow_add
        writer = threading.Thread(target=index.apply,
                                  kwargs={"upserts": [note(CATS, NEW_CATS)]})
        writer.start()
        try:
            assert adding.wait(30)
            started = time.perf_counter()
            # answered while the write waits, from the index as it was before the write: the
            # note's deleted rows are still found, its new words not yet
            assert CATS in _paths(index, "kitten yarn")
            assert CATS not in _paths(index, "tabby sunbeam")
            vector = EMBEDDER.embed_query("a kitten plays with yarn")
            assert CATS in {hit.path for hit in index.vector_search(vector, 3)}
            assert time.perf_counter() - started < 10
            assert writer.is_alive()  # still held up: the searches did not wait for it
        finally:
            release.set()
            writer.join(30)
        assert not writer.is_alive()
        # after it: the new words, not the old
        assert CATS in _paths(index, "tabby sunbeam")
        assert CATS not in _paths(index, "kitten yarn")
        assert index.stored_chunks([CATS])[0].text == NEW_CATS.split("\n\n")[0]
    finally:
        index.close()


@pytest.mark.timeout(120)
def test_searches_beside_many_writes_always_find_every_note_once(tmp_path: Path) -> None:
    """Each note rewritten again and again (delete and add) while another thread searches
    for every note by its own word: each search finds it, with one chunk per row."""
    index = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    words = ["aardvark", "bison", "caracal", "dingo", "echidna", "fossa"]

    def notes(round_: int) -> list:  # type: ignore[type-arg]
        return [note(f"zoo/{word}.md", f"The {word} of round {round_}.\n\nIt eats {word}food.")
                for word in words]

    try:
        index.apply(upserts=notes(0))
        failures: list[str] = []
        stop = threading.Event()

        def search() -> None:
            while not stop.is_set():
                for word in words:
                    hits = index.text_search(word, 10)
                    found = [hit.chunk_id for hit in hits if hit.path == f"zoo/{word}.md"]
                    if not found or len(found) != len(set(found)):
                        failures.append(f"{word}: {found}")

        searcher = threading.Thread(target=search)
        searcher.start()
        try:
            for round_ in range(1, 25):
                index.apply(upserts=notes(round_))
        finally:
            stop.set()
            searcher.join(60)
        assert not searcher.is_alive()
        assert failures == []
        assert _paths(index, "round 24") == {f"zoo/{word}.md" for word in words}
    finally:
        index.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("writes", [1, 12])
@pytest.mark.parametrize("clock", [datetime.now, None], ids=["wall-clock", "no-clock"])
def test_the_version_searches_read_outlives_an_optimise_that_drops_old_versions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writes: int,
        clock: Callable[[], datetime] | None) -> None:
    """An optimise compacts, drops old versions, then brings the indexes up to date; searches
    read the version published before it until it ends, however old, so it is kept (its age
    read on the clock the index is given; with none, no old version is dropped)."""
    monkeypatch.setattr(lance, "KEEP_OLD_VERSIONS", timedelta(0))  # every old version goes
    index = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS, clock=clock)
    try:
        for path, body in NOTES.items():
            for _ in range(writes):
                index.apply(upserts=[note(path, body)])
        answers: list[set[str]] = []
        table = index._chunks
        real_optimize = table.optimize

        def searched_optimize(**options: object) -> object:
            done = real_optimize(**options)  # committed, old versions dropped: not published
            answers.append(_paths(index, "kitten yarn"))
            return done

        table.optimize = searched_optimize
        index.optimize()
        assert answers == [{CATS}]
        assert _paths(index, "kitten yarn") == {CATS}
    finally:
        index.close()
