"""Measure the index with the real model: embedding throughput, search latency, churn.

Usage: python scripts/bench_index.py [--sizes 1000,10000,100000] [--churn 1000] [--churn-size 10000]

Embeds ~500 real chunks from the vaultofknowledge corpus, then builds indexes of synthetic rows
(the real vectors plus small noise, the real texts) in a temporary directory and times
vector search, full-text search and query embedding, and search after many single-note applies.
This is the index layer alone (LanceIndex, no catalog, no Engine); the engine benchmark that the
acceptance figures come from is scripts/bench (scripts/bench.py), which runs the real code paths.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vaultmem.index.base import ChunkRecord, NoteRecord, chunk_id_for
from vaultmem.index.embedders import SentenceTransformerEmbedder
from vaultmem.index.lance import LanceIndex

CORPUS = Path("/work/shared/corpora/vaultofknowledge/vault")
CHUNKS_PER_NOTE = 5


def split_note(text: str) -> list[str]:
    try:
        from vaultmem.core.chunking import chunk_markdown
    except ImportError:
        return [p.strip() for p in text.split("\n\n") if len(p.strip()) > 40]
    return [chunk.text for chunk in chunk_markdown(text) if len(chunk.text.strip()) > 40]


def strip_frontmatter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


def corpus_chunks(limit: int, seed: int = 7) -> list[str]:
    files = sorted(CORPUS.rglob("*.md"))
    np.random.default_rng(seed).shuffle(files)
    chunks: list[str] = []
    for path in files:
        body = strip_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        chunks.extend(split_note(body)[:4])
        if len(chunks) >= limit:
            break
    return chunks[:limit]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def timed(action: Callable[[], object], repeats: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def record_for(path: str, chunk_count: int) -> NoteRecord:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    return NoteRecord(
        path, "f", "b", title, ("bench",), (), (), "", "indexed", "", 0, 0, chunk_count
    )


def synthetic_notes(
    size: int, texts: list[str], vectors: np.ndarray, rng: np.random.Generator, salt: str = ""
) -> list[tuple[NoteRecord, list[ChunkRecord]]]:
    picks = np.arange(size) % len(texts)
    noisy = vectors[picks] + rng.normal(0, 0.02, (size, vectors.shape[1])).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    notes = []
    for start in range(0, size, CHUNKS_PER_NOTE):
        path = f"bench/{salt}{start // CHUNKS_PER_NOTE:06}.md"
        rows = range(start, min(size, start + CHUNKS_PER_NOTE))
        chunks = [
            ChunkRecord(chunk_id_for(path, i), path, i, "", texts[picks[row]], noisy[row])
            for i, row in enumerate(rows)
        ]
        notes.append((record_for(path, len(chunks)), chunks))
    return notes


def search_latency(
    index: LanceIndex, queries: list[str], query_vectors: np.ndarray, repeats: int = 3
) -> dict[str, tuple[float, float]]:
    vec, txt, both = [], [], []
    for _ in range(repeats):
        for query, vector in zip(queries, query_vectors, strict=True):
            t0 = time.perf_counter()
            index.vector_search(vector, 20)
            t1 = time.perf_counter()
            index.text_search(query, 20)
            t2 = time.perf_counter()
            vec.append(t1 - t0)
            txt.append(t2 - t1)
            both.append(t2 - t0)
    return {"vector": percentiles(vec), "text": percentiles(txt), "vector+text": percentiles(both)}


def show(label: str, figures: dict[str, tuple[float, float]]) -> None:
    parts = [f"{name} p50 {p50:.1f} ms / p95 {p95:.1f} ms" for name, (p50, p95) in figures.items()]
    print(f"  {label}: " + "; ".join(parts))


def bench_size(
    size: int,
    texts: list[str],
    vectors: np.ndarray,
    queries: list[str],
    qvecs: np.ndarray,
    name: str,
    root: Path,
) -> None:
    rng = np.random.default_rng(size)
    notes = synthetic_notes(size, texts, vectors, rng)
    index = LanceIndex(root / f"idx{size}", name)
    t0 = time.perf_counter()
    index.apply(upserts=notes)
    t1 = time.perf_counter()
    index.ensure_fts_index()
    t2 = time.perf_counter()
    index.vector_search(qvecs[0], 1)
    t3 = time.perf_counter()
    print(
        f"{size} chunks: bulk apply {t1 - t0:.2f} s, FTS index {t2 - t1:.2f} s, "
        f"vector matrix load {t3 - t2:.2f} s"
    )
    show("search (excl. query embedding)", search_latency(index, queries, qvecs))
    filtered = {note.path for note, _ in notes[: max(1, len(notes) // 10)]}
    show(
        "with paths filter (10% of notes)",
        {
            "vector": timed(lambda: index.vector_search(qvecs[1], 20, paths=filtered), 20),
            "text": timed(lambda: index.text_search(queries[1], 20, paths=filtered), 20),
        },
    )
    show(
        "related + note_vectors",
        {
            "related": timed(lambda: index.related(notes[0][0].path, 10), 20),
            "note_records": timed(index.note_records, 5),
        },
    )
    index.close()


def interleaved(
    fresh: LanceIndex, churned: LanceIndex, queries: list[str], qvecs: np.ndarray, repeats: int = 3
) -> dict[str, dict[str, tuple[float, float]]]:
    """Latency of both indexes, query by query in turn, so machine load affects both alike."""
    samples: dict[str, dict[str, list[float]]] = {
        kind: {"fresh": [], "churned": []} for kind in ("vector", "text")
    }
    for _ in range(repeats):
        for query, vector in zip(queries, qvecs, strict=True):
            for label, index in (("fresh", fresh), ("churned", churned)):
                t0 = time.perf_counter()
                index.vector_search(vector, 20)
                t1 = time.perf_counter()
                index.text_search(query, 20)
                t2 = time.perf_counter()
                samples["vector"][label].append(t1 - t0)
                samples["text"][label].append(t2 - t1)
    return {
        kind: {label: percentiles(values) for label, values in by_label.items()}
        for kind, by_label in samples.items()
    }


def show_ratio(label: str, figures: dict[str, dict[str, tuple[float, float]]]) -> None:
    print(f"  {label}:")
    for kind, by_label in figures.items():
        (f50, f95), (c50, c95) = by_label["fresh"], by_label["churned"]
        print(
            f"    {kind}: fresh p50 {f50:.1f} / p95 {f95:.1f} ms, churned p50 {c50:.1f} / "
            f"p95 {c95:.1f} ms, p50 ratio {c50 / f50:.2f}"
        )


def bench_churn(
    size: int,
    applies: int,
    texts: list[str],
    vectors: np.ndarray,
    queries: list[str],
    qvecs: np.ndarray,
    name: str,
    root: Path,
) -> None:
    rng = np.random.default_rng(99)
    notes = synthetic_notes(size, texts, vectors, rng)
    fresh = LanceIndex(root / f"fresh{size}", name)
    index = LanceIndex(root / f"churn{size}", name)
    for idx in (fresh, index):
        idx.apply(upserts=notes)
        idx.optimize()
        idx.vector_search(qvecs[0], 1)
    apply_times: list[float] = []
    optimize_times: list[float] = []

    def churn(count: int) -> None:
        for _ in range(count):
            record, _ = notes[int(rng.integers(len(notes)))]
            replacement = synthetic_notes(CHUNKS_PER_NOTE, texts, vectors, rng)[0][1]
            chunks = [
                ChunkRecord(
                    chunk_id_for(record.path, c.index), record.path, c.index, "", c.text, c.vector
                )
                for c in replacement
            ]
            start = time.perf_counter()
            index.apply(upserts=[(record, chunks)])
            elapsed = time.perf_counter() - start
            optimised = index.stats()["writes_since_optimize"] == 0
            (optimize_times if optimised else apply_times).append(elapsed)

    churn(applies)
    print(
        f"churn: {applies} single-note applies on {size} chunks "
        f"(optimize_every={index.optimize_every})"
    )
    ap50, ap95 = percentiles(apply_times)
    print(
        f"  apply p50 {ap50:.1f} ms / p95 {ap95:.1f} ms; applies that optimised: "
        f"{len(optimize_times)}, median {statistics.median(optimize_times or [0]):.2f} s"
    )
    stats = index.stats()
    show_ratio(
        f"after {applies} applies ({stats['writes_since_optimize']} since optimise)",
        interleaved(fresh, index, queries, qvecs),
    )
    print(f"  stats: {stats}")
    churn(max(0, index.optimize_every - 1 - stats["writes_since_optimize"]))
    show_ratio(
        f"worst point of the cycle ({index.stats()['writes_since_optimize']} since optimise)",
        interleaved(fresh, index, queries, qvecs),
    )
    fresh.close()
    index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--churn", type=int, default=1000)
    parser.add_argument("--churn-size", type=int, default=10000)
    args = parser.parse_args()

    texts = corpus_chunks(args.chunks)
    print(f"{len(texts)} corpus chunks, mean {statistics.mean(map(len, texts)):.0f} chars")
    embedder = SentenceTransformerEmbedder()
    t0 = time.perf_counter()
    embedder.embed(["warm up"])
    print(f"model load + first embedding: {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    elapsed = time.perf_counter() - t0
    print(f"embedding throughput: {len(texts) / elapsed:.1f} chunks/s ({elapsed:.1f} s, batch 16)")

    queries = [" ".join(text.split()[:6]) for text in texts[::10]][:50]
    cycle = iter(queries * 2)
    q50, q95 = timed(lambda: embedder.embed_query(next(cycle)), 50)
    print(f"query embedding alone: p50 {q50:.1f} ms / p95 {q95:.1f} ms")
    qvecs = embedder.embed(queries)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for size in (int(s) for s in args.sizes.split(",") if s):
            bench_size(size, texts, vectors, queries, qvecs, embedder.name, root)
        if args.churn:
            bench_churn(
                args.churn_size, args.churn, texts, vectors, queries, qvecs, embedder.name, root
            )


if __name__ == "__main__":
    main()
