"""A daemon told to stop while a large note is embedded stops at the next slice, not once the
note is done, and the next start indexes the note whole (a real process and signal)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.harness.daemon import REAL_MODEL, DaemonProcess, wait_until

pytestmark = pytest.mark.timeout(900)

BIG = "Large note.md"
SECTIONS = 400  # ~0.36 MB, one chunk each: minutes of embedding on a loaded 2-core machine


def _big_text() -> str:
    return "# Large note\n\n" + "\n\n".join(
        f"## Part {n}\n\n" + " ".join(
            f"Sentence {n}.{k} about the quarry ledger and its many entries." for k in range(16))
        for n in range(SECTIONS)) + "\n"


def _current(daemon: DaemonProcess) -> dict[str, object]:
    return daemon.status()["daemon"]["indexing"]["current"] or {}


@pytest.mark.model
def test_sigterm_while_a_large_note_is_embedded_stops_and_the_next_start_indexes_it(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Small note.md").write_text("# Small note\n\nA short note about a garden.\n")
    daemon = DaemonProcess(vault, tmp_path / "data", settings=REAL_MODEL)
    try:
        daemon.start(600)
        (vault / BIG).write_text(_big_text(), encoding="utf-8")
        wait_until(lambda: _current(daemon).get("path") == BIG, 300)
        assert daemon.proc is not None
        daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.proc.wait(timeout=120) == 0  # a hang fails here; its time is not asserted
        daemon.stop()

        daemon.start(600)
        status = daemon.wait_ready(600)
        coverage = status["coverage"]
        assert coverage["indexed"] == 2 and not coverage["failed"]
        assert coverage["chunks"] >= SECTIONS + 1
        # the stop left the note unrecorded (a stop that waited for the whole note recorded it,
        # and this start would have added nothing)
        assert daemon.status()["daemon"]["indexing"]["last"]["added"] == 1
        assert daemon.client is not None
        hits = daemon.client.search("quarry ledger entries")["results"]
        assert hits and hits[0]["path"] == BIG
    finally:
        daemon.stop()
