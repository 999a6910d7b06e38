"""`vaultmem run` stops the cyclic garbage collector while it starts (imports and the index's
first load make ~130k long-lived objects) and the daemon starts it again, with those objects
frozen, once the first answers are given."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon.native import pause_gc, resume_gc
from vaultmem.daemon.run import Daemon
from vaultmem_testing.daemon import wait_until
from vaultmem_testing.sample_vault import redated_sample_vault


@pytest.fixture(autouse=True)
def collector_as_it_was() -> Iterator[None]:
    """The collector running and nothing frozen afterwards, whatever the test did."""
    was_enabled = gc.isenabled()
    yield
    resume_gc()  # a pause the test left behind
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_a_paused_collector_resumes_with_what_was_made_frozen() -> None:
    gc.enable()
    gc.unfreeze()
    pause_gc()
    assert not gc.isenabled()
    kept = [[] for _ in range(100)]  # objects made during the pause
    resume_gc()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)
    frozen = gc.get_freeze_count()
    resume_gc()  # a second resume does nothing
    assert gc.get_freeze_count() == frozen


def test_resume_without_a_pause_changes_nothing() -> None:
    gc.enable()
    gc.unfreeze()
    resume_gc()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_collector_stopped_by_someone_else_stays_stopped() -> None:
    gc.disable()
    pause_gc()
    resume_gc()
    assert not gc.isenabled()


@pytest.mark.timeout(60)
def test_a_started_daemon_runs_the_collector_again(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(redated_sample_vault(tmp_path / "vault")), "data_dir": str(tmp_path / "d"),
        "embedding_model": "fake", "port": 0})
    gc.enable()
    pause_gc()  # as `vaultmem run` does before it builds the app
    daemon = Daemon(daemon_params(settings), build_app(settings, daemon=True).daemon_parts())
    daemon.start()
    try:
        wait_until(lambda: daemon.progress.last is not None, 30)
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        daemon.stop()
