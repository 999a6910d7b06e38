"""What the in-process freshness check costs: `python -m bench.freshness`.

Before every in-process command, vaultmem compares the vault with the index's catalog
(`vaultmem.engine.freshness.unindexed_changes`: a stat scan of every note plus one catalog read).
This script builds synthetic vaults of --notes notes (indexed with the fake embedder, so only
the scan is measured), then times, --repeats times each:

* baseline: `scan_vault` alone, the stat walk every in-process listing of memories already does;
* check: `unindexed_changes` on an unchanged vault (the common case: nothing to sync);
* check after 10 edits: the same with 10 notes touched (their size changes).

It prints medians and p95 per vault size and the check's ratio to the same run's baseline. The
machine is shared; the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.support import load_average, machine_lines, make_app, ms, now_utc, p50, p95
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.vault.scan import scan_vault

WORDS = ("restic", "backup", "nas", "sourdough", "starter", "crumb", "redis", "session",
         "traefik", "ingress", "tailscale", "router", "grafana", "panel", "habit", "review")


def write_vault(root: Path, notes: int) -> None:
    for n in range(notes):
        folder = root / f"area-{n % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(60))
        (folder / f"note {n:05d}.md").write_text(f"# Note {n}\n\n{words}\n", encoding="utf-8")


def timed(call: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def measure(notes: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vaultmem-freshness-") as tmp:
        vault, data = Path(tmp) / "vault", Path(tmp) / "data"
        write_vault(vault, notes)
        app = make_app(vault, data, FakeEmbedder())
        try:
            app.sync.reindex()
            assert app.freshness.unindexed_changes() == 0

            def check() -> int:
                return app.freshness.unindexed_changes()

            baseline = timed(lambda: scan_vault(app.root, app.rules), repeats)
            unchanged = timed(check, repeats)
            for n in range(10):
                path = vault / f"area-{n % 20:02d}" / f"note {n:05d}.md"
                path.write_text(path.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
            assert check() == 10
            edited = timed(check, repeats)
        finally:
            app.close()
    base = p50(baseline)
    print(f"| {notes:,} | {ms(base)} | {ms(p50(unchanged))} / {ms(p95(unchanged))} | "
          f"{p50(unchanged) / base:.2f} | {ms(p50(edited))} | "
          f"{p50(unchanged) / notes * 1e6:.1f} µs | {load_average()} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"freshness check, {now_utc():%Y-%m-%d %H:%M} UTC")
    for line in machine_lines():
        print(line)
    print()
    print("| notes | baseline: scan only, median ms | check, median / p95 ms | ratio | "
          "check after 10 edits, median ms | per note | load average |")
    print("|---|---|---|---|---|---|---|")
    for notes in args.notes:
        measure(notes, args.repeats)


if __name__ == "__main__":
    main()
