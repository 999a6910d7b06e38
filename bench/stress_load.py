"""Load: concurrent clients against a real daemon while a sync-like process changes the vault.

Usage:
    scripts/stress load                 # 16 clients x 120 s, 2,000 notes
    scripts/stress load --clients 8 --seconds 15 --notes 300
    scripts/stress load --real-model    # the real embedding model

The run is vaultmem_testing/load.py (also tests/stress/test_load.py's): a synthetic vault, N client
threads sending a realistic mix of requests, and a sync-like thread changing 10 % of the vault
in bursts. Printed: throughput, p50/p95/p99 latency overall and per operation, every error, the
daemon's scheduled jobs, its RSS over time and whether it plateaus, then the end checks: daemon
alive, every note as the sync left it, saved memories readable, the index caught up with the
disk and the usage journal drained.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.support import load_average, machine_lines
from vaultmem_testing.load import LoadConfig, print_report, run_load
from vaultmem_testing.measure import say


def parse_args(argv: Sequence[str] | None = None) -> LoadConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = LoadConfig()
    parser.add_argument("--notes", type=int, default=defaults.notes,
                        help=f"synthetic vault size (default {defaults.notes})")
    parser.add_argument("--clients", type=int, default=defaults.clients,
                        help=f"concurrent clients (default {defaults.clients})")
    parser.add_argument("--seconds", type=float, default=defaults.seconds,
                        help=f"how long the clients run (default {defaults.seconds:g})")
    parser.add_argument("--churn", type=float, default=defaults.churn,
                        help="share of the vault the sync changes (default 0.10)")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--real-model", action="store_true",
                        help="embed with the real model instead of the fake embedder")
    parser.add_argument("--flush-seconds", type=float, default=defaults.flush_seconds,
                        help="the daemon's usage flush interval (default: the daemon's, "
                             f"{defaults.flush_seconds:g})")
    parser.add_argument("--save-pool", type=int, default=defaults.save_pool,
                        help="distinct facts the saves draw from; saving one again reinforces "
                             f"it (default {defaults.save_pool}; 0: every save is new, the "
                             "vault grows all along)")
    args = parser.parse_args(argv)
    if args.save_pool < 0:
        parser.error("--save-pool must be 0 or more")
    return LoadConfig(args.notes, args.clients, args.seconds, args.churn, args.seed,
                      args.real_model, flush_seconds=args.flush_seconds,
                      save_pool=args.save_pool)


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_args(argv)
    say(f"stress_load {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; command: "
        f"{' '.join(['scripts/stress load', *sys.argv[1:]])}")
    for line in machine_lines():
        say(line)
    with tempfile.TemporaryDirectory(prefix="vaultmem-load-") as tmp:
        report = run_load(Path(tmp), config, log=Path(tmp) / "daemon.log")
        print_report(report)
        if report.errors or report.problems:
            say(f"\ndaemon log tail:\n{(Path(tmp) / 'daemon.log').read_text()[-3000:]}")
    say(f"load average at the end: {load_average()}")
    return 1 if report.errors or report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
