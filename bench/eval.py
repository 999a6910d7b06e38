"""vaultmem retrieval evaluation: vaultmem's search beside simple baselines, in one run.

Run it through `scripts/eval` (offline, the project's virtualenv, the real model). Three judged
sets (see bench/eval_sets.py):

* locomo: LoCoMo conversations (3 of them; categories 1-4) written in every layout of
  eval_sets.LAYOUTS (turn notes named with dates and order, without them, in a folder per
  session; one note per session), a folder per conversation used as the search filter;
  recall of the evidence turns (of the evidence sessions in the session layout), R@1, MRR,
  R@5, R@10. Every figure is leave-one-conversation-out (bench/eval_folds.py): per fold, then
  the mean over the folds and their spread. The summary sets the layouts side by side.
* vault: the judged query set in tests/data/retrieval/vaultofknowledge.json over the real
  vaultofknowledge vault; nDCG@5, R@1, MRR, R@10 per query kind; its test split is held out.
* tldr: the judged multilingual questions over the tldr pages of eight languages, each with
  both bundled models (bench/eval_tldr.py); English is a further unseen check of the ranking.

vaultmem is measured through the path users hit: `build_app` → `IndexSync.reindex` →
`Search.search` (the daemon's search operation calls the same method). Embeddings are cached
on disk between runs (bench/eval_support.py), so a re-run after a ranking change takes
seconds; the cache holds only the real model's vectors of the same texts. The ablation of the
ranking's rules runs on captured retrievals (bench/eval_ablation.py).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench import eval_folds as folds
from bench.eval_baselines import BM25, METRICS, dense_scores, fusion, top
from bench.eval_sets import (
    LAYOUTS,
    SESSION_LAYOUT,
    TLDR_LANGUAGES,
    Query,
    RetrievalSet,
    build_locomo,
    load_vok,
    read_notes,
)
from bench.eval_support import CachedEmbedder, embedding_note, mean, table
from bench.eval_tldr import per_query_rows, run_language
from bench.eval_tldr import report as report_tldr
from bench.support import machine_lines, make_app
from vaultmem.app import App
from vaultmem.config import Settings
from vaultmem.core.ranking import MATCH_THRESHOLD
from vaultmem.engine.filters import SearchFilters
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
K = 10
Ranker = Callable[[Query], list[str]]


def say(line: str = "") -> None:
    print(line, flush=True)


# ---- systems ------------------------------------------------------------------------------


def vaultmem_ranker(app: App, latencies: list[float]) -> Ranker:
    def rank(query: Query) -> list[str]:
        filters = SearchFilters(folder=query.folder) if query.folder else SearchFilters()
        start = time.perf_counter()
        found = app.search.search(query.text, NOW, top_k=K, filters=filters,
                                  include_review=False)
        latencies.append(time.perf_counter() - start)
        return [hit.path for hit in found.hits]
    return rank


def baseline_rankers(app: App, data: RetrievalSet, embedder: CachedEmbedder) -> dict[str, Ranker]:
    notes = data.notes
    bm25 = BM25(notes)
    paths = list(notes)
    note_vectors = dict(zip(paths, embedder.embed([notes[p] for p in paths]), strict=True))
    folders: dict[str | None, list[str]] = {}

    def scope(query: Query) -> list[str]:
        if query.folder not in folders:
            prefix = f"{query.folder}/" if query.folder else ""
            folders[query.folder] = [p for p in paths if p.startswith(prefix)]
        return folders[query.folder]

    def lexical(query: Query) -> dict[str, float]:
        return bm25.scores(query.text, scope(query))

    def dense(query: Query) -> dict[str, float]:
        return dense_scores(embedder.embed_query(query.text), note_vectors, scope(query))

    def dense_chunk(query: Query) -> list[str]:
        wanted = set(scope(query))
        hits = app.index().vector_search(embedder.embed_query(query.text), 400, paths=wanted)
        best: dict[str, float] = {}
        for hit in hits:
            best[hit.path] = max(best.get(hit.path, -1.0), hit.score)
        return top(best, K)

    return {
        "bm25 (notes)": lambda q: top(lexical(q), K),
        "dense (notes)": lambda q: top(dense(q), K),
        "dense (chunks, max)": dense_chunk,
        "fusion 0.5/0.5 min-max": lambda q: top(fusion(lexical(q), dense(q)), K),
    }


# ---- running and reporting ----------------------------------------------------------------


def evaluate(rankers: dict[str, Ranker], queries: Sequence[Query]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for name, rank in rankers.items():
        rows = []
        for query in queries:
            ranking = rank(query)
            scores = {m: f(ranking, query.relevant) for m, f in METRICS.items()}
            rows.append({"id": query.id, "ranking": ranking, **scores})
        out[name] = rows
    return out


def report(data: RetrievalSet, results: dict[str, list[dict]], metrics: Sequence[str],
           group_metric: str, groups: Sequence[str]) -> None:
    by_id = {q.id: q for q in data.queries}
    for split in ("dev", "held-out", "all"):
        chosen = [q.id for q in data.queries if split == "all" or q.split == split]
        if not chosen:
            continue
        counts = {g: sum(1 for i in chosen if by_id[i].group == g) for g in groups}
        title = f"{data.name} [{data.layout}]" if data.layout else data.name
        say(f"\n{title} — {split}: {len(chosen)} queries "
            f"({', '.join(f'{g} {n}' for g, n in counts.items() if n)})")
        rows = []
        for name, per_query in results.items():
            wanted = [r for r in per_query if r["id"] in set(chosen)]
            values = {m: mean(r[m] for r in wanted) for m in metrics}
            for group in groups:
                members = [r for r in wanted if by_id[r["id"]].group == group]
                if members:
                    values[f"{group_metric} {group}"] = mean(r[group_metric] for r in members)
            rows.append((name, values))
        columns = list(metrics) + [f"{group_metric} {g}" for g in groups if counts[g]]
        scale, digits = (100.0, 1) if data.name == "locomo" else (1.0, 3)
        for line in table(rows, columns, scale=scale, digits=digits):
            say("  " + line)


def write_per_query(path: Path, data: RetrievalSet, results: dict[str, list[dict]]) -> None:
    by_id = {q.id: q for q in data.queries}
    with path.open("a", encoding="utf-8") as out:
        for name, rows in results.items():
            for row in rows:
                query = by_id[row["id"]]
                out.write(json.dumps({
                    "set": data.name, "layout": data.layout, "system": name, "query": query.text,
                    "group": query.group,
                    "split": query.split, "relevant": query.relevant, **row,
                }) + "\n")


def run_set(data: RetrievalSet, embedder: CachedEmbedder, work: Path,
            args: argparse.Namespace) -> dict[str, list[dict]]:
    started = time.perf_counter()
    app = make_app(data.vault, work / f"{data.name}-{data.layout}-data", embedder,
                   **chunking(args))
    try:
        before = (embedder.misses, embedder.hits, embedder.seconds)
        sync = app.sync.reindex()
        app.index().optimize()  # as the daemon does after an indexing run (Occasion.INDEXED)
        say(f"\n== {data.name}{f' [{data.layout}]' if data.layout else ''}: {sync.added} notes "
            f"indexed in {time.perf_counter() - started:.1f} s, "
            f"{app.index().stats()['chunks']} chunks ({embedding_note(embedder, before)})")
        say(f"   metric: {data.metric_note}")
        if data.missing_evidence:
            say(f"   {data.missing_evidence} evidence ids name no turn and are left out")
        latencies: list[float] = []
        rankers: dict[str, Ranker] = {"vaultmem": vaultmem_ranker(app, latencies)}
        if not args.no_baselines:
            rankers.update(baseline_rankers(app, data, embedder))
        results = evaluate(rankers, data.queries)
        if latencies:
            ordered = sorted(latencies)
            say(f"   vaultmem search: p50 {ordered[len(ordered) // 2] * 1000:.1f} ms "
                f"over {len(ordered)} queries (embedding included)")
        return results
    finally:
        app.close()
        embedder.save()


def chunking(args: argparse.Namespace) -> dict[str, int]:
    """The chunk sizes to index with (settings overrides; none: the defaults)."""
    sizes = {"chunk_max_chars": args.chunk_max_chars, "chunk_min_chars": args.chunk_min_chars}
    return {name: value for name, value in sizes.items() if value is not None}


def run_tldr(args: argparse.Namespace, settings: Settings, work: Path) -> None:
    """The multilingual set: every language with both bundled models (bench/eval_tldr.py)."""
    embedders = {}
    for model in ("english", "multilingual"):
        real = make_embedder(model, embedder_options(settings))
        embedders[model] = CachedEmbedder(real, args.cache / getattr(real, "runtime", "other"))
    say("\n== tldr multilingual: the same judged questions in each language's own words over "
        "that language's pages")
    results = {}
    for language in args.language or TLDR_LANGUAGES:
        results[language] = run_language(language, embedders, work, NOW, say, **chunking(args))
        if args.per_query:
            with args.per_query.open("a", encoding="utf-8") as out:
                for row in per_query_rows(language, results[language]):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    report_tldr(results, MATCH_THRESHOLD, say)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--set", choices=("locomo", "vault", "tldr", "all"), default="all")
    parser.add_argument("--language", action="append", choices=TLDR_LANGUAGES,
                        help="tldr: the language(s) to run (default: all eight)")
    parser.add_argument("--split", choices=("dev", "held-out", "all"), default="all",
                        help="the vault set: which queries to run (reports show dev and "
                             "held-out apart; LoCoMo reports every conversation as a fold)")
    parser.add_argument("--no-baselines", action="store_true", help="vaultmem only")
    parser.add_argument("--per-query", type=Path, help="write every query's rankings (JSONL)")
    parser.add_argument("--cache", type=Path, default=Path("bench-out/eval-cache"),
                        help="embedding cache folder (default: bench-out/eval-cache)")
    parser.add_argument("--layout", action="append", choices=LAYOUTS,
                        help="LoCoMo layout(s) to build (default: every layout)")
    parser.add_argument("--runtime", choices=("auto", "openvino", "onnx", "torch"), default="auto",
                        help="the model runtime (embedding_runtime); its vectors are cached "
                        "apart, in a sub-folder of --cache")
    parser.add_argument("--model", choices=("english", "multilingual"), default="english",
                        help="the bundled model to embed with (embedding_model)")
    parser.add_argument("--chunk-max-chars", type=int, metavar="N",
                        help="index with this chunk_max_chars (default: the setting's default)")
    parser.add_argument("--chunk-min-chars", type=int, metavar="N",
                        help="index with this chunk_min_chars (default: the setting's default)")
    args = parser.parse_args(argv)
    layouts = args.layout or list(LAYOUTS)

    say(f"vaultmem retrieval evaluation — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    for line in machine_lines():
        say(line)
    settings = replace(Settings(), embedding_runtime=args.runtime)
    real = make_embedder(args.model, embedder_options(settings))
    say(f"model: {real.name} (--model {args.model})")
    say(f"model runtime: {getattr(real, 'runtime', '?')} (--runtime {args.runtime})")
    sizes = {"chunk_max_chars": settings.chunk_max_chars,
             "chunk_min_chars": settings.chunk_min_chars, **chunking(args)}
    say("chunks: " + ", ".join(f"{name} {value}" for name, value in sizes.items()))
    embedder = CachedEmbedder(real, args.cache / getattr(real, "runtime", "other"))
    if args.per_query:
        args.per_query.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="vaultmem-eval-") as tmp:
        work = Path(tmp)
        if args.set in ("locomo", "all"):
            figures = {}
            for layout in layouts:
                data = build_locomo(work / f"locomo-{layout}", layout=layout)
                results = run_set(data, embedder, work, args)
                metrics = (("R@1", "MRR", "R@3", "R@5") if layout == SESSION_LAYOUT
                           else ("R@1", "MRR", "R@5", "R@10"))
                folds.report(data, results, metrics, say)
                figures[layout] = folds.fold_figures(data, results, metrics)
                if args.per_query:
                    write_per_query(args.per_query, data, results)
            folds.summarize(figures, say)
        if args.set in ("tldr", "all"):
            run_tldr(args, settings, work)
        if args.set in ("vault", "all"):
            data = load_vok()
            data.queries = [q for q in data.queries if args.split in ("all", q.split)]
            data.notes = read_notes(data.vault)
            results = run_set(data, embedder, work, args)
            kinds = sorted({q.group for q in data.queries})
            report(data, results, ("nDCG@5", "R@1", "MRR", "R@10"), "nDCG@5", kinds)
            if args.per_query:
                write_per_query(args.per_query, data, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
