"""query_context: thread neighbours in natural name order, in folders of mostly one-chunk notes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.index._support import note
from vaultmem.core.ranking import ChunkHit, NoteSignals, RankingParams, rank_notes
from vaultmem.engine.search_context import QueryContexts, query_context
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.note_records import note_record
from vaultmem.vault.notes import parse_note


def signal(path: str) -> NoteSignals:
    return NoteSignals(path, 0.5, 0.0, ChunkHit(f"{path}#0", path, "text", 0.5))


def test_neighbours_follow_natural_order_in_folders_of_mostly_short_notes(
        tmp_path: Path) -> None:
    """Turns (one chunk each) are read in name order, numbered or not; a folder whose notes are
    mostly long (sessions, articles) is no thread, nor are its short notes; memories stand
    alone."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        turns = ["c/Session 1 – turn 2.md", "c/Session 1 – turn 10.md", "c/Session 1 – turn 9.md"]
        memories = ["m/2026-11-20 alpha.md", "m/2026-11-21 beta.md"]
        long = ["s/Session 1 – 8 May.md", "s/Session 2 – 9 May.md", "s/Session 3 – 9 May.md",
                "s/Session 4 – 9 May.md", "s/Session 5 – 9 May.md"]
        stray = ["s/Session 6 – note.md"]  # short, but among 5 long notes: 1/6 short
        records = [note(p, "one turn")[0] for p in turns + stray]
        records += [note(p, "one fact", note_id=f"id-{i}")[0] for i, p in enumerate(memories)]
        records += [note(p, "first part\n\nsecond part")[0] for p in long]  # two chunks
        catalog.apply(records)
        paths = turns + memories + long + stray
        context = query_context(catalog, "q", {p: signal(p) for p in paths})
        assert context.neighbours["c/Session 1 – turn 9.md"] == [
            ("c/Session 1 – turn 2.md", 1), ("c/Session 1 – turn 10.md", 1)]
        assert context.neighbours["c/Session 1 – turn 2.md"] == [
            ("c/Session 1 – turn 9.md", 1), ("c/Session 1 – turn 10.md", 2)]
        assert all(not context.neighbours.get(p) for p in long + stray + memories)
        numbered = query_context(catalog, "q", {p: signal(p) for p in paths}, RankingParams(
            thread_any_name=False, thread_short_share=0.0))  # the rule before
        assert not numbered.neighbours.get("m/2026-11-20 alpha.md")
        assert numbered.neighbours["s/Session 6 – note.md"] == []
    finally:
        catalog.close()


def test_a_note_filed_under_a_property_value_the_query_names_ranks_above_a_mention(
        tmp_path: Path) -> None:
    """`speaker: Melanie` is what the turn is filed under; Caroline's turn only names her."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        turns = {
            "c/Turn 1.md": b"---\nspeaker: Caroline\nsession: 1\n---\n"
                           b"Caroline: Melanie, how are the kids?\n",
            "c/Turn 2.md": b"---\nspeaker: Melanie\nsession: 1\n---\n"
                           b"Melanie: The kids and I went swimming.\n",
        }
        records = [note_record(parse_note(path, raw), 1) for path, raw in turns.items()]
        assert records[1].aliases == ("Melanie",)
        catalog.apply(records)
        query = "What does Melanie do with her kids?"
        signals = {
            "c/Turn 1.md": NoteSignals("c/Turn 1.md", 0.40, 2.0,
                                       ChunkHit("c/Turn 1.md#0", "c/Turn 1.md", "x", 0.4),
                                       "Caroline: Melanie, how are the kids?"),
            "c/Turn 2.md": NoteSignals("c/Turn 2.md", 0.40, 2.0,
                                       ChunkHit("c/Turn 2.md#0", "c/Turn 2.md", "y", 0.4),
                                       "Melanie: The kids and I went swimming."),
        }
        context = query_context(catalog, query, signals)
        assert "Melanie" in context.names["c/Turn 2.md"]
        ranked = rank_notes(signals, context)  # equal signals otherwise: ties go by path
        assert [m.path for m in ranked] == ["c/Turn 2.md", "c/Turn 1.md"]
    finally:
        catalog.close()


def test_kept_neighbours_follow_every_change_to_the_notes(tmp_path: Path) -> None:
    """A QueryContexts keeps neighbours between searches: a turn added, here or by another
    process, or a turn grown long, changes them at the next search."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    other = Catalog(tmp_path / "catalog.sqlite3")
    try:
        catalog.apply([note(f"c/Turn {i}.md", "one turn")[0] for i in (1, 2, 4)])
        contexts = QueryContexts(catalog)
        paths = ["c/Turn 2.md", "c/Turn 4.md"]
        signals = {p: signal(p) for p in paths}
        first = contexts("q", signals)
        assert first.neighbours == query_context(catalog, "q", signals).neighbours
        assert first.neighbours["c/Turn 2.md"] == [("c/Turn 1.md", 1), ("c/Turn 4.md", 1)]
        assert contexts("q", signals).neighbours == first.neighbours
        catalog.apply([note("c/Turn 3.md", "one turn")[0]])
        assert contexts("q", signals).neighbours["c/Turn 2.md"] == [
            ("c/Turn 1.md", 1), ("c/Turn 3.md", 1), ("c/Turn 4.md", 2)]
        other.apply([note("c/Turn 0.md", "one turn")[0]])
        assert contexts("q", signals).neighbours["c/Turn 2.md"] == [
            ("c/Turn 0.md", 2), ("c/Turn 1.md", 1), ("c/Turn 3.md", 1), ("c/Turn 4.md", 2)]
        catalog.apply([note("c/Turn 3.md", "grown\n\ninto two chunks")[0]])
        after = contexts("q", signals)
        assert after.neighbours == query_context(catalog, "q", signals).neighbours
        assert after.neighbours["c/Turn 2.md"] == [
            ("c/Turn 0.md", 2), ("c/Turn 1.md", 1), ("c/Turn 4.md", 1)]
        narrow = contexts("q", signals, RankingParams(thread_width=1))  # another rule, its own
        assert narrow.neighbours["c/Turn 2.md"] == [("c/Turn 1.md", 1), ("c/Turn 4.md", 1)]
    finally:
        catalog.close()
        other.close()


def test_kept_names_and_languages_follow_every_change_to_the_notes(tmp_path: Path) -> None:
    """A QueryContexts keeps each note's names and word keys between searches: a note
    retitled, given an alias or another language, here or by another process, or added after
    a search that did not find it in the catalog, shows so at the next search."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    other = Catalog(tmp_path / "catalog.sqlite3")
    try:
        trip, later = "n/Trip.md", "n/Later.md"
        catalog.apply([note(trip, "a walk", title="Trip")[0]])
        contexts = QueryContexts(catalog)
        signals = {p: signal(p) for p in (trip, later)}
        first = contexts("q", signals)
        assert first.names == {trip: ("Trip",)} and first.keys == {}
        assert contexts("q", signals).names == first.names
        catalog.apply([note(trip, "a walk", title="Hike", aliases=("Ramble",))[0]])
        assert contexts("q", signals).names[trip] == ("Trip", "Hike", "Ramble")
        other.apply([note(trip, "a walk", title="Поездка", language="ru")[0]])
        russian = contexts("q", signals)
        assert russian.names[trip] == ("Trip", "Поездка")
        assert "поездк" in russian.keys_of(trip)("поездках")
        other.apply([note(later, "added since")[0]])
        assert contexts("q", signals).names[later] == ("Later",)
        fresh = query_context(catalog, "q", signals)
        assert contexts("q", signals) == fresh
    finally:
        catalog.close()
        other.close()


def test_a_change_forgets_only_its_note_and_the_neighbours_of_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """During an index every write moves the catalog on: a search then looks up again only the
    written notes' names and the threads of their folders, not those of every candidate."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        catalog.apply([note(f"{folder}/Turn {i}.md", "one turn")[0]
                       for folder in ("a", "b") for i in (1, 2, 3)])
        contexts = QueryContexts(catalog)
        signals = {f"{folder}/Turn 2.md": signal(f"{folder}/Turn 2.md") for folder in "ab"}
        contexts("q", signals)
        listed: list[str] = []
        named: list[str] = []
        folders, names = catalog.paths_in_folder, catalog.note_names_and_languages_for
        monkeypatch.setattr(catalog, "paths_in_folder",
                            lambda folder, *a, **k: listed.append(folder) or folders(
                                folder, *a, **k))
        monkeypatch.setattr(catalog, "note_names_and_languages_for",
                            lambda paths: named.extend(paths) or names(paths))
        catalog.apply([note("a/Turn 4.md", "one turn")[0], note("c/Other.md", "x")[0]])
        after = contexts("q", signals)
        assert set(listed) == {"a"} and named == []
        assert after == query_context(catalog, "q", signals)
        assert after.neighbours["a/Turn 2.md"] == [("a/Turn 1.md", 1), ("a/Turn 3.md", 1),
                                                   ("a/Turn 4.md", 2)]
        catalog.apply([note("b/Turn 2.md", "one turn", title="Second")[0]])
        listed.clear()
        named.clear()
        assert contexts("q", signals).names["b/Turn 2.md"] == ("Turn 2", "Second")
        assert set(listed) == {"b"} and named == ["b/Turn 2.md"]
    finally:
        catalog.close()


def test_changed_since_tells_the_paths_or_that_it_cannot(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    other = Catalog(tmp_path / "catalog.sqlite3")
    try:
        start, changed = catalog.changed_since(-1)
        assert changed is None  # nothing known before it was made
        assert catalog.changed_since(start) == (start, frozenset())
        catalog.apply([note("a/One.md", "x")[0]])
        catalog.apply([], deletes=["a/Two.md"])
        now, changed = catalog.changed_since(start)
        assert now == start + 2 and changed == {"a/One.md", "a/Two.md"}
        assert catalog.changed_since(start + 1) == (now, frozenset({"a/Two.md"}))
        other.apply([note("b/Three.md", "x")[0]])  # another process: any note may have changed
        later, changed = catalog.changed_since(now)
        assert later > now and changed is None
        catalog.apply([note("a/One.md", "y")[0]])
        assert catalog.changed_since(later)[1] == {"a/One.md"}
        for i in range(300):  # older than what is kept: cannot tell
            catalog.apply([note(f"c/{i}.md", "x")[0]])
        assert catalog.changed_since(later)[1] is None
    finally:
        catalog.close()
        other.close()


_FOLDERS = st.sampled_from(["a", "b", "a/sub"])
_CHANGE = st.tuples(_FOLDERS, st.integers(1, 5), st.sampled_from(["short", "long", "gone",
                                                                   "memory", "renamed"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_CHANGE, min_size=1, max_size=4), min_size=1, max_size=6))
def test_kept_contexts_equal_fresh_ones_after_any_changes(
        tmp_path_factory: pytest.TempPathFactory,
        changes: list[list[tuple[str, int, str]]]) -> None:
    """Whatever notes are added, grown, removed, made memories or retitled between searches,
    the kept QueryContext is the one built afresh."""
    catalog = Catalog(tmp_path_factory.mktemp("kept") / "catalog.sqlite3")
    try:
        paths = [f"{folder}/Turn {i}.md" for folder in ("a", "b", "a/sub") for i in range(1, 6)]
        catalog.apply([note(p, "one turn")[0] for p in paths if not p.endswith("5.md")])
        contexts = QueryContexts(catalog)
        signals = {p: signal(p) for p in paths}
        any_name = RankingParams(thread_any_name=True)
        for batch in changes:
            contexts("q", signals)
            contexts("q", signals, any_name)
            for folder, i, kind in batch:
                path = f"{folder}/Turn {i}.md"
                if kind == "gone":
                    catalog.apply([], deletes=[path])
                    continue
                body = "one turn" if kind != "long" else "first part\n\nsecond part"
                fields = {"title": "Renamed"} if kind == "renamed" else {}
                catalog.apply([note(path, body, note_id="id-1" if kind == "memory" else "",
                                    **fields)[0]])
            assert contexts("q", signals) == query_context(catalog, "q", signals)
            assert contexts("q", signals, any_name) == query_context(catalog, "q", signals,
                                                                     any_name)
    finally:
        catalog.close()
