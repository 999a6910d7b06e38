"""A daemon told to stop while a large note is embedded stops at the next slice, not once the
note is done, and the next start indexes the note whole (a real process and signal)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon.run import Daemon
from vaultmem.index.base import Vector
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.pipeline.slices import SLICE_CHUNKS
from vaultmem_testing.daemon import REAL_MODEL, DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

pytestmark = pytest.mark.timeout(900)

BIG = "Large note.md"
SECTIONS = 400  # ~0.36 MB, one chunk each: minutes of embedding on a loaded 2-core machine


def _big_text() -> str:
    return "# Large note\n\n" + "\n\n".join(
        f"## Part {n}\n\n" + " ".join(
            f"Sentence {n}.{k} about the quarry ledger and its many entries." for k in range(16))
        for n in range(SECTIONS)) + "\n"


MARK = "quarry ledger"  # only the large note's chunks hold it
MEMORY_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
MEMORY = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
WAIT_S = 60.0


class HeldEmbedder(FakeEmbedder):
    """The fake embedder, holding each of the large note's slices until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.allowed = threading.Semaphore(0)
        self.entered = threading.Event()
        self.big_slices = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        if any(MARK in text for text in texts):
            self.big_slices += 1
            self.entered.set()
            assert self.allowed.acquire(timeout=WAIT_S), "a slice was never let go"
        return super().embed(texts)


def _stm(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("stm_")]


@pytest.mark.timeout(120)
def test_a_daemon_stops_within_a_slice_of_a_large_note_and_still_flushes(
    tmp_path: Path,
) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    data = tmp_path / "data"
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(data), "embedding_model": "fake", "port": 0,
        "debounce_ms": 50, "flush_interval_seconds": 3600})
    embedder = HeldEmbedder()
    app = build_app(settings, embedder=embedder, daemon=True)
    daemon = Daemon(daemon_params(settings), app.daemon_parts())
    daemon.start()
    stopper = threading.Thread(target=daemon.stop)
    try:
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        before = (vault / MEMORY).read_text()
        daemon.api.parts.uses.touch(MEMORY_ID, datetime.now(UTC))
        assert len(daemon.parts.journal) == 1
        (vault / BIG).write_text(_big_text(), encoding="utf-8")
        assert embedder.entered.wait(WAIT_S), "the watcher never embedded the large note"
        stopper.start()
        wait_until(lambda: daemon.scheduler is None, WAIT_S)  # the stop is under way
        embedder.allowed.release()  # the slice in progress ends; no other one starts
        stopper.join(WAIT_S)
        assert not stopper.is_alive(), "the daemon did not stop"
    finally:
        for _ in range(SECTIONS):
            embedder.allowed.release()
        if not stopper.is_alive():
            daemon.stop()
        stopper.join(WAIT_S)
    assert embedder.big_slices == 1 < SECTIONS // SLICE_CHUNKS
    assert _stm((vault / MEMORY).read_text()) != _stm(before)  # the last flush was written

    restarted = Daemon(daemon_params(settings),
                       build_app(settings, embedder=FakeEmbedder(), daemon=True).daemon_parts())
    restarted.start()
    try:
        wait_until(lambda: restarted.progress.last is not None, WAIT_S)
        assert restarted.progress.last is not None and restarted.progress.last.added == 1
        record = restarted.parts.catalog.records_for([BIG])[BIG]
        assert record.chunk_count >= SECTIONS
    finally:
        restarted.stop()


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
