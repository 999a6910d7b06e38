"""Many seeds of the three stress runs that write. Crash: the crash run's mixed workload (API
clients and a disk actor), SIGKILL, restart. Concurrent writes: the same writers with the daemon
serving throughout, stopped, the daemon quiet. Hostile vault: a reindex beside seeded file
churn, which must settle. Each seed is one cycle whose random choices come from
`random.Random(seed)` (thread timing aside), every check of its run applied after it.

`scripts/stress seeds N` runs N seeds of each (VAULTMEM_STRESS_SEEDS=N, first seed
VAULTMEM_STRESS_FIRST_SEED) and appends one JSON line per seed to VAULTMEM_STRESS_REPORT; inside
scripts/test one crash seed and one concurrent-write seed run (the hostile vault's reindex
beside churn runs once in test_hostile.py). A failing seed does not stop the run: every seed
runs, the test fails at the end naming the failing seeds (replay one with
`VAULTMEM_STRESS_FIRST_SEED=<seed> VAULTMEM_STRESS_SEEDS=1 scripts/stress -k <kind> -s`).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.stress import hostile_vault as hv
from tests.stress.crash_harness import unique_word
from tests.stress.test_crash import CrashRun
from tests.stress.test_hostile import Churn
from vaultmem.api.client import Client
from vaultmem_testing.daemon import DaemonProcess, wait_until

# read at import: the hermetic environment (tests/conftest.py) removes VAULTMEM_* variables
ASKED = "VAULTMEM_STRESS_SEEDS" in os.environ  # by scripts/stress seeds
SEEDS = int(os.environ.get("VAULTMEM_STRESS_SEEDS", "1"))
FIRST_SEED = int(os.environ.get("VAULTMEM_STRESS_FIRST_SEED", "0"))
REPORT = os.environ.get("VAULTMEM_STRESS_REPORT", "")
SETTLE_S = 60.0  # the hostile run's limit after a reindex beside churn
RECONCILE_S = 1.2  # the daemon's reconcile job, for the concurrent-write seeds
LIVE_MEMORIES = 12  # TRACKED (6) + pins (2), and a margin


def _report(kind: str, seed: int, failures: list[str], seconds: float, detail: str) -> None:
    line = {"kind": kind, "seed": seed, "ok": not failures, "seconds": round(seconds, 1),
            "failures": failures[:5], "detail": detail}
    print(json.dumps(line), flush=True)
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def _seeds(kind: str, run: Callable[[int], tuple[list[str], str]]) -> None:
    failed = []
    for seed in range(FIRST_SEED, FIRST_SEED + SEEDS):
        began = time.monotonic()
        try:
            failures, detail = run(seed)
        except Exception as exc:  # one seed's error is that seed's failure
            failures, detail = [f"{type(exc).__name__}: {exc}"], ""
        _report(kind, seed, failures, time.monotonic() - began, detail)
        if failures:
            failed.append((seed, failures[:3]))
    assert not failed, f"{len(failed)} of {SEEDS} {kind} seeds failed: {failed}"


class CycleRun(CrashRun):
    """One daemon over many seeds: each cycle's choices come from its own seed."""

    def seeded_cycle(self, seed: int, *, kill: bool | None) -> tuple[list[str], str]:
        self.seed, self.rng = seed, random.Random(seed)
        if kill is None:
            # what a restart's start-up reconcile does for the crash seeds: the index agrees
            # with the vault before this seed's writers start, whatever the last seed left
            self.settle()
        before = len(self.failures)
        line = self.cycle(seed, kill=kill, after_quiet=lambda: time.sleep(2 * RECONCILE_S))
        return self.failures[before:], line

    def settle(self) -> None:
        slow = Client(*self._endpoint(), timeout=600)
        slow.call("POST", "/v1/reindex", {"full": False})
        # sweeps archive and the disk actor deletes memories: keep enough live ones to track
        for _ in range(max(0, LIVE_MEMORIES - len(self._live_ids()))):
            token = unique_word(self.rng)
            slow.call("POST", "/v1/memories", {
                "content": f"Seeded fact {token}: the {token} relay listens on port "
                           f"{self.rng.randrange(1024, 65536)}.", "force": True})
        if len(self._live_ids()) < LIVE_MEMORIES:
            slow.call("POST", "/v1/reindex", {"full": False})
        wait_until(lambda: self.daemon.status()["daemon"]["pending_usage_writes"] == 0, 60)


@pytest.fixture
def cycles(tmp_path: Path) -> Iterator[CycleRun]:
    run = CycleRun(tmp_path, FIRST_SEED)
    # the daemon's own reconcile job folds the copies an editor's save over a note the daemon
    # just moved leaves behind; every 1.2 s here instead of every 10 minutes
    run.daemon.env["VAULTMEM_RECONCILE_INTERVAL_MINUTES"] = str(RECONCILE_S / 60)
    run.start()
    try:
        yield run
    finally:
        run.daemon.kill()


@pytest.mark.timeout(120 + 60 * SEEDS)
def test_crash_seeds(cycles: CycleRun) -> None:
    _seeds("crash", lambda seed: cycles.seeded_cycle(seed, kill=True))


@pytest.mark.timeout(120 + 60 * SEEDS)
def test_concurrent_write_seeds(cycles: CycleRun) -> None:
    _seeds("concurrent writes", lambda seed: cycles.seeded_cycle(seed, kill=None))


class SeededChurn(Churn):
    """Churn whose notes, cadence and length come from a seed."""

    def __init__(self, root: Path, rng: random.Random, seed: int) -> None:
        self.interval = rng.uniform(0.005, 0.05)
        super().__init__(root, notes=rng.randint(1, 8))
        self.paths = [f"churn/seed {seed} churn {i}.md" for i in range(len(self.paths))]
        for path in self.paths:
            self._write(path)

    def word(self, path: str) -> str:
        return f"churnword{path.split()[1]}n{path[-4]}x{self.rounds}"

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.rounds += 1
            for path in self.paths:
                self._write(path)


@pytest.fixture
def hostile_daemon(tmp_path: Path) -> Iterator[tuple[hv.HostileVault, DaemonProcess]]:
    built = hv.build(tmp_path / "vault")
    process = DaemonProcess(built.root, tmp_path / "data")
    process.output = tmp_path / "daemon.log"
    try:
        yield built, process
    finally:
        process.stop()
        hv.dismantle_deep_folders(built.root)


@pytest.mark.skipif(not ASKED, reason="scripts/test runs test_hostile.py, the same reindex "
                    "beside churn once; scripts/stress seeds runs this")
@pytest.mark.timeout(600 + 90 * SEEDS)
def test_hostile_vault_reindex_beside_churn_seeds(
    hostile_daemon: tuple[hv.HostileVault, DaemonProcess]
) -> None:
    vault, daemon = hostile_daemon
    client = daemon.start(timeout=600)
    slow = Client(client.base_url, client.token, timeout=600)  # a full reindex, synchronous
    before = {p: b for p, b in hv.snapshot(vault.root, vault.outside).items()
              if b"/churn/" not in p}

    def run(seed: int) -> tuple[list[str], str]:
        rng = random.Random(seed)
        full = rng.random() < 0.2
        busy = rng.uniform(0.2, 2.0)
        with SeededChurn(vault.root, rng, seed) as churn:
            time.sleep(rng.uniform(0.0, 0.5))
            slow.call("POST", "/v1/reindex", {"full": full})
            time.sleep(busy)
        began = time.monotonic()
        failures = []
        try:
            wait_until(lambda: churn.settled(client), SETTLE_S, step=0.2)
        except AssertionError:
            failures.append(f"the index did not settle within {SETTLE_S:g} s of the churn")
        settled = time.monotonic() - began
        after = {p: b for p, b in hv.snapshot(vault.root, vault.outside).items()
                 if b"/churn/" not in p}
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        if changed:
            failures.append(f"files outside churn/ changed: {changed[:3]}")
        for path in churn.paths:
            (vault.root / path).unlink()
        return failures, (f"{len(churn.paths)} notes every {churn.interval * 1000:.0f} ms, "
                          f"{churn.rounds} rounds, reindex {'full' if full else 'quick'}, "
                          f"settled in {settled:.1f} s")

    _seeds("hostile vault", run)
    assert daemon.stop() == 0
