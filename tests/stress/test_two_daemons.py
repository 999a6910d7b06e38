"""Two real daemons (`vaultmem run`), each on its own copy of one vault, with a Syncthing-like
syncer between the copies running in the background (tests/stress/two_devices.py's Syncer):
clients touch memories on both daemons at random while the syncer copies changes and keeps
conflict copies; each daemon's watcher, flush and scheduled reconcile do the rest. After the
touching stops and the sync settles, every memory has one active note on both devices whose
use count is its initial count plus every touch either daemon acknowledged."""

from __future__ import annotations

import random
import shutil
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.stress._level import LEVEL
from tests.stress.two_devices import MEMORIES, Syncer, notes, write_memory
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.daemon import DaemonProcess, wait_until

SEEDS = range(LEVEL.pick(1, 3))
TOUCHES = LEVEL.pick(80, 400)


def _devices(tmp: Path, seed: int) -> tuple[dict[str, int], list[DaemonProcess]]:
    rng = random.Random(seed)
    root_a, root_b = tmp / "a" / "vault", tmp / "b" / "vault"
    root_a.mkdir(parents=True)
    expected = {}
    for index in range(MEMORIES):
        memory_id, _, uses = write_memory(root_a, index, rng)
        expected[memory_id] = uses
    shutil.copytree(root_a, root_b)
    daemons = [DaemonProcess(root, root.parent / "data", VAULTMEM_DEVICE_ID=name,
                             VAULTMEM_FLUSH_INTERVAL_SECONDS="0.3",
                             VAULTMEM_RECONCILE_INTERVAL_MINUTES="0.02",
                             VAULTMEM_MAX_WRITE_PAUSE_SECONDS="2")
               for root, name in ((root_a, "laptop-a1"), (root_b, "desk-b2"))]
    return expected, daemons


def _live_counts(root: Path) -> dict[str, list[tuple[str, object]]]:
    """memory id → [(path, use count)] of its notes outside the archive folder."""
    found: dict[str, list[tuple[str, object]]] = {}
    for path, data in notes(root).items():
        fields, _, _ = parse(data.decode("utf-8"))
        if "stm_id" in fields and not path.startswith("memories/archive/"):
            found.setdefault(str(fields["stm_id"]), []).append((path, fields["stm_use_count"]))
    return found


@pytest.mark.timeout(LEVEL.pick(240, 900))
@pytest.mark.parametrize("seed", SEEDS)
def test_two_daemons_on_a_synced_vault_count_every_touch_once(tmp_path: Path, seed: int) -> None:
    expected, daemons = _devices(tmp_path, seed)
    rng = random.Random(seed)
    syncer = Syncer(daemons[0].vault, daemons[1].vault, random.Random(seed + 1))
    syncer.start()
    stop = threading.Event()

    def keep_syncing() -> None:
        while not stop.wait(rng.uniform(0.1, 0.8)):
            syncer.sync(datetime.now(UTC))

    t0 = time.monotonic()
    clients = [daemon.start() for daemon in daemons]
    thread = threading.Thread(target=keep_syncing, name="syncer")
    thread.start()
    times = [time.monotonic() - t0]
    try:
        for _ in range(TOUCHES):
            memory_id = rng.choice(sorted(expected))
            clients[rng.randrange(2)].call("POST", "/v1/touch", {"id": memory_id})
            expected[memory_id] += 1
            time.sleep(rng.uniform(0, 0.1))
        stop.set()
        thread.join()
        times.append(time.monotonic() - t0)

        def settled() -> bool:
            changed = syncer.sync(datetime.now(UTC))
            statuses = [daemon.status() for daemon in daemons]
            quiet = all(s["daemon"]["pending_usage_writes"] == 0 and not s["sync"]["duplicates"]
                        and s["daemon"]["queue_depth"] == 0 for s in statuses)
            return not changed and quiet and notes(daemons[0].vault) == notes(daemons[1].vault)

        wait_until(settled, timeout=LEVEL.pick(120, 300), step=0.5)
        times.append(time.monotonic() - t0)
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        for daemon in daemons:
            daemon.stop()
    print(f"seed {seed}: {TOUCHES} touches, {syncer.conflicts} conflict copies; started "
          f"{times[0]:.1f} s, touched {times[1]:.1f} s, settled {times[2]:.1f} s")
    for daemon in daemons:
        live = _live_counts(daemon.vault)
        assert {memory_id: [count for _, count in live.get(memory_id, [])]
                for memory_id in expected} == {m: [uses] for m, uses in expected.items()}
