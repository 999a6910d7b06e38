"""The daemon's main thread sleeps until it is stopped (daemon/stop_flag.py): by another
thread, or by a stopping signal whatever thread the signal reached; other signals do not end
the sleep, and nothing is left open."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from vaultmem.daemon.stop_flag import StopFlag, signal_wakeups

WAIT_S = 10.0


def _later(delay_s: float, action: object) -> threading.Thread:
    def run() -> None:
        time.sleep(delay_s)
        action()  # type: ignore[operator]

    thread = threading.Thread(target=run, name="test-later", daemon=True)
    thread.start()
    return thread


@contextmanager
def _recorded(*signums: int) -> Iterator[list[int]]:
    """Python handlers that only record, as the daemon's do."""
    seen: list[int] = []
    previous = {n: signal.signal(n, lambda n, frame: seen.append(n)) for n in signums}
    try:
        yield seen
    finally:
        for n, handler in previous.items():
            signal.signal(n, handler)


@pytest.mark.timeout(60)
def test_a_stop_set_by_another_thread_ends_the_wait() -> None:
    flag = StopFlag()
    setter = _later(0.3, flag.set)
    started = time.monotonic()
    assert flag.wait() == 0
    assert flag.is_set() and 0.25 < time.monotonic() - started < WAIT_S
    setter.join(WAIT_S)
    assert flag.wait() == 0  # at once once set


@pytest.mark.timeout(60)
def test_a_stopping_signal_ends_the_wait_and_others_do_not() -> None:
    flag = StopFlag()
    backstop = _later(WAIT_S, flag.set)  # a broken wake-up fails the test, it does not hang
    pid = os.getpid()
    with _recorded(signal.SIGUSR1, signal.SIGUSR2) as seen, signal_wakeups() as wakeups:
        _later(0.2, lambda: os.kill(pid, signal.SIGUSR1))  # not a stopping one
        sent_at: list[float] = []
        _later(0.6, lambda: (sent_at.append(time.monotonic()), os.kill(pid, signal.SIGUSR2)))
        got = flag.wait(wakeups, (signal.SIGUSR2,))
        woke = time.monotonic()
    assert got == signal.SIGUSR2 and not flag.is_set()
    assert sent_at and 0 <= woke - sent_at[0] < WAIT_S / 2
    time.sleep(0.05)  # let the Python handlers run, if they have not yet
    assert signal.SIGUSR1 in seen and signal.SIGUSR2 in seen
    flag.set()
    backstop.join(WAIT_S + 1)


@pytest.mark.timeout(60)
def test_the_wakeup_fd_is_given_back_and_the_flag_leaves_nothing_open() -> None:
    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    flag = StopFlag()
    with signal_wakeups():
        _later(0.1, flag.set)
        assert flag.wait() == 0
    assert signal.set_wakeup_fd(before) == before  # restored on leaving the block
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds
