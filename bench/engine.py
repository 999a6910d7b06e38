"""vaultmem engine benchmark: index throughput, unchanged re-index, search latency, churn.

Run it through `scripts/bench` (offline, the project's virtualenv). Everything happens in a
temporary directory with the real model (all-MiniLM-L6-v2) and the real code paths
(`build_app` → `IndexSync.reindex` / `Indexer.sync` / `Search.search`). Model load time and the
LanceDB import are excluded from every figure and printed on their own.

1. Index throughput: a full index of a copy of the vaultofknowledge vault (a fixed random sample
   of notes unless --index-notes all), as notes/s and chunks/s and as a ratio to the raw
   embedding throughput of exactly the same chunk texts in the same run: every embed() call the
   indexer makes is paired with a raw embedding of the same texts (PairedEmbedder), seconds
   apart, so that machine load drifts cancel; the raw time is not counted as index time.
2. Unchanged re-index: `IndexSync.reindex()` on already indexed vaults, median of repeats, per
   1,000 notes; in the same App and in a new App (which reopens the index).
3. Search latency: `Search.search` end to end including the query embedding at each size in
   --sizes (chunks), on generated notes whose chunks are real corpus chunks; their vectors are
   the real embeddings of those chunks plus small noise (PoolEmbedder, used only to index them).
4. Churn: 1,000 single-note edits through `Indexer.sync(paths=[path])` at --churn-size chunks,
   then search p50 against a fresh copy, interleaved, at several points of the optimise cycle.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.churn import churn
from bench.eval_sets import CORPORA, VOK_VAULT
from bench.filters import filtered_search, filtered_summary
from bench.report import (
    CHECKER,
    CHECKS,
    IDLE_CHECK,
    POOL,
    SETTLE,
    TARGETS,
    TOP_K,
    Results,
    Synthetic,
    say,
    section,
    settle,
)
from bench.support import (
    PairedEmbedder,
    PoolEmbedder,
    Stopwatch,
    TimingEmbedder,
    load_average,
    machine_lines,
    make_app,
    ms,
    now_utc,
    p50,
    p95,
)
from vaultmem.app import App
from vaultmem.config import Settings
from vaultmem.core.chunking import chunk_markdown, embedding_text
from vaultmem.index.base import Embedder
from vaultmem.index.embedders import FakeEmbedder, SentenceTransformerEmbedder, make_embedder
from vaultmem.settings_params import embedder_options
from vaultmem.vault.notes import read_note
from vaultmem.vault.scan import scan_vault
from vaultmem_testing.bench_vault import (
    PoolChunk,
    VaultGenerator,
    copy_notes,
    usable_chunk,
)
from vaultmem_testing.queries import QUERIES

CORPUS = VOK_VAULT
TASKS_CORPUS = CORPORA / "obsidian-tasks"


# ---- 1. index throughput -------------------------------------------------------------------


def timed_method(obj: Any, name: str, totals: dict[str, float], key: str) -> None:
    """Wrap obj.name (on this instance only) to add its wall time to totals[key]."""
    original = getattr(obj, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[key] = totals.get(key, 0.0) + time.perf_counter() - start

    setattr(obj, name, wrapper)


def index_throughput(
    label: str, source: Path, limit: int | None, real: SentenceTransformerEmbedder, tmp: Path
) -> tuple[App, list[str], TimingEmbedder, float]:
    vault, data = tmp / f"{label}-vault", tmp / f"{label}-data"
    files = copy_notes(source, vault, limit)
    paired = PairedEmbedder(real)
    app = make_app(vault, data, paired)
    lance = app.index()  # opening an empty index is not indexing work (and takes ~20 ms)
    totals: dict[str, float] = {}
    timed_method(lance, "apply", totals, "lance")
    timed_method(lance, "optimize", totals, "optimize")
    timed_method(app.catalog, "apply", totals, "catalog")

    settle()
    watch = Stopwatch()
    report = app.sync.reindex()
    indexing = watch.elapsed() - paired.raw_seconds  # the paired raw embeddings do not count
    notes, chunks = report.added, report.chunks_embedded
    raw = paired.raw_seconds
    texts = len(paired.texts)
    ratio = raw / indexing

    chars = sum(map(len, paired.texts)) / max(1, texts)
    say(f"{label}: {len(files)} notes copied, {notes} indexed, {report.failed} failed, "
        f"{report.skipped} skipped; {chunks} chunks (mean {chars:.0f} chars), "
        f"{len(paired.calls)} embed() calls")
    say(f"  full index (IndexSync.reindex):          {indexing:7.1f} s  {notes / indexing:6.1f} "
        f"notes/s  {chunks / indexing:6.1f} chunks/s")
    say(f"  raw embedding of the same {texts} texts: {raw:7.1f} s  "
        f"{' ' * 14}{texts / raw:6.1f} chunks/s")
    say(f"  ratio index/raw throughput: {ratio:.2f}  (target >= {TARGETS['ratio']})")
    inside = paired.seconds
    lance_s, catalog_s = totals.get("lance", 0.0), totals.get("catalog", 0.0)
    rest = indexing - inside - lance_s - catalog_s
    say(f"  index time split: embedding {inside:.2f} s ({100 * inside / indexing:.1f}%), "
        f"LanceIndex.apply {lance_s:.2f} s (optimize {totals.get('optimize', 0.0):.2f} s), "
        f"Catalog.apply {catalog_s:.2f} s, the rest (scan, read, parse, chunk, plan) "
        f"{rest:.2f} s")
    say(f"  embedding inside the pipeline took {inside / raw:.3f}x the paired raw embedding "
        f"(machine noise); with it at exactly raw speed the ratio would be "
        f"{inside / indexing:.3f} (non-embedding work {indexing - inside:.2f} s)")
    pipeline_costs(app, files)
    return app, files, paired, ratio


def pipeline_costs(app: App, files: Sequence[str]) -> None:
    """The non-embedding work of a full index, timed on its own."""
    root = app.root
    watch = Stopwatch()
    scan_vault(root, app.rules)
    scan = watch.elapsed()
    watch = Stopwatch()
    notes = []
    for path in files:
        with contextlib.suppress(Exception):  # the indexer reports these as failed
            notes.append(read_note(root, path))
    parse = watch.elapsed()
    watch = Stopwatch()
    for note in notes:
        for chunk in chunk_markdown(note.body):
            embedding_text(note.title, chunk)
    chunking = watch.elapsed()
    say(f"  non-embedding work timed alone: scan {scan:.2f} s, read+parse {parse:.2f} s, "
        f"chunking {chunking:.2f} s")


# ---- 2. unchanged re-index -----------------------------------------------------------------


def reindex_unchanged(
    label: str, app: App, embedder: Any, repeats: int, results: Results
) -> None:
    first = app.sync.reindex()
    if first.touched:
        say(f"  warning: the first re-index of {label} still changed {first.touched} notes")
    notes = len(app.catalog.records())
    same = []
    for _ in range(repeats):
        watch = Stopwatch()
        report = app.sync.reindex()
        same.append(watch.elapsed())
        assert report.touched == 0, report
    fresh = []
    for _ in range(max(1, repeats // 2)):
        watch = Stopwatch()
        other = make_app(app.root, app.data_dir, embedder)
        other.sync.reindex()
        fresh.append(watch.elapsed())
        other.close()
    per = p50(same) / notes * 1000
    results.reindex_per_1000[label] = per
    say(f"  unchanged re-index of {label} ({notes} notes): same App p50 {ms(p50(same))} ms "
        f"(min {ms(min(same))}, max {ms(max(same))}) = {per:.2f} s per 1,000 notes; "
        f"new App + reindex p50 {ms(p50(fresh))} ms = "
        f"{p50(fresh) / notes * 1000:.2f} s per 1,000 notes")


# ---- 3. search latency ----------------------------------------------------------------------


def build_synthetic(
    size: int, pool: list[PoolChunk], vectors: np.ndarray, queries: Embedder,
    tmp: Path, memories: int,
) -> Synthetic:
    generator = VaultGenerator(pool, seed=size)
    notes = generator.notes(size, memories, now_utc())
    vault, data = tmp / f"syn{size}-vault", tmp / f"syn{size}-data"
    watch = Stopwatch()
    generator.write(vault, notes)
    written = watch.elapsed()
    embedder = PoolEmbedder(queries, [c.text for c in pool], vectors)
    app = make_app(vault, data, embedder)
    watch = Stopwatch()
    report = app.sync.reindex()
    build = watch.elapsed()
    lance = app.index()
    watch = Stopwatch()
    lance.optimize()
    optimise = watch.elapsed()
    stats = lance.stats()
    say(f"{size} chunks: {len(notes)} notes ({memories} memories) written in {written:.1f} s, "
        f"indexed in {build:.1f} s ({report.chunks_embedded} chunks; vectors: {embedder.exact} "
        f"by chunk, {embedder.nearest} by nearest words), then optimize() {optimise:.2f} s; "
        f"table: {stats['chunks']} chunks, {stats['chunk_fragments']} fragments")
    return Synthetic(size, app, notes, generator, embedder, vault, data)


def search_latency(syn: Synthetic, repeats: int, results: Results) -> None:
    """Search.search end to end, then each step it takes (no filters), timed alone."""
    app, lance = syn.app, syn.app.index()
    now = now_utc()
    search, embedder = app.search, app.embedder
    for query in QUERIES:  # warm-up, excluded
        search.search(query, now, top_k=TOP_K)
    vectors = {q: embedder.embed_query(q) for q in QUERIES}
    candidates = {
        q: {hit.path for hit in [*lance.vector_search(vectors[q], POOL),
                                 *lance.text_search(q, POOL)]}
        for q in QUERIES
    }
    rows = {q: app.catalog.records_for(candidates[q]) for q in QUERIES}
    steps: dict[str, Callable[[str], object]] = {
        "query embedding": embedder.embed_query,
        "vector search": lambda q: lance.vector_search(vectors[q], POOL),
        "text search": lambda q: lance.text_search(q, POOL),
        "candidate rows": lambda q: app.catalog.records_for(candidates[q]),
        "candidate memories": lambda q: search._candidate_memories(rows[q]),
    }
    settle()
    parts: dict[str, list[float]] = {k: [] for k in ("end to end", *steps)}
    for _ in range(repeats):
        for query in QUERIES:
            watch = Stopwatch()
            search.search(query, now, top_k=TOP_K)
            parts["end to end"].append(watch.elapsed())
            for name, step in steps.items():
                watch = Stopwatch()
                step(query)
                parts[name].append(watch.elapsed())
    results.search_p50[syn.size] = p50(parts["end to end"])
    count = len(parts["end to end"])
    memories = sum(1 for q in QUERIES for r in rows[q].values() if r.note_id) / len(QUERIES)
    say(f"  Search.search, {len(QUERIES)} queries x {repeats} ({count} samples, warm-up "
        f"excluded), top_k {TOP_K}, no filters; then each step it takes, timed alone:")
    for name, samples in parts.items():
        say(f"    {name:<18} p50 {ms(p50(samples)):>6} ms   p95 {ms(p95(samples)):>6} ms")
    steps_sum = sum(p50(v) for k, v in parts.items() if k != "end to end")
    say(f"    sum of the step p50s {ms(steps_sum)} ms; the rest of end to end is fusion, "
        f"ranking and decay scores (candidates per query: "
        f"{sum(map(len, candidates.values())) / len(QUERIES):.0f} notes, of which "
        f"{memories:.1f} memories)")


# ---- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="vaultmem engine benchmark (real model, temp dirs)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: small sizes and few repeats")
    parser.add_argument("--sizes", help="search sizes in chunks (default 1000,10000,100000)")
    parser.add_argument("--index-notes", default=None,
                        help="notes of the real vault to index: a number or 'all' (default 400)")
    parser.add_argument("--tasks", action="store_true",
                        help="also index the obsidian-tasks corpus (all notes)")
    parser.add_argument("--churn", type=int, default=None, help="single-note edits (1000)")
    parser.add_argument("--churn-size", type=int, default=None, help="chunks (10000)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="search rounds over the 30 queries (3)")
    parser.add_argument("--memories", type=int, default=50,
                        help="memory notes in each generated vault (50)")
    parser.add_argument("--settle", type=float, default=None,
                        help="before each measurement wait up to this many seconds for the "
                             "machine to be quiet (60; 0 = never wait)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--runtime", choices=("auto", "openvino", "onnx", "torch"), default="auto",
                        help="the runtime that embeds the search queries (default auto, as "
                             "the daemon: ONNX when installed)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.sizes = [int(s) for s in (args.sizes or ("1000,5000" if quick else
                                                  "1000,10000,100000")).split(",") if s]
    if args.index_notes is None:
        args.index_notes = "60" if quick else "400"
    args.churn = args.churn if args.churn is not None else (120 if quick else 1000)
    args.churn_size = args.churn_size or (5000 if quick else 10000)
    args.repeats = args.repeats or (1 if quick else 3)
    args.reindex_repeats = 3 if quick else 7
    args.settle = args.settle if args.settle is not None else (10.0 if quick else 60.0)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    started = Stopwatch()
    say("vaultmem engine benchmark")
    say(f"date: {now_utc():%Y-%m-%d %H:%M} UTC")
    say(f"command: {os.environ.get('BENCH_COMMAND') or ' '.join(sys.argv)}")
    for line in machine_lines():
        say(line)
    results = Results()
    SETTLE[0] = args.settle

    watch = Stopwatch()
    import vaultmem.index.lance  # noqa: F401 - the LanceDB import (~1.5 s) is not measured

    lance_import = watch.elapsed()
    real = SentenceTransformerEmbedder()
    watch = Stopwatch()
    real.embed(["warm-up: the model loads on the first embedding"] * 16)
    CHECKER.append(real)
    say(f"excluded from all figures: LanceDB import {lance_import:.1f} s, model load + first "
        f"batch {watch.elapsed():.1f} s (torch threads: {_torch_threads()})")
    queries = query_embedder(args.runtime)
    say(f"queries embedded as the daemon embeds them: runtime {args.runtime} -> "
        f"{getattr(queries, 'runtime', '?')} (indexing figures: torch, as the index is built "
        "with either runtime's identical vectors)")

    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-") as name:
        tmp = Path(name)
        section("1. index throughput (real model, batch 16, model already loaded)")
        limit = None if args.index_notes == "all" else int(args.index_notes)
        sample_app, files, timing, ratio = index_throughput(
            "vaultofknowledge", CORPUS, limit, real, tmp
        )
        results.throughput_ratio = ratio
        if args.tasks:
            tasks_app, _, _, _ = index_throughput("obsidian-tasks", TASKS_CORPUS, None, real, tmp)
            tasks_app.close()

        # the pool for generated notes: chunks of the sample, with their real vectors
        by_text = {text: vec for texts, vecs, _ in timing.calls for text, vec in zip(
            texts, vecs, strict=True)}
        pool, vectors = real_pool(sample_app.root, files, by_text)

        section("2. re-index of an unchanged vault (IndexSync.reindex, no embedding)")
        reindex_unchanged("the real-model sample", sample_app, timing, args.reindex_repeats,
                          results)
        sample_app.close()
        if not args.quick:
            full_real_vault(tmp, args.reindex_repeats, results)

        section("3. search latency (Search.search end to end, real query embedding)")
        say(f"generated vaults: {len(pool)} real corpus chunks as material; chunk vectors = "
            f"real embedding of the source chunk + N(0, 0.02) per dimension, renormalised")
        keep: Synthetic | None = None
        for size in args.sizes:
            syn = build_synthetic(size, pool, vectors, queries, tmp, args.memories)
            reindex_unchanged(f"{size}-chunk generated vault", syn.app, syn.embedder,
                              args.reindex_repeats, results)
            rounds = args.repeats if size < 50000 else max(1, args.repeats - 1)
            search_latency(syn, rounds, results)
            filtered_search(syn, rounds, results)
            if size == args.churn_size and args.churn:
                keep = syn
            else:
                syn.app.close()
                shutil.rmtree(syn.vault)
                shutil.rmtree(syn.data)

        if args.churn:
            section(f"4. search after {args.churn} single-note updates vs fresh "
                    f"({args.churn_size} chunks)")
            if keep is None:
                keep = build_synthetic(args.churn_size, pool, vectors, queries, tmp,
                                       args.memories)
            churn(keep, args.churn, 2, tmp, results)
            keep.app.close()
        if args.keep:
            kept = Path(tempfile.mkdtemp(prefix="vaultmem-bench-kept-"))
            shutil.copytree(tmp, kept, dirs_exist_ok=True)
            say(f"kept the data in {kept}")

    summary(results, args)
    say(f"\ntotal run time {started.elapsed() / 60:.1f} min; load average at the end "
        f"{load_average()}")


def query_embedder(runtime: str) -> Embedder:
    """The default model on `runtime`, as the daemon makes it (its ONNX file from the usual
    model cache, made there by scripts/setup), loaded."""
    embedder = make_embedder("default", embedder_options(replace(Settings(),
                                                                 embedding_runtime=runtime)))
    embedder.embed_query("warm-up")
    return embedder


def real_pool(
    root: Path, files: Sequence[str], by_text: dict[str, np.ndarray]
) -> tuple[list[PoolChunk], np.ndarray]:
    """Corpus chunks usable as generated sections, each with its real-model vector."""
    pool, vectors = [], []
    for path in files:
        try:
            note = read_note(root, path)
        except Exception:  # failed notes were not indexed
            continue
        for chunk in chunk_markdown(note.body):
            usable = usable_chunk(chunk.heading, chunk.text)
            vector = by_text.get(embedding_text(note.title, chunk))
            if usable is not None and vector is not None:
                pool.append(usable)
                vectors.append(vector)
    return pool, np.vstack(vectors).astype(np.float32)


def full_real_vault(tmp: Path, repeats: int, results: Results) -> None:
    """The whole vaultofknowledge vault, indexed with FakeEmbedder(384): re-index embeds nothing."""
    vault, data = tmp / "full-vault", tmp / "full-data"
    copy_notes(CORPUS, vault, None)
    fake = FakeEmbedder(384)
    app = make_app(vault, data, fake)
    watch = Stopwatch()
    report = app.sync.reindex()
    say(f"whole vaultofknowledge copy indexed with FakeEmbedder(384) in {watch.elapsed():.1f} s "
        f"({report.added} notes, {report.chunks_embedded} chunks)")
    reindex_unchanged("the whole vaultofknowledge vault", app, fake, repeats, results)
    app.close()


def summary(results: Results, args: argparse.Namespace) -> None:
    section("summary (targets)")
    worst = max(CHECKS, default=0.0)
    if worst > 3 * IDLE_CHECK:
        say(f"WARNING: the machine was busy during this run (machine check up to {ms(worst)} ms, "
            f"{worst / IDLE_CHECK:.0f}x idle): absolute latencies are inflated; the ratios, "
            f"measured interleaved, are the reliable figures")

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    ratio = results.throughput_ratio
    if ratio is not None:
        say(f"index/raw embedding throughput ratio {ratio:.2f} (target >= {TARGETS['ratio']}): "
            f"{verdict(ratio >= TARGETS['ratio'])}")
    for label, per in results.reindex_per_1000.items():
        say(f"unchanged re-index, {label}: {per:.2f} s per 1,000 notes (target <= "
            f"{TARGETS['reindex']}): {verdict(per <= TARGETS['reindex'])}")
    for size, value in results.search_p50.items():
        target = _search_target(size)
        note = f"(target <= {ms(target)} ms): {verdict(value <= target)}" if target else ""
        say(f"search p50 at {size} chunks: {ms(value)} ms {note}")
    filtered_summary(results)
    for point, value in results.churn_ratios.items():
        detail = results.churn_detail.get(point, {})
        say(f"search p50 churned/fresh, {point}: {value:.2f} (target <= {TARGETS['churn']}): "
            f"{verdict(value <= TARGETS['churn'])}  [retrieval only "
            f"{detail.get('retrieval', 0):.2f}, text search {detail.get('text search', 0):.2f}]")
    for n, point in sorted(results.policy_points.items()):
        ratio = results.churn_ratios[point]
        cost = results.optimise_cost.get(n)
        costs = f", optimise {ms(cost)} ms = {ms(cost / n)} ms per write" if cost else ""
        mark = " (configured)" if n == results.optimize_every else ""
        say(f"policy optimize_every={n}{mark}: worst-point ratio {ratio:.2f} "
            f"({verdict(ratio <= TARGETS['churn'])}){costs}")


def _search_target(size: int) -> float | None:
    if size == 10000:
        return TARGETS["p50_10k"]
    if size == 100000:
        return TARGETS["p50_100k"]
    return None


def _torch_threads() -> str:
    try:
        import torch

        return str(torch.get_num_threads())
    except ImportError:
        return "?"


if __name__ == "__main__":
    main()
