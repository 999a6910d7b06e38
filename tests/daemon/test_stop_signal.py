"""A stop sent while the daemon starts: its socket answers before the start ends (a service
manager may stop it then), and the stop must be a clean one."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from vaultmem_testing.daemon import DaemonProcess


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
