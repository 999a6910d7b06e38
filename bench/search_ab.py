"""Search latency of this tree against another revision's, query by query on a busy machine.

Run: .venv/bin/python -m bench.search_ab --baseline DIR [--rounds 3] [--data DIR]

DIR is a worktree of the other revision (with a `.venv`, or a link to this one's). The
10k-chunk generated vault of `scripts/bench` section 3 is built once (or reused from --data):
its chunks are real corpus chunks with their real vectors plus noise, as `bench/engine.py`
builds them. Two worker processes, one per tree, each open their own copy of it with the
daemon's query embedder (ONNX when installed) and answer `Search.search` for the 30 bench
queries; the parent asks them in turn, query by query (which goes first swaps each round), so
that the machine's load falls on both alike. Printed: each side's p50 and p95, the difference
of the p50s and their ratio, the median CPU time of a search (all the worker's threads: the
figure a busy machine disturbs least), and whether the two answered the same hits. Both
workers run numpy's BLAS on the calling thread, as the daemon does (daemon/native.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from vaultmem.daemon.native import BLAS_THREADS_ENV

SIZE = 10_000
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # one `now` for both sides: same decay


def build(data: Path) -> None:
    """The generated vault of `scripts/bench` section 3 at SIZE chunks, in `data`."""
    from bench.engine import CORPUS, build_synthetic, index_throughput, query_embedder, real_pool
    from vaultmem.index.embedders import SentenceTransformerEmbedder

    real = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory(prefix="vaultmem-ab-sample-") as name:
        sample, files, timing, _ = index_throughput("vaultofknowledge", CORPUS, 50, real,
                                                    Path(name))
        by_text = {text: vec for texts, vecs, _ in timing.calls
                   for text, vec in zip(texts, vecs, strict=True)}
        pool, vectors = real_pool(sample.root, files, by_text)
        sample.close()
    syn = build_synthetic(SIZE, pool, vectors, query_embedder("auto"), data, 50)
    syn.app.close()


def worker(data: Path) -> None:
    """Answer query numbers on stdin with the seconds the search took and its hits."""
    from bench.engine import query_embedder
    from bench.support import make_app
    from vaultmem_testing.queries import QUERIES

    app = make_app(data / f"syn{SIZE}-vault", data / f"syn{SIZE}-data", query_embedder("auto"))
    app.sync.reindex()
    for query in QUERIES:  # warm-up
        app.search.search(query, NOW, top_k=10)
    print("ready", flush=True)
    for line in sys.stdin:
        query = QUERIES[int(line)]
        started, cpu = time.perf_counter(), time.process_time()
        result = app.search.search(query, NOW, top_k=10)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        hits = [(h.path, h.relevance, h.final, h.review) for h in result.hits]
        print(json.dumps([elapsed, cpu, hits]), flush=True)
    app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, type=Path, help="the other worktree")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the 30 queries")
    parser.add_argument("--data", type=Path, help="keep (or reuse) the generated vault here")
    args = parser.parse_args()
    from bench.support import load_average, machine_lines, now_utc

    print(f"search A/B, {now_utc():%Y-%m-%d %H:%M} UTC; {' '.join(sys.argv)}")
    for line in machine_lines():
        print(line)
    with tempfile.TemporaryDirectory(prefix="vaultmem-ab-") as name:
        data = args.data or Path(name) / "built"
        if not (data / f"syn{SIZE}-data").exists():
            build(data)
        here = Path(__file__).resolve().parents[1]
        trees = {"baseline": args.baseline.resolve(), "this tree": here}
        copies = {}
        for side in trees:  # each side its own copy: neither reads the other's writes
            copies[side] = Path(name) / side.replace(" ", "-")
            shutil.copytree(data, copies[side])
        print(f"load average at start {load_average()}", flush=True)
        times, cpus, same = _run(trees, copies, args.rounds)
    base, this = (statistics.median(times[s]) * 1000 for s in trees)
    for side, values in times.items():
        ordered = sorted(values)
        print(f"{side:>10}: p50 {statistics.median(values) * 1000:.2f} ms, "
              f"p95 {ordered[int(0.95 * (len(ordered) - 1))] * 1000:.2f} ms, "
              f"CPU p50 {statistics.median(cpus[side]) * 1000:.2f} ms")
    print(f"{args.rounds} rounds x 30 queries, interleaved: p50 difference {base - this:.2f} ms, "
          f"ratio {this / base:.3f}; the same hits for every query: {same}; load average at "
          f"the end {load_average()}")


def _run(trees: dict[str, Path], copies: dict[str, Path], rounds: int
         ) -> tuple[dict[str, list[float]], dict[str, list[float]], bool]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    # numpy's BLAS on the calling thread, as the daemon runs it (daemon/native.py quiet_blas)
    env.setdefault(BLAS_THREADS_ENV, "1")
    workers = {
        # this file, run with the tree's venv and the tree first on the import path: its code
        side: subprocess.Popen(
            [str(tree / ".venv" / "bin" / "python"), __file__, "--worker",
             str(copies[side])], cwd=tree, env=dict(env, PYTHONPATH=str(tree)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        for side, tree in trees.items()}
    times: dict[str, list[float]] = {side: [] for side in trees}
    cpus: dict[str, list[float]] = {side: [] for side in trees}
    same = True
    try:
        for proc in workers.values():
            assert proc.stdout is not None
            while proc.stdout.readline().strip() != "ready":
                pass
        sides = list(trees)
        for number in range(rounds):
            order = sides if number % 2 == 0 else sides[::-1]
            for query in range(30):
                answers = {}
                for side in order:
                    proc = workers[side]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{query}\n")
                    proc.stdin.flush()
                    elapsed, cpu, hits = json.loads(proc.stdout.readline())
                    times[side].append(elapsed)
                    cpus[side].append(cpu)
                    answers[side] = hits
                same = same and answers[sides[0]] == answers[sides[1]]
    finally:
        for proc in workers.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
    return times, cpus, same


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]))
    else:
        main()
