"""Filtered search for bench/engine.py: folder- and tag-filtered Search.search beside the
unfiltered search on the same generated vault, interleaved query by query (so machine load
drifts hit all three alike), with each filter's p50 as a ratio to the unfiltered p50.

Also timed on its own: what a filter cost before the filter index, per query: reading every
catalog row and listing every memory (`Catalog.records()` + `MemoryStore.iter_memories()`).
"""

from __future__ import annotations

from bench.report import TOP_K, Results, Synthetic, say, settle
from bench.support import Stopwatch, ms, now_utc, p50, p95
from vaultmem.engine.filters import SearchFilters
from vaultmem_testing.queries import QUERIES

FILTERS = {
    "unfiltered": SearchFilters(),
    "folder Knowledge": SearchFilters(folder="Knowledge"),
    "tag #physics": SearchFilters(tags_any=("physics",)),
}
TARGET_RATIO = 1.2


def filtered_search(syn: Synthetic, repeats: int, results: Results) -> None:
    app = syn.app
    now = now_utc()
    for filters in FILTERS.values():  # warm-up (builds the filter index once), excluded
        for query in QUERIES[:5]:
            app.search.search(query, now, top_k=TOP_K, filters=filters)
    settle()
    samples: dict[str, list[float]] = {name: [] for name in FILTERS}
    names = list(FILTERS)
    for round_ in range(repeats):
        for i, query in enumerate(QUERIES):
            shift = (i + round_) % len(names)
            for name in names[shift:] + names[:shift]:
                watch = Stopwatch()
                app.search.search(query, now, top_k=TOP_K, filters=FILTERS[name])
                samples[name].append(watch.elapsed())
    old: list[float] = []
    for _ in range(5):
        watch = Stopwatch()
        app.catalog.records()
        list(app.store.iter_memories())
        old.append(watch.elapsed())
    notes = len(app.catalog.records())
    base = p50(samples["unfiltered"])
    say(f"  filtered Search.search, {len(QUERIES)} queries x {repeats}, interleaved "
        f"(top_k {TOP_K}):")
    for name, values in samples.items():
        allowed = app.search.filters.allowed(FILTERS[name], now, app.store.iter_memories)
        share = "all notes" if name == "unfiltered" else f"{len(allowed)} of {notes} notes"
        ratio = p50(values) / base
        say(f"    {name:<17} p50 {ms(p50(values)):>6} ms  p95 {ms(p95(values)):>6} ms  "
            f"p50 ratio {ratio:.2f}  ({share})")
        if name != "unfiltered":
            results.filtered_ratio[f"{name} at {syn.size} chunks"] = ratio
    say(f"    before the filter index a filter also read every row and memory: "
        f"{ms(p50(old))} ms per query (p50 of 5) on top of the search")


def filtered_summary(results: Results) -> None:
    for label, ratio in results.filtered_ratio.items():
        verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
        say(f"filtered search p50 / unfiltered, {label}: {ratio:.2f} "
            f"(target <= {TARGET_RATIO}): {verdict}")
