"""query_context: thread neighbours come from natural name order among one-chunk notes."""

from __future__ import annotations

from pathlib import Path

from tests.index._support import note
from vaultmem.core.ranking import ChunkHit, NoteSignals
from vaultmem.engine.search_context import query_context
from vaultmem.index.catalog import Catalog


def signal(path: str) -> NoteSignals:
    return NoteSignals(path, 0.5, 0.0, ChunkHit(f"{path}#0", path, "text", 0.5))


def test_neighbours_follow_natural_order_and_skip_long_and_unnumbered_notes(
        tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        short = ["c/Session 1 – turn 2.md", "c/Session 1 – turn 10.md", "c/Session 1 – turn 9.md"]
        long = ["s/Session 1 – 8 May.md", "s/Session 2 – 9 May.md"]
        plain = ["m/2026-11-20 alpha.md", "m/2026-11-20 beta.md"]
        records = [note(p, "one turn")[0] for p in short + plain]
        records += [note(p, "first part\n\nsecond part")[0] for p in long]  # two chunks
        catalog.apply(records)
        paths = short + long + plain
        context = query_context(catalog, "q", {p: signal(p) for p in paths})
        assert context.neighbours["c/Session 1 – turn 9.md"] == [
            ("c/Session 1 – turn 2.md", 1), ("c/Session 1 – turn 10.md", 1)]
        assert context.neighbours["c/Session 1 – turn 2.md"] == [
            ("c/Session 1 – turn 9.md", 1), ("c/Session 1 – turn 10.md", 2)]
        assert all(not context.neighbours.get(p) for p in long + plain)
    finally:
        catalog.close()
