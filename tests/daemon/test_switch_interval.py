"""The daemon lets a waiting thread take the GIL sooner than CPython's default, so a request
is not held up for a time slice at each file stat or catalog query while another thread runs
pure-Python work (a large note being parsed)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon.run import SWITCH_INTERVAL_S, Daemon
from vaultmem_testing.daemon import wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

CPYTHON_DEFAULT_S = 0.005


@pytest.fixture
def default_interval() -> Iterator[float]:
    """CPython's default for the test, whatever a daemon started earlier in this process set;
    the interval as it was afterwards."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(CPYTHON_DEFAULT_S)
    yield CPYTHON_DEFAULT_S
    sys.setswitchinterval(before)


@pytest.mark.timeout(60)
def test_a_started_daemon_shortens_the_switch_interval(
    tmp_path: Path, default_interval: float
) -> None:
    assert default_interval > SWITCH_INTERVAL_S
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(redated_sample_vault(tmp_path / "vault")), "data_dir": str(tmp_path / "d"),
        "embedding_model": "fake", "port": 0})
    daemon = Daemon(daemon_params(settings), build_app(settings, daemon=True).daemon_parts())
    daemon.start()
    try:
        wait_until(lambda: daemon.progress.last is not None, 30)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
    finally:
        daemon.stop()
