"""Section 4 of bench/engine.py: search after many single-note updates against a fresh copy,
at several points of the optimise cycle, and what each optimise option costs and buys."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from bench.report import POOL, TOP_K, Results, Synthetic, say, settle
from bench.support import Stopwatch, make_app, ms, now_utc, p50, p95
from vaultmem.app import App
from vaultmem_testing.queries import QUERIES


def interleaved(
    fresh: App, churned: App, repeats: int
) -> dict[str, dict[str, list[float]]]:
    """Fresh and churned, query by query in alternating order, so load hits both alike."""
    now = now_utc()
    samples: dict[str, dict[str, list[float]]] = {
        kind: {"fresh": [], "churned": []}
        for kind in ("end to end", "retrieval", "text search")
    }
    pairs = [("fresh", fresh), ("churned", churned)]
    for round_ in range(repeats):
        for i, query in enumerate(QUERIES):
            order = pairs if (i + round_) % 2 == 0 else pairs[::-1]
            for label, app in order:
                watch = Stopwatch()
                app.search.search(query, now, top_k=TOP_K)
                samples["end to end"][label].append(watch.elapsed())
            for label, app in order:
                lance = app.index()
                watch = Stopwatch()
                lance.vector_search(app.embedder.embed_query(query), POOL)
                middle = time.perf_counter()
                lance.text_search(query, POOL)
                samples["retrieval"][label].append(watch.elapsed())
                samples["text search"][label].append(time.perf_counter() - middle)
    return samples


def show_interleaved(
    point: str, fresh: App, churned: App, repeats: int, results: Results
) -> float:
    lance = churned.index()
    stats = lance.stats()
    settle()
    figures = interleaved(fresh, churned, repeats)
    say(f"  {point}: {stats['writes_since_optimize']} writes since the last optimise, "
        f"{stats['chunk_fragments']} chunk fragments, chunk table version "
        f"{stats['chunk_version']}")
    ratio = 0.0
    for kind, by_label in figures.items():
        f, c = by_label["fresh"], by_label["churned"]
        r = p50(c) / p50(f)
        say(f"    {kind:<12} fresh p50 {ms(p50(f)):>6} / p95 {ms(p95(f)):>6} ms   churned p50 "
            f"{ms(p50(c)):>6} / p95 {ms(p95(c)):>6} ms   p50 ratio {r:.2f}")
        results.churn_detail.setdefault(point, {})[kind] = r
        if kind == "end to end":
            ratio = r
            results.churn_ratios[point] = r
    return ratio


POLICIES = (10, 20, 50)  # optimize_every values compared at the worst point of their cycle


def churn(
    fresh: Synthetic, edits: int, repeats: int, tmp: Path, results: Results
) -> None:
    vault, data = tmp / "churn-vault", tmp / "churn-data"
    shutil.copytree(fresh.vault, vault)
    shutil.copytree(fresh.data, data)
    app = make_app(vault, data, fresh.embedder)
    report = app.sync.reindex()
    lance = app.index()
    every = lance.policy.every_writes
    results.optimize_every = every
    say(f"copied the {fresh.size}-chunk vault and index (re-index of the copy touched "
        f"{report.touched} notes); configured optimize_every_writes={every}")
    say("  rows: end to end = Search.search; retrieval = query embedding + vector_search + "
        "text_search; text search = LanceIndex.text_search; fresh and churned interleaved")
    regular = [n for n in fresh.notes if not n.path.startswith("memories/")]
    rng = np.random.default_rng(1234)
    sync_times: list[float] = []
    optimised: list[float] = []

    def edit(count: int) -> None:
        for _ in range(count):
            note = regular[int(rng.integers(len(regular)))]
            fresh.generator.edit(vault, note)
            watch = Stopwatch()
            report = app.sync.sync_paths([note.path])
            elapsed = watch.elapsed()
            if report.changed != 1:
                say(f"  warning: edit of {note.path} gave {report}")
            if every > 0 and lance._writes_since_optimize == 0:
                optimised.append(elapsed)
            else:
                sync_times.append(elapsed)

    watch = Stopwatch()
    edit(edits)
    total = watch.elapsed()
    auto = p50(optimised) - p50(sync_times) if optimised else 0.0
    say(f"  {edits} single-note edits (edit on disk + Indexer.sync(paths=[path])) in "
        f"{total:.1f} s: sync p50 {ms(p50(sync_times))} ms / p95 {ms(p95(sync_times))} ms; "
        f"{len(optimised)} syncs ran the automatic optimise: p50 "
        f"{ms(p50(optimised or [0.0]))} ms, i.e. one optimise ~{ms(auto)} ms")
    show_interleaved(f"after {edits} edits", fresh.app, app, repeats, results)
    if every <= 0:
        app.close()
        return
    points = sorted({n - 1 for n in POLICIES if n <= every} | {every - 1})
    for point in points:
        edit((point - lance._writes_since_optimize) % every)
        label = f"{point} writes since the optimise (worst point of optimize_every={point + 1})"
        show_interleaved(label, fresh.app, app, repeats, results)
        results.policy_points[point + 1] = label
    optimise_options(app, fresh.app, repeats, results)
    # the cost of one optimise after n writes, for each policy
    results.optimise_cost[every] = auto
    for n in POLICIES:
        if n < every:
            edit(n)
            watch = Stopwatch()
            lance.optimize()
            results.optimise_cost[n] = watch.elapsed()
    say("  optimise cost by policy: " + ", ".join(
        f"after {n} writes {ms(cost)} ms ({ms(cost / n)} ms per write)"
        for n, cost in sorted(results.optimise_cost.items())))
    app.close()


def optimise_options(app: App, fresh: App, repeats: int, results: Results) -> None:
    """At the configured policy's worst point, what each remedy costs and what it buys."""
    from lancedb.index import FTS

    from vaultmem.index import tables as tb

    lance = app.index()
    watch = Stopwatch()
    for column in tb.FTS_COLUMNS:
        lance._chunks.create_index(column, config=FTS(), replace=True)
    results.fts_refresh = watch.elapsed()
    say(f"  option A, rebuild only the FTS indexes (no compaction): {results.fts_refresh:.2f} s")
    show_interleaved("after option A", fresh, app, repeats, results)
    watch = Stopwatch()
    lance.optimize()
    say(f"  option B, full optimize() (compact + index update + cleanup): "
        f"{watch.elapsed():.2f} s")
    show_interleaved("after option B", fresh, app, repeats, results)
