"""A daemon's first index with an embedder that takes its time: every answer says the index's
state, every note is found by its words before any vector is written, the usage flush writes
its notes while the index waits for the model, and the log tells the progress and the end."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmem.api.client import Client
from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon.native import Trimmer
from vaultmem.daemon.run import Daemon
from vaultmem.index.base import Vector
from vaultmem.index.embedders import FakeEmbedder
from vaultmem_testing.daemon import wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

pytestmark = pytest.mark.timeout(120)

WAIT_S = 60.0
FLUSH_WITHIN_S = 10.0
MEMORY_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
MEMORY = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"


class SlowEmbedder(FakeEmbedder):
    """The fake embedder whose bulk calls wait until the test lets them go (a model that takes
    minutes over a big vault); queries are answered at once."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()
        self.entered = threading.Event()
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls += 1
        self.entered.set()
        assert self.go.wait(WAIT_S), "the embedder was never let go"
        return super().embed(texts)


def _stm(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("stm_")]


def _flushed_within(note: Path, use: Callable[[], object]) -> None:
    """`use` records a use of `note`'s memory; the note's stm_ lines change within
    FLUSH_WITHIN_S (the scheduled flush)."""
    before = _stm(note.read_text(encoding="utf-8"))
    use()
    wait_until(lambda: _stm(note.read_text(encoding="utf-8")) != before, FLUSH_WITHIN_S)


def test_the_first_index_answers_by_words_flushes_uses_and_logs_its_progress(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "port": 0, "debounce_ms": 50, "flush_interval_seconds": 0.5})
    embedder = SlowEmbedder()
    app = build_app(settings, embedder=embedder, daemon=True)
    daemon = Daemon(daemon_params(settings), app.daemon_parts())
    trimmed: list[str] = []  # the threads that trimmed the heap
    daemon._trimmer = Trimmer(0.0, trim=lambda: trimmed.append(
        threading.current_thread().name) is None)
    caplog.set_level(logging.INFO, logger="vaultmem.daemon.run")
    daemon.start()
    try:
        assert daemon.server is not None
        client = Client(daemon.server.url, (tmp_path / "data" / "token").read_text().strip())
        first = client.search("Crumb server-side sessions")
        assert first["indexing"]["state"] in ("starting", "indexing")  # never silent
        assert embedder.entered.wait(WAIT_S), "the first index never reached the model"
        during = client.search("Crumb server-side sessions in Redis")
        assert during["indexing"] == {"state": "indexing", "by_words": "complete",
                                      "by_meaning": "partial", "done": 0,
                                      "total": during["indexing"]["total"]}
        assert embedder.calls == 1, "no vector is written yet"
        assert any(hit["path"] == MEMORY for hit in during["results"])  # by its words

        # uses are recorded; each scheduled flush writes them while the index waits for the
        # model (a flush that waited for the index would hold the next one back)
        for _ in range(2):
            _flushed_within(vault / MEMORY, lambda: daemon.api.parts.uses.touch(
                MEMORY_ID, datetime.now(UTC)))
        assert not embedder.go.is_set() and daemon.progress.running  # the index still waits
        # the words pass's freed heap went back to the system before the first vector
        assert "vaultmem-startup" in trimmed, trimmed

        embedder.go.set()
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        after = client.search("Crumb server-side sessions in Redis")
        assert after["indexing"] == {"state": "ready", "by_words": "complete",
                                     "by_meaning": "complete"}
        assert after["results"][0]["path"] == MEMORY
        # the flushed note's new state is what the catalog holds once the watcher's batch ran
        wait_until(lambda: not daemon.closed and not daemon.parts.sync.indexing().work.running,
                   WAIT_S)
    finally:
        embedder.go.set()
        daemon.stop()
    messages = [r.getMessage() for r in caplog.records if r.name == "vaultmem.daemon.run"]
    assert any(m.startswith("indexing ") and "every note searchable by its words" in m
               for m in messages), messages
    ready = [m for m in messages if m.startswith("index ready: ")]
    assert len(ready) == 1 and " notes, " in ready[0] and ready[0].endswith(" s"), messages


class LargeNoteEmbedder(FakeEmbedder):
    """The fake embedder, each of a large note's slices taking a while (a model over 5 MB)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.done = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vector:
        if any("quarry ledger" in text for text in texts) and not self.done.is_set():
            self.entered.set()
            self.done.wait(0.5)
        return super().embed(texts)


def test_the_usage_flush_runs_while_the_watcher_delivers_a_large_note(tmp_path: Path) -> None:
    """The watcher's delivery of a large note (minutes of embedding) is indexing, not notes
    changing on disk: scheduled writes are not paused behind it."""
    vault = redated_sample_vault(tmp_path / "vault")
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "port": 0, "debounce_ms": 50, "flush_interval_seconds": 0.5})
    embedder = LargeNoteEmbedder()
    app = build_app(settings, embedder=embedder, daemon=True)
    daemon = Daemon(daemon_params(settings), app.daemon_parts())
    daemon.start()
    try:
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        big = "\n\n".join(f"## Part {n}\n\nThe quarry ledger, entry {n}." for n in range(400))
        (vault / "Large note.md").write_text(f"# Large note\n\n{big}\n", encoding="utf-8")
        assert embedder.entered.wait(WAIT_S)
        for _ in range(2):
            _flushed_within(vault / MEMORY, lambda: daemon.api.parts.uses.touch(
                MEMORY_ID, datetime.now(UTC)))
        assert not embedder.done.is_set() and not daemon.closed
        assert daemon.parts.sync.indexing().work.current is not None  # still being embedded
    finally:
        embedder.done.set()
        daemon.stop()
