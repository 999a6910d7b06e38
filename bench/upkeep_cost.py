"""What the optimise that follows a burst of edits costs, part by part, and what the pile of
unoptimised writes costs a full-text search: the figures behind the idle window after edits.

Run: `.venv/bin/python -m bench.upkeep_cost [--chunks 10000] [--writes 30] [--piles 1,10,49]`.
A generated vault of ~--chunks chunks (bench/idle.py's notes, fake embeddings) is indexed,
optimised and its old versions removed once: the base, as a daemon's index is minutes after its
first run. Every measurement works on a copy of the base (vault and index), in this process:

1. the optimise after --writes single-note edits (a line appended, `IndexSync.sync_paths`), its
   CPU seconds (this process's utime + stime, LanceDB's threads included): LanceDB's
   `optimize()` once, once more with nothing new (what the first left to the next), the same two
   on a copy whose full-text indexes were dropped (compaction and version cleanup alone), then
   vaultmem's own part (the matrix's row ids read and set again, as `LanceIndex.optimize` does);
2. the cleanup of the versions a first index leaves (its whole run, re-indexed from scratch),
   alone: `optimize(cleanup_older_than=0)` on a table with nothing else to do;
3. full-text search p50 after each pile of writes in --piles, against the base's copy, queries
   interleaved: `LanceIndex.text_search` (what a search runs), the same query on the indexed
   rows only (LanceDB's `fast_search`, which skips the rows written since the optimise), and
   end to end (`Search.search`); then the upkeep the daemon runs once searches pause
   (`Occasion.SEARCHED`), its CPU, and the same searches again. Each pile starts from an
   optimised index.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from bench.idle import make_vault
from bench.support import load_average, machine_lines, make_app, ms, now_utc, p50
from vaultmem.app import App
from vaultmem.index import analysis, full_text
from vaultmem.index import tables as tb
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.lance import KEEP_OLD_VERSIONS, LanceIndex
from vaultmem.index.lazy_client import deferred_models, lazy_packages, marked_overrides
from vaultmem.index.upkeep import Occasion
from vaultmem_testing.queries import QUERIES

with lazy_packages(), deferred_models(), marked_overrides():
    from lancedb.background_loop import LOOP

EMBEDDER = FakeEmbedder(384)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Base:
    """The indexed, optimised and cleaned vault that every measurement copies."""

    def __init__(self, root: Path, chunks: int) -> None:
        self.root = root
        self.paths = make_vault(root / "vault", chunks)
        app = make_app(root / "vault", root / "data", EMBEDDER)
        app.sync.reindex()
        lance = app.index()
        self.first_index_versions = int(lance.stats()["chunk_version"])
        lance._chunks.optimize(cleanup_older_than=timedelta(0))
        lance._chunks.optimize(cleanup_older_than=timedelta(0))
        self.stats = lance.stats()
        app.close()
        self._copies = 0

    def copy(self) -> tuple[App, Path]:
        self._copies += 1
        target = self.root / f"copy{self._copies}"
        shutil.copytree(self.root / "vault", target / "vault")
        shutil.copytree(self.root / "data", target / "data")
        app = make_app(target / "vault", target / "data", EMBEDDER)
        app.sync.reindex()  # finds nothing to do: the catalog matches the copied files
        app.index().warm()
        return app, target / "vault"

    def edit(self, app: App, vault: Path, rng: random.Random, count: int) -> None:
        for i in range(count):
            path = rng.choice(self.paths)
            with (vault / path).open("a", encoding="utf-8") as handle:
                handle.write(f"\nSee also upkeep{i}.\n")
            app.sync.sync_paths([path])


def timed(step: Callable[[], Any]) -> float:
    before = cpu()
    step()
    return cpu() - before


def optimise_parts(base: Base, writes: int) -> None:
    for indexes in (True, False):
        app, vault = base.copy()
        lance = app.index()
        base.edit(app, vault, random.Random(3), writes)
        if not indexes:
            for config in lance._chunks.list_indices():
                lance._chunks.drop_index(config.name)
        fragments = lance.stats()["chunk_fragments"]
        first = timed(partial(lance._chunks.optimize, cleanup_older_than=KEEP_OLD_VERSIONS))
        second = timed(partial(lance._chunks.optimize, cleanup_older_than=KEEP_OLD_VERSIONS))
        ours = timed(partial(own_part, lance))
        label = "with the full-text indexes" if indexes else "indexes dropped"
        print(f"  {label}: {fragments} fragments; optimize() CPU {first:.3f} s, once more "
              f"with nothing new {second:.3f} s; vaultmem's row-id reload {ours:.3f} s",
              flush=True)
        app.close()


def own_part(lance: LanceIndex) -> None:
    stored = tb.row_ids(lance._chunks)
    matrix = lance._ensure_matrix()
    if matrix is not None:
        matrix.set_row_ids(*stored)


def cleanup_of_first_index(base: Base) -> None:
    root = base.root / "first"
    shutil.copytree(base.root / "vault", root / "vault")
    app = make_app(root / "vault", root / "data", EMBEDDER)
    app.sync.reindex()
    table = app.index()._chunks
    table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
    table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)  # what the first left to the next
    versions = len(table.list_versions())
    cost = timed(lambda: table.optimize(cleanup_older_than=timedelta(0)))
    print(f"  a first index leaves {versions} versions; removing them (nothing else to do): "
          f"{cost:.3f} s CPU", flush=True)
    app.close()


def text_query(lance: LanceIndex, indexed_only: bool) -> Callable[[str], object]:
    def run(query: str) -> object:
        if not indexed_only:
            return lance.text_search(query, 50)
        terms = full_text.Terms(tb.fts_terms(query), analysis.query_terms(query, ()))
        return LOOP.run(full_text._scored_row_ids(  # type: ignore[no-untyped-call]
            lance._chunks._table, full_text._full_text_query(terms), 50, None,
            indexed_only=True))
    return run


def search_after(base: Base, piles: list[int], rounds: int) -> None:
    fresh, _ = base.copy()
    app, vault = base.copy()
    rng = random.Random(5)
    for pile in piles:
        base.edit(app, vault, rng, pile)
        stats = app.index().stats()
        print(f"  after {pile} writes ({stats['chunk_fragments']} fragments, "
              f"{app.index()._unindexed_text} rows with text out of the index):", flush=True)
        compare(fresh, app, rounds)
        # what the daemon does once searches pause (upkeep.py, SEARCHED)
        wall = time.perf_counter()
        used = timed(partial(app.index().upkeep, Occasion.SEARCHED))
        print(f"    the search's upkeep: {used:.3f} s CPU, {time.perf_counter() - wall:.2f} s; "
              f"then:", flush=True)
        compare(fresh, app, rounds)
    fresh.close()
    app.close()


def compare(fresh: App, app: App, rounds: int) -> None:
    """p50 of the same queries on both, interleaved."""
    kinds: dict[str, tuple[Callable[[str], object], Callable[[str], object]]] = {
        "full text": (text_query(fresh.index(), False), text_query(app.index(), False)),
        "indexed rows only": (text_query(fresh.index(), True),
                              text_query(app.index(), True)),
        "end to end": (lambda q: fresh.search.search(q, now_utc()),
                       lambda q: app.search.search(q, now_utc())),
    }
    for kind, (on_fresh, on_churned) in kinds.items():
        times: dict[str, list[float]] = {"fresh": [], "churned": []}
        for round_ in range(rounds):
            for i, query in enumerate(QUERIES):
                pairs = [("fresh", on_fresh), ("churned", on_churned)]
                for label, run in pairs if (i + round_) % 2 else pairs[::-1]:
                    started = time.perf_counter()
                    run(query)
                    times[label].append(time.perf_counter() - started)
        f, c = p50(times["fresh"]), p50(times["churned"])
        print(f"    {kind:<18} fresh p50 {ms(f):>6} ms, after the writes {ms(c):>6} ms: "
              f"{c / f:.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10000)
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--piles", default="1,10,49")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"vaultmem upkeep cost, {now_utc():%Y-%m-%d %H:%M} UTC; command: {' '.join(sys.argv)}")
    for line in machine_lines():
        print(line)
    with tempfile.TemporaryDirectory(prefix="vaultmem-upkeep-") as name:
        base = Base(Path(name), args.chunks)
        print(f"base: {base.stats['chunks']} chunks, {base.stats['chunk_fragments']} fragment(s); "
              f"its first index wrote {base.first_index_versions} versions", flush=True)
        print(f"1. the optimise after {args.writes} single-note edits")
        optimise_parts(base, args.writes)
        print("2. the versions of a first index")
        cleanup_of_first_index(base)
        print("3. full-text search with a pile of unoptimised writes")
        search_after(base, [int(n) for n in args.piles.split(",")], args.rounds)
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
