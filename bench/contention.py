"""Search latency under CPU contention: `scripts/bench daemon --contention`.

A real `python -m vaultmem run` daemon (real model, default settings) on a fresh copy of
`sample-vault/`, searched over HTTP one query after another, as a new user would:

* start-up: the first --startup searches right after the first index finished and the model
  loaded (the daemon's start-up jobs may still run);
* quiet: --searches searches once the daemon has settled;
* busy: the same searches while N plain CPU burners (`while True: pass`, one process each)
  run, for each N in --busy. The benchmark starts the burners and always stops them.

Each round uses a new daemon and data dir; the figures are p50 / p95 per round and the
median over --rounds rounds, with each situation's ratio to quiet of the same round. Other
work on the machine shares the CPU too: the load average is printed beside every round.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bench.daemon import say, section, service_daemon, start, stop, timed_searches
from bench.support import load_average, machine_lines, ms, now_utc, p50, p95
from vaultmem_testing.daemon import DaemonProcess
from vaultmem_testing.measure import memory_mb

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample-vault"
# queries about the sample vault's notes: keyword look-ups and questions, in turn
QUERIES = (
    "sourdough starter",
    "how do I back up the NAS",
    "tailscale subnet router",
    "which reverse proxy did I try in front of gitea",
    "pgbouncer prepared statements",
    "k3s ingress",
    "what does Atomic Habits say about habit stacking",
    "deploy checklist for Crumb",
    "daily note naming",
    "restic or borg",
)
TARGETS = {"busy_p50_ratio": 3.0, "busy_p95_ms": 250.0, "startup_p50_ratio": 2.0}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/bench daemon --contention",
        description="daemon search latency quiet, right after start-up and with busy processes",
    )
    parser.add_argument("--contention", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--rounds", type=int, default=None, help="daemons in turn (3)")
    parser.add_argument("--searches", type=int, default=None,
                        help="searches per quiet/busy situation (100)")
    parser.add_argument("--startup", type=int, default=40,
                        help="searches right after start-up (40)")
    parser.add_argument("--busy", default=None,
                        help="comma-separated numbers of busy processes (default: the core "
                             "count)")
    parser.add_argument("--vault", type=Path, default=SAMPLE, help="vault to copy (sample-vault)")
    parser.add_argument("--runtime", default="auto",
                        help="the model runtime (auto, onnx, torch; default: the daemon's auto)")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.searches = args.searches or (30 if args.quick else 100)
    args.busy = [int(n) for n in (args.busy or str(cores)).split(",") if n]
    return args


@contextmanager
def burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes each spinning one core; always stopped on the way out."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        time.sleep(1.0)  # let the scheduler see them as CPU hogs
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(timeout=30)


def searches(daemon: DaemonProcess, count: int) -> list[float]:
    assert daemon.client is not None
    return timed_searches(daemon.client, [QUERIES[i % len(QUERIES)] for i in range(count)])


def one_round(tmp: Path, number: int, args: argparse.Namespace) -> dict[str, list[float]]:
    vault, data = tmp / f"vault-{number}", tmp / f"data-{number}"
    shutil.copytree(args.vault, vault)
    daemon = service_daemon(vault, data, tmp / f"daemon-{number}.log", args.runtime)
    samples: dict[str, list[float]] = {}
    try:
        started, _ = start(daemon)
        ready = time.perf_counter() - started
        samples["start-up"] = searches(daemon, args.startup)
        time.sleep(10.0)  # start-up jobs (optimise, first scheduler runs) settle
        searches(daemon, len(QUERIES))  # warm-up, excluded
        samples["quiet"] = searches(daemon, args.searches)
        for count in args.busy:
            with burners(count):
                samples[f"busy x{count}"] = searches(daemon, args.searches)
        rss = memory_mb(daemon.pid)[0]
    finally:
        stop(daemon)
        shutil.rmtree(vault, ignore_errors=True)
    quiet = p50(samples["quiet"])
    say(f"  round {number}: indexed + model loaded {ready:.1f} s after spawn; RSS {rss:.0f} MB; "
        f"load average {load_average()}")
    for name, values in samples.items():
        say(f"    {name:<10} p50 {ms(p50(values)):>7} ms  p95 {ms(p95(values)):>7} ms  "
            f"max {ms(max(values)):>7} ms  p50/quiet {p50(values) / quiet:5.2f}  "
            f"({len(values)} searches)")
    return samples


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    say("vaultmem daemon benchmark: search latency under CPU contention")
    say(f"date: {now_utc():%Y-%m-%d %H:%M} UTC")
    say(f"command: {os.environ.get('BENCH_COMMAND') or 'scripts/bench daemon --contention'}")
    for line in machine_lines():
        say(line)
    say(f"vault: a copy of {args.vault} per round; busy processes: {args.busy}")
    rounds: list[dict[str, list[float]]] = []
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-contention-") as name:
        for number in range(1, args.rounds + 1):
            section(f"round {number} of {args.rounds}")
            rounds.append(one_round(Path(name), number, args))
    summary(rounds)


def summary(rounds: list[dict[str, list[float]]]) -> None:
    section(f"summary: median over {len(rounds)} round(s) of each round's p50 / p95")
    checks: list[tuple[str, bool]] = []
    for name in rounds[0]:
        p50s = [p50(r[name]) for r in rounds]
        p95s = [p95(r[name]) for r in rounds]
        ratios = [p50(r[name]) / p50(r["quiet"]) for r in rounds]
        ratio = statistics.median(ratios)
        say(f"  {name:<10} p50 {ms(statistics.median(p50s)):>7} ms  "
            f"p95 {ms(statistics.median(p95s)):>7} ms  p50/quiet {ratio:5.2f} "
            f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
        if name == "start-up":
            checks.append((f"start-up p50 <= {TARGETS['startup_p50_ratio']}x quiet",
                           ratio <= TARGETS["startup_p50_ratio"]))
        elif name.startswith("busy"):
            p95_ms = 1000 * statistics.median(p95s)
            checks.append((f"{name} p50 <= {TARGETS['busy_p50_ratio']}x quiet",
                           ratio <= TARGETS["busy_p50_ratio"]))
            checks.append((f"{name} p95 <= {TARGETS['busy_p95_ms']:.0f} ms",
                           p95_ms <= TARGETS["busy_p95_ms"]))
    for label, ok in checks:
        say(f"  target {label}: {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
