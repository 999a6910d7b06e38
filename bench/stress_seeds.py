"""Many seeds of each writing stress run (tests/stress/test_seeds.py): crash, concurrent writes,
hostile vault. `scripts/stress seeds N [--first S] [--kinds crash,concurrent,hostile]
[--report FILE] [--parallel]` runs N seeds of each kind (one pytest run per kind, in turn or at
once), appends one JSON line per seed to the report and prints a summary per kind;
`--summary-only` prints the summary of an existing report (e.g. of a run still going)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = {"crash": "test_crash_seeds", "concurrent": "test_concurrent_write_seeds",
         "hostile": "test_hostile_vault_reindex_beside_churn_seeds"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/stress seeds", description=__doc__)
    parser.add_argument("seeds", type=int, nargs="?", default=200)
    parser.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--kinds", default=",".join(TESTS), help="which runs (comma-separated)")
    parser.add_argument("--report", type=Path, default=ROOT / "stress-seeds.jsonl")
    parser.add_argument("--parallel", action="store_true", help="run the kinds at once")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.summary_only:
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in kinds if k not in TESTS]
        if unknown:
            parser.error(f"unknown kinds {unknown}: use {', '.join(TESTS)}")
        run(kinds, args.seeds, args.first, args.report, args.parallel)
    print(summary(args.report))
    return 0 if all_passed(args.report) else 1


def run(kinds: list[str], seeds: int, first: int, report: Path, parallel: bool) -> None:
    env = {**os.environ, "VAULTMEM_STRESS_SEEDS": str(seeds),
           "VAULTMEM_STRESS_FIRST_SEED": str(first), "VAULTMEM_STRESS_REPORT": str(report),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    commands = [[sys.executable, "-m", "pytest", "tests/stress/test_seeds.py", "-q", "-s",
                 "-p", "no:cacheprovider", "-k", TESTS[kind]] for kind in kinds]
    if parallel:
        procs = [subprocess.Popen(c, cwd=ROOT, env=env) for c in commands]
        for proc in procs:
            proc.wait()
    else:
        for command in commands:
            subprocess.run(command, cwd=ROOT, env=env, check=False)


def _lines(report: Path) -> list[dict[str, object]]:
    if not report.exists():
        return []
    return [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def summary(report: Path) -> str:
    by_kind: dict[str, list[dict[str, object]]] = defaultdict(list)
    for line in _lines(report):
        by_kind[str(line["kind"])].append(line)
    rows = [f"{'run':<18} {'seeds':>5} {'passed':>6} {'failed':>6} {'seed range':>12} "
            f"{'median s':>8}  failing seeds"]
    for kind, lines in sorted(by_kind.items()):
        seeds = sorted(int(str(line["seed"])) for line in lines)
        failed = [line["seed"] for line in lines if not line["ok"]]
        median = statistics.median(float(str(line["seconds"])) for line in lines)
        rows.append(f"{kind:<18} {len(lines):>5} {len(lines) - len(failed):>6} "
                    f"{len(failed):>6} {f'{seeds[0]}-{seeds[-1]}':>12} {median:>8.1f}  "
                    f"{failed[:20] or '-'}")
    return "\n".join(rows)


def all_passed(report: Path) -> bool:
    return all(line["ok"] for line in _lines(report))


if __name__ == "__main__":
    sys.exit(main())
