"""The daemon's start order: the index opens and the model loads first, because the first search
waits for both; on an index with chunks the start-up reconcile begins only after them (and after
the searches that waited for them), on an empty one at once (an in-process daemon)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from vaultmem.api.auth import load_or_create_token
from vaultmem.api.client import Client
from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon import first_answers
from vaultmem.daemon.run import Daemon
from vaultmem.index.embedders import FakeEmbedder
from vaultmem_testing.daemon import wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

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
    app = build_app(settings, embedder=embedder, daemon=True)
    return Daemon(daemon_params(settings), app.daemon_parts())


@pytest.mark.timeout(120)
def test_on_a_warm_index_the_reconcile_waits_for_the_open_index_and_the_loaded_model(
    tmp_path: Path,
) -> None:
    embedder = HeldLoad()
    daemon = _daemon(tmp_path, embedder, indexed=True)
    daemon.start()
    try:
        app = daemon.parts
        assert embedder.asked.wait(WAIT_S)  # the model is loading
        wait_until(lambda: app.index.is_open, WAIT_S)  # and the index opened meanwhile
        time.sleep(0.5)
        assert not daemon.progress.running  # no reconcile beside them
        assert daemon.progress.last is None
        embedder.release.set()
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        last = daemon.progress.last
        assert last is not None and last.added == 0 and last.rebuilt_reason is None
    finally:
        embedder.release.set()
        daemon.stop()


@pytest.mark.timeout(120)
def test_on_an_empty_index_the_first_index_starts_while_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing to answer from yet: the first index starts at once (answers say how far it
    got), not after the model's load: it scans, plans and counts the notes meanwhile (its
    words pass then needs the vectors' width, so waits for the load, ~0.3 s)."""
    # no timeout lets it start either
    monkeypatch.setattr(first_answers, "MODEL_WAIT_S", 10 * WAIT_S)
    embedder = HeldLoad()
    daemon = _daemon(tmp_path, embedder, indexed=False)
    daemon.start()
    try:
        assert embedder.asked.wait(WAIT_S)
        sync = daemon.parts.sync
        wait_until(lambda: sync.state().state == "indexing", WAIT_S)  # the model still held
        assert not embedder.release.is_set() and sync.state().total > 0
        embedder.release.set()
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        assert daemon.progress.last is not None and daemon.progress.last.added > 0
    finally:
        embedder.release.set()
        daemon.stop()


def _hold_searches(
    monkeypatch: pytest.MonkeyPatch, daemon: Daemon,
) -> tuple[threading.Event, threading.Event]:
    """Searches wait in the daemon until the test lets them go: (one is in, let them go)."""
    search = daemon.api.parts.search.search
    inside, let_go = threading.Event(), threading.Event()

    def held(*args: object, **kwargs: object) -> object:
        inside.set()
        assert let_go.wait(WAIT_S), "the search was never let go"
        return search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(daemon.api.parts.search, "search", held)
    return inside, let_go


def _search_in_background(daemon: Daemon, tmp_path: Path) -> threading.Thread:
    assert daemon.server is not None
    client = Client(daemon.server.url, load_or_create_token(tmp_path / "data"), timeout=WAIT_S)
    thread = threading.Thread(target=client.search, args=("sourdough starter",), daemon=True)
    thread.start()
    return thread


@pytest.mark.timeout(120)
def test_the_watcher_and_the_reconcile_start_after_the_searches_that_waited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search sent during the start is answered before the watcher's start, the
    scheduler's and the reconcile take the interpreter from it."""
    daemon = _daemon(tmp_path, FakeEmbedder(), indexed=True)
    inside, let_go = _hold_searches(monkeypatch, daemon)
    daemon.start()
    try:
        searching = _search_in_background(daemon, tmp_path)
        assert inside.wait(WAIT_S)
        time.sleep(0.5)
        assert daemon.watcher is None and daemon.scheduler is None
        assert daemon.progress.last is None and not daemon.progress.running
        let_go.set()
        searching.join(WAIT_S)
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)
        assert daemon.watcher is not None and daemon.scheduler is not None
    finally:
        let_go.set()
        daemon.stop()


@pytest.mark.timeout(120)
def test_a_search_that_does_not_end_holds_the_start_up_work_back_only_so_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(first_answers, "FIRST_ANSWERS_WAIT_S", 0.3)
    daemon = _daemon(tmp_path, FakeEmbedder(), indexed=True)
    inside, let_go = _hold_searches(monkeypatch, daemon)
    daemon.start()
    try:
        _search_in_background(daemon, tmp_path)
        assert inside.wait(WAIT_S)
        wait_until(lambda: daemon.progress.last is not None, WAIT_S)  # the search still held
        assert not let_go.is_set()
        assert daemon.watcher is not None
    finally:
        let_go.set()
        daemon.stop()


@pytest.mark.timeout(120)
def test_a_stop_during_the_start_leaves_no_watcher_or_scheduler_running(tmp_path: Path) -> None:
    embedder = HeldLoad()
    daemon = _daemon(tmp_path, embedder, indexed=True)
    daemon.start()
    try:
        assert embedder.asked.wait(WAIT_S)
    finally:
        stopping = threading.Thread(target=daemon.stop)
        stopping.start()
        embedder.release.set()
        stopping.join(WAIT_S)
    assert not stopping.is_alive()
    assert daemon.watcher is None and daemon.scheduler is None
    left = [t.name for t in threading.enumerate()]
    assert not [name for name in left if name.startswith(("vaultmem-startup", "APScheduler"))
                or "watchdog" in name.lower()]


@pytest.mark.timeout(120)
def test_a_vault_that_cannot_be_watched_stops_the_daemon_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The watcher starts on the start-up thread: its failure still ends the daemon (exit
    code 1, the reason in the status), not a daemon that silently stops following edits."""
    from vaultmem.daemon import watch

    def cannot_watch(self: object) -> None:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watch.VaultWatcher, "start", cannot_watch)
    daemon = _daemon(tmp_path, FakeEmbedder(), indexed=True)
    daemon.start()
    codes: list[int] = []
    serving = threading.Thread(target=lambda: codes.append(daemon.serve_forever()))
    serving.start()
    serving.join(WAIT_S)
    assert codes == [1]
    assert daemon.failure is not None and "inotify watch limit" in daemon.failure
    assert daemon.progress.error == daemon.failure
    assert daemon.closed  # stopped and closed
