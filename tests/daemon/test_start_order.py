"""The daemon's start order: the index opens and the model loads first, because the first search
waits for both; on an index with chunks the start-up reconcile begins only after them, on an
empty one at once (an in-process daemon)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.harness.daemon import wait_until
from tests.harness.sample_vault import redated_sample_vault
from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon import run
from vaultmem.daemon.run import Daemon
from vaultmem.index.embedders import FakeEmbedder

WAIT_S = 60.0


class HeldLoad(FakeEmbedder):
    """The fake embedder whose loading (`dim`, as the daemon's model thread asks it) waits
    until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.release = threading.Event()

    @property
    def dim(self) -> int:
        self.asked.set()
        assert self.release.wait(WAIT_S), "the model was never let load"
        return self._dim


def _daemon(tmp_path: Path, embedder: FakeEmbedder, *, indexed: bool) -> Daemon:
    """A daemon on a sample vault; with `indexed`, its index was built before (a warm start)."""
    vault = redated_sample_vault(tmp_path / "vault")
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "port": 0, "debounce_ms": 50})
    if indexed:
        app = build_app(settings, embedder=FakeEmbedder())
        try:
            app.sync.reindex()
        finally:
            app.close()
    return Daemon(daemon_params(settings), build_app(settings, embedder=embedder, daemon=True))


@pytest.mark.timeout(120)
def test_on_a_warm_index_the_reconcile_waits_for_the_open_index_and_the_loaded_model(
    tmp_path: Path,
) -> None:
    embedder = HeldLoad()
    daemon = _daemon(tmp_path, embedder, indexed=True)
    daemon.start()
    try:
        app = daemon.app
        assert app is not None
        assert embedder.asked.wait(WAIT_S)  # the model is loading
        wait_until(lambda: app.index.is_open, WAIT_S)  # and the index opened meanwhile
        time.sleep(0.5)
        assert not daemon.progress.running  # no reconcile beside them
        assert daemon.progress.last is None
        embedder.release.set()
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        last = daemon.progress.last
        assert last is not None and last["added"] == 0 and last["rebuilt_reason"] is None
    finally:
        embedder.release.set()
        daemon.stop()


@pytest.mark.timeout(120)
def test_on_an_empty_index_the_first_index_starts_while_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing to answer from yet: the first index starts at once (answers say how far it
    got), not after the model's load."""
    monkeypatch.setattr(run, "MODEL_WAIT_S", 10 * WAIT_S)  # no timeout lets it start either
    embedder = HeldLoad()
    daemon = _daemon(tmp_path, embedder, indexed=False)
    daemon.start()
    try:
        assert embedder.asked.wait(WAIT_S)
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)  # the model still held
        assert not embedder.release.is_set()
        assert daemon.progress.last is not None and daemon.progress.last["added"] > 0
    finally:
        embedder.release.set()
        daemon.stop()
