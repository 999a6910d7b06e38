"""vaultmem touch benchmark: the cost of a use, from the touch over HTTP to the note written.

Run: scripts/bench touch [--baseline REV] [--rounds N] [--notes N] [--touches N]

Each round starts a real `python -m vaultmem run` daemon on a fresh copy of a generated vault
(the fake embedder: a touch embeds nothing, so the model would only slow the set-up) and:

1. touches memories over HTTP one after another (`--touches`, spread over 100 memories):
   p50 / p95 latency of a touch;
2. waits for the usage flush (every 2 s) to write them into their notes: the flush job's own
   duration, summed over the runs that wrote this burst, is the flush cost;
3. counts the LanceDB table versions the touches and the flush created (every LanceDB write
   makes one; a use changes only `stm_*` lines, so it should make none).

With `--baseline REV`, the same rounds run on a checkout of REV (a git worktree in a temporary
directory), alternating with this checkout, so both sets of figures come from the same run on
the same, equally busy machine. Figures are medians over rounds.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.support import load_average, machine_lines, now_utc
from vaultmem_testing.daemon import REPO, DaemonProcess, wait_until
from vaultmem_testing.synthetic import generate_vault

FLUSH_EVERY_S = 2.0
DISTINCT = 100


@dataclass
class Round:
    touch_ms: list[float]
    flush_s: float
    flushes: int
    lance_writes: int


def lance_versions(data: Path) -> int:
    """Table versions stored in the index (one manifest per LanceDB write)."""
    return sum(1 for _ in (data / "lance").glob("*.lance/_versions/*.manifest"))


def flush_runs(status: dict[str, Any]) -> tuple[int, float]:
    job = next(j for j in status["daemon"]["jobs"] if j["name"] == "flush")
    return int(job["runs"]), float(job["last_duration_s"] or 0.0)


def one_round(source: Path, vault: Path, work: Path, memory_ids: list[str],
              touches: int, seed: int) -> Round:
    copy, data = work / "vault", work / "data"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(vault, copy)
    daemon = DaemonProcess(copy, data, source=source,
                           VAULTMEM_FLUSH_INTERVAL_SECONDS=str(FLUSH_EVERY_S))
    try:
        client = daemon.start(timeout=300)
        time.sleep(FLUSH_EVERY_S + 1)  # start-up writes and the first optimise settle
        runs_before, _ = flush_runs(daemon.status())
        versions_before = lance_versions(data)
        rng = random.Random(seed)
        ids = rng.sample(memory_ids, min(DISTINCT, len(memory_ids)))
        latencies = []
        for i in range(touches):
            started = time.perf_counter()
            client.call("POST", "/v1/touch", {"id": ids[i % len(ids)]})
            latencies.append((time.perf_counter() - started) * 1000)
        durations = watch_flushes(daemon.status, runs_before)  # the watcher's echo settles too
        return Round(latencies, sum(durations.values()), len(durations),
                     lance_versions(data) - versions_before)
    finally:
        daemon.stop()


def watch_flushes(status: Callable[[], dict[str, Any]], runs_before: int) -> dict[int, float]:
    """{run number: duration} of every flush run that wrote this burst (the scheduler sets a
    run's number and duration together when it ends). Polled until nothing is pending and a
    flush interval more has passed, so a run still writing when the journal empties is seen
    to its end."""
    seen: dict[int, float] = {}

    def poll() -> bool:
        current = status()
        runs, duration = flush_runs(current)
        if runs > runs_before:
            seen[runs] = duration
        return current["daemon"]["pending_usage_writes"] == 0 and runs > runs_before
    wait_until(poll, timeout=120, step=0.02)
    settle = time.monotonic() + 1.5 * FLUSH_EVERY_S
    while time.monotonic() < settle:
        poll()
        time.sleep(0.02)
    return seen


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=REPO,
                   check=True)
    return where


def summary(rounds: list[Round]) -> str:
    p50 = statistics.median(statistics.median(r.touch_ms) for r in rounds)
    p95 = statistics.median(sorted(r.touch_ms)[int(0.95 * len(r.touch_ms))] for r in rounds)
    flush = statistics.median(r.flush_s for r in rounds)
    writes = statistics.median(r.lance_writes for r in rounds)
    runs = statistics.median(r.flushes for r in rounds)
    return (f"touch p50 {p50:6.2f} ms  p95 {p95:6.2f} ms | flush {flush * 1000:7.1f} ms "
            f"in {runs:g} run(s) | LanceDB writes {writes:g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a git revision to measure beside this checkout")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--touches", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-touch-") as tmp:
        root = Path(tmp)
        vault = generate_vault(root / "vault", args.notes, seed=7, memory_fraction=0.1)
        trees = {"this checkout": REPO}
        if args.baseline:
            trees = {f"baseline {args.baseline}": worktree(args.baseline, root / "baseline"),
                     **trees}
        print(f"vaultmem touch benchmark, {now_utc():%Y-%m-%d %H:%M} UTC")
        print(*machine_lines(), sep="\n")
        spread = min(DISTINCT, len(vault.memory_ids))
        print(f"{args.notes} notes ({len(vault.memory_ids)} memories), {args.touches} touches "
              f"over {spread} memories, flush every {FLUSH_EVERY_S:g} s, "
              f"{args.rounds} rounds; load average {load_average()}")
        results: dict[str, list[Round]] = {name: [] for name in trees}
        try:
            for i in range(args.rounds):
                order = list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]
                for name, source in order:
                    results[name].append(one_round(source, root / "vault", root / "work",
                                                   vault.memory_ids, args.touches, seed=i))
                    print(f"  round {i + 1} {name:24} {summary(results[name][-1:])}", flush=True)
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(root / "baseline")],
                               cwd=REPO, check=False)
        print(f"medians over rounds (load average {load_average()}):")
        for name, rounds in results.items():
            print(f"  {name:24} {summary(rounds)}")


if __name__ == "__main__":
    main()
