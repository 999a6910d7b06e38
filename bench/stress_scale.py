"""How vaultmem grows with the vault: a real daemon indexes synthetic vaults of several sizes.

Usage:
    scripts/stress scale                    # 1k, 10k and 100k notes
    scripts/stress scale --sizes 1000,10000 --real-model-sizes 1000

For each size a synthetic vault (vaultmem_testing/synthetic.py, seeded) is written to a temporary
directory and `vaultmem run` indexes it with the fake embedder (no model, deterministic). It
prints: the full index time (process start to status "indexing done"), a re-index of the
unchanged vault (POST /v1/reindex, and a restart until indexing is done again), the data dir
size, the daemon's RSS after indexing, search p50/p95 over HTTP for a fixed query list, and the
growth factor between sizes. Search with the fake embedder leaves out the query embedding that
the real model adds. `--real-model-sizes` also indexes those sizes with the real model, and the
real-model index time of the other sizes is extrapolated from its chunks per second.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.support import load_average, machine_lines
from vaultmem.api.client import Client
from vaultmem.errors import VaultmemError
from vaultmem_testing.daemon import FAST_TEST_SETTINGS, REAL_MODEL, DaemonProcess
from vaultmem_testing.measure import dir_bytes, percentile, rss_mb, say
from vaultmem_testing.queries import QUERIES
from vaultmem_testing.synthetic import NoteWriter, generate_vault


@dataclass
class SizeResult:
    notes: int
    model: str
    chunks: int = 0
    generate_s: float = 0.0
    index_s: float = 0.0
    reindex_s: float = 0.0
    restart_s: float = 0.0
    data_bytes: int = 0
    rss_mb: float = 0.0
    search_p50_ms: float = 0.0
    search_p95_ms: float = 0.0
    load: str = ""
    failure: str = ""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated note counts (default 1000,10000,100000)")
    parser.add_argument("--real-model-sizes", default="",
                        help="sizes also indexed with the real model, e.g. 1000 (slow: "
                             "~10 chunks/s on a 2-core machine)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="times each of the 30 fixed queries is searched (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the vaults and data dirs go (default: a temp dir, removed "
                             "at the end unless --keep)")
    parser.add_argument("--keep", action="store_true", help="keep the vaults and data dirs")
    return parser.parse_args(argv)


def sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def measure(work: Path, notes: int, seed: int, real_model: bool, repeat: int) -> SizeResult:
    result = SizeResult(notes, "real" if real_model else "fake", load=load_average())
    vault, data = work / f"vault-{notes}", work / f"data-{notes}-{result.model}"
    if not vault.exists():
        started = time.perf_counter()
        generate_vault(vault, notes, writer=NoteWriter(seed))
        result.generate_s = time.perf_counter() - started
        say(f"  generated {notes} notes in {result.generate_s:.1f} s")
    settings = {**FAST_TEST_SETTINGS, **REAL_MODEL} if real_model else FAST_TEST_SETTINGS
    daemon = DaemonProcess(vault, data, settings=settings, output=work / f"daemon-{notes}.log")
    budget = max(900.0, notes * (3.0 if real_model else 0.05))
    try:
        started = time.perf_counter()
        client = daemon.start(timeout=budget)
        result.index_s = time.perf_counter() - started
        assert daemon.proc is not None
        result.rss_mb = rss_mb(daemon.proc.pid)
        status = daemon.status()
        result.chunks = int(status["coverage"]["chunks"])
        indexed = int(status["coverage"]["indexed"])
        say(f"  indexed {indexed} notes, {result.chunks} chunks in {result.index_s:.1f} s; "
            f"RSS {result.rss_mb:.0f} MB")
        if indexed != notes:
            result.failure = f"indexed {indexed} of {notes} notes"
        result.data_bytes = dir_bytes(data)
        started = time.perf_counter()
        client.call("POST", "/v1/reindex", {})
        result.reindex_s = time.perf_counter() - started
        latencies = searches(client, repeat)
        result.search_p50_ms = percentile(latencies, 50) * 1000
        result.search_p95_ms = percentile(latencies, 95) * 1000
        daemon.stop()
        started = time.perf_counter()
        daemon.start(timeout=budget)
        result.restart_s = time.perf_counter() - started
    except (TimeoutError, RuntimeError, VaultmemError, OSError) as exc:
        result.failure = f"{type(exc).__name__}: {exc}"
        say(f"  FAILED: {result.failure}")
    finally:
        daemon.stop()
    return result


def searches(client: Client, repeat: int) -> list[float]:
    call = client.call
    for query in QUERIES[:3]:  # warm-up, not counted
        call("POST", "/v1/search", {"query": query})
    latencies = []
    for _ in range(repeat):
        for query in QUERIES:
            started = time.perf_counter()
            call("POST", "/v1/search", {"query": query})
            latencies.append(time.perf_counter() - started)
    return latencies


def table(results: Sequence[SizeResult]) -> None:
    say("| notes | embedder | chunks | full index | re-index (unchanged) | restart to ready | "
        "data dir | RSS after indexing | search p50 | search p95 | load avg |")
    say("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        if r.failure and not r.index_s:
            say(f"| {r.notes:,} | {r.model} | failed: {r.failure} ||||||||")
            continue
        say(f"| {r.notes:,} | {r.model} | {r.chunks:,} | {r.index_s:.1f} s | "
            f"{r.reindex_s:.2f} s | {r.restart_s:.1f} s | {r.data_bytes / 1e6:.1f} MB | "
            f"{r.rss_mb:.0f} MB | {r.search_p50_ms:.1f} ms | {r.search_p95_ms:.1f} ms | "
            f"{r.load} |")


def growth(results: Sequence[SizeResult]) -> None:
    fake = [r for r in results if r.model == "fake" and not r.failure]
    if len(fake) < 2:
        return
    say("\nGrowth factor from one size to the next (fake embedder):\n")
    say("| from → to | notes | full index | re-index | data dir | RSS | search p50 |")
    say("|---|---:|---:|---:|---:|---:|---:|")
    for a, b in itertools.pairwise(fake):
        say(f"| {a.notes:,} → {b.notes:,} | ×{b.notes / a.notes:.1f} | "
            f"×{b.index_s / a.index_s:.1f} | ×{b.reindex_s / a.reindex_s:.1f} | "
            f"×{b.data_bytes / a.data_bytes:.1f} | ×{b.rss_mb / a.rss_mb:.2f} | "
            f"×{b.search_p50_ms / a.search_p50_ms:.2f} |")


def extrapolate(results: Sequence[SizeResult]) -> None:
    real = [r for r in results if r.model == "real" and not r.failure]
    if not real:
        return
    base = real[-1]
    rate = base.chunks / base.index_s
    say(f"\nReal-model full index: measured at {base.notes:,} notes ({base.chunks:,} chunks in "
        f"{base.index_s:.0f} s = {rate:.1f} chunks/s); larger sizes are EXTRAPOLATED from "
        "that rate and the fake run's chunk count, not measured:\n")
    say("| notes | chunks | real-model full index | how |")
    say("|---:|---:|---:|---|")
    say(f"| {base.notes:,} | {base.chunks:,} | {base.index_s / 60:.1f} min | measured |")
    for r in results:
        if r.model == "fake" and r.chunks and r.notes != base.notes:
            hours = r.chunks / rate / 3600
            say(f"| {r.notes:,} | {r.chunks:,} | ~{hours:.1f} h | extrapolated |")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    say(f"stress_scale {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; command: "
        f"{' '.join(['scripts/stress scale', *sys.argv[1:]])}")
    for line in machine_lines():
        say(line)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="vaultmem-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results: list[SizeResult] = []
    try:
        for notes in sizes(args.sizes):
            say(f"\n== {notes:,} notes, fake embedder [load average {load_average()}]")
            results.append(measure(work, notes, args.seed, False, args.repeat))
            if notes in sizes(args.real_model_sizes):
                say(f"== {notes:,} notes, real model [load average {load_average()}]")
                results.append(measure(work, notes, args.seed, True, args.repeat))
            if not args.keep:
                for name in (f"vault-{notes}", f"data-{notes}-fake", f"data-{notes}-real"):
                    shutil.rmtree(work / name, ignore_errors=True)
    finally:
        if not args.keep and args.workdir is None:  # never delete a directory we were given
            shutil.rmtree(work, ignore_errors=True)
    say("\n")
    table(results)
    growth(results)
    extrapolate(results)
    say(f"\nload average at the end: {load_average()}")
    return 1 if any(r.failure for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
