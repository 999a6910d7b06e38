"""A stop sent while the daemon starts: its socket answers before the start ends (a service
manager may stop it then), and the stop must be a clean one."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from vaultmem_testing.daemon import REPO, DaemonProcess

TRIES = 20


@pytest.mark.timeout(120)
def test_sigterm_as_soon_as_the_socket_answers_stops_the_daemon_cleanly(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for n in range(1500):  # folders the watcher's start walks, after the socket answers
        folder = vault / f"area {n % 30}" / f"topic {n}"
        folder.mkdir(parents=True)
    (vault / "area 0" / "Garden.md").write_text("# Garden\n\nTomatoes and beans.\n")
    data = tmp_path / "data"
    daemon = DaemonProcess(vault, data)
    try:
        daemon.spawn()
        assert daemon.proc is not None
        deadline = time.monotonic() + 60
        while not (data / "daemon.json").exists():
            assert daemon.proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.001)
        daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.proc.wait(timeout=60) == 0  # not killed by the signal (-15)
        assert not (data / "daemon.json").exists()  # its stop ran: nothing left behind
    finally:
        daemon.stop()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.timeout(900)
def test_ctrl_c_on_scripts_run_piped_into_tee_stops_the_daemon_within_2_s(
    tmp_path: Path
) -> None:
    """Ctrl-C on `scripts/run 2>&1 | tee log` (SIGINT to the whole process group: the script,
    the daemon and tee; the script's trap adds a SIGTERM) left the daemon running in 2 of 5
    tries: the second signal's handler waited forever for the stop Event's lock, held by the
    first one's. 20 tries, each stopped within 2 s."""
    demo = tmp_path / "demo"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")},
           "VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_PORT": "0",
           "VAULTMEM_DEMO_DIR": str(demo)}
    rng = random.Random(41)
    stopped_in: list[float] = []
    for _ in range(TRIES):
        run = subprocess.Popen(["bash", "-c", f"scripts/run 2>&1 | tee {demo}/log"],
                               stdout=subprocess.PIPE, env=env, cwd=REPO,
                               start_new_session=True)
        try:
            assert run.stdout is not None
            for line in run.stdout:
                if b"Ctrl-C stops the daemon" in line:
                    break
            pid = json.loads((demo / "data" / "daemon.json").read_text())["pid"]
            time.sleep(rng.uniform(0.2, 1.5))
            os.killpg(run.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
            sent = time.monotonic()
            while not _gone(pid) and time.monotonic() - sent < 10:
                time.sleep(0.01)
            stopped_in.append(time.monotonic() - sent)
            assert run.wait(timeout=10) is not None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    slow = [round(s, 2) for s in stopped_in if s > 2.0]
    assert not slow, f"{len(slow)} of {TRIES} tries took longer than 2 s: {slow}"
