"""RSS of the chunk index under single-note edits, in one process (no daemon, no model).

Run: .venv/bin/python -m bench.lance_rss [--edits 1000] [--metadata-cache-mb 16]
[--index-cache-mb 32] [--keep-versions-s 300]. A LanceIndex of 10,000 random 384-d chunks
(2,000 notes of 5), then `--edits` upserts of a random note (3 chunks each), a full-text search
every 10 edits and glibc's heap trimmed as the daemon does (vaultmem.daemon.native), LanceDB
optimised by the default upkeep policy. Prints RSS and LanceDB's cache bytes every quarter: what
grows per edit without a model, a watcher or a socket. Each quarter and at the end it also times
the LanceDB reads a search and an edit make (`--searches` full-text searches of varied words;
`stored_chunks` of one note, the edit path's read), so a smaller cache's cost shows beside its
memory.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from vaultmem.daemon.native import tune_malloc
from vaultmem.index import lance
from vaultmem.index.base import ChunkRecord, IndexOptions, NoteRecord
from vaultmem.index.libc import trim_heap

DIM = 384


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def record(path: str, chunks: int) -> NoteRecord:
    return NoteRecord(path=path, file_hash="f", body_hash="b", title=path, tags=(), aliases=(),
                      links=(), note_id="", status="indexed", reason="", mtime_ns=0, size=0,
                      chunk_count=chunks)


def chunks(rng: np.random.Generator, path: str, count: int) -> list[ChunkRecord]:
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [ChunkRecord(chunk_id=f"{path}#{i}", path=path, index=i, heading="h",
                        text=f"words of {path} part {i} " * 30, vector=vectors[i])
            for i in range(count)]


WORDS = ("words", "part", "of", "n17.md", "words part", "n3.md part", "of words n5.md")


def timed_reads(index: lance.LanceIndex, rng: np.random.Generator, count: int) -> str:
    """p50 of `count` full-text searches and of `count` one-note chunk reads, in ms."""
    fts, reads = [], []
    for i in range(count):
        started = time.perf_counter()
        index.text_search(WORDS[i % len(WORDS)], 10)
        fts.append(time.perf_counter() - started)
        started = time.perf_counter()
        index.stored_chunks([f"n{rng.integers(2000)}.md"])
        reads.append(time.perf_counter() - started)
    return (f"full-text search p50 {np.median(fts) * 1000:.1f} ms, one note's chunks read p50 "
            f"{np.median(reads) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--metadata-cache-mb", type=int, default=16)
    parser.add_argument("--index-cache-mb", type=int, default=32)
    parser.add_argument("--keep-versions-s", type=float, default=300.0)
    parser.add_argument("--searches", type=int, default=50,
                        help="timed full-text searches and chunk reads each quarter")
    args = parser.parse_args()
    tune_malloc()
    lance.KEEP_OLD_VERSIONS = timedelta(seconds=args.keep_versions_s)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-lance-rss-") as tmp:
        index = lance.LanceIndex(Path(tmp), "bench", IndexOptions(
            optimize_every=50, index_cache_mb=args.index_cache_mb,
            metadata_cache_mb=args.metadata_cache_mb), clock=datetime.now)
        for start in range(0, 2000, 200):
            index.apply(upserts=[(record(f"n{n}.md", 5), chunks(rng, f"n{n}.md", 5))
                                 for n in range(start, start + 200)])
        index.optimize()
        index.text_search("words", 5)
        gc.collect()
        trim_heap()
        print(f"caches: metadata {args.metadata_cache_mb} MB, index {args.index_cache_mb} MB; "
              f"old versions kept {args.keep_versions_s:g} s")
        print(f"start: RSS {rss_mb():.0f} MB; {timed_reads(index, rng, args.searches)}",
              flush=True)
        started = time.perf_counter()
        for edit in range(1, args.edits + 1):
            path = f"n{rng.integers(2000)}.md"
            index.apply(upserts=[(record(path, 3), chunks(rng, path, 3))])
            if edit % 10 == 0:
                index.text_search("words", 5)
                trim_heap()
            if edit % max(args.edits // 4, 1) == 0:
                gc.collect()
                trim_heap()
                stats = index.stats()
                print(f"{edit} edits: RSS {rss_mb():.0f} MB, LanceDB cache "
                      f"{stats['cache_bytes'] / 2**20:.1f} MB, version {stats['chunk_version']}, "
                      f"{time.perf_counter() - started:.0f} s; "
                      f"{timed_reads(index, rng, args.searches)}", flush=True)
        index.close()


if __name__ == "__main__":
    main()
