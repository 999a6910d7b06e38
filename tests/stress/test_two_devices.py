"""Two devices, one synced vault (tests/stress/two_devices.py): random touches, flushes, user
edits, Syncthing-style syncs with conflict copies, and reconciles on both devices (concurrent
ones too); after the sync settles, no use is lost or counted twice and no line a user wrote is
gone. The short form runs a few seeds; `scripts/stress --long` runs 25."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stress._level import LEVEL
from tests.stress.two_devices import Scenario

SEEDS = range(LEVEL.pick(3, 25))
STEPS = LEVEL.pick(60, 160)


@pytest.mark.timeout(LEVEL.pick(240, 900))
@pytest.mark.parametrize("seed", SEEDS)
def test_two_devices_settle_with_nothing_lost(tmp_path: Path, seed: int) -> None:
    scenario = Scenario(tmp_path, seed)
    try:
        outcome = scenario.run(STEPS)
    finally:
        scenario.close()
    print(f"seed {seed}: {dict(outcome.steps)}, {outcome.conflicts} conflict copies")
    assert outcome.problems == []
