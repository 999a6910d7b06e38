"""Burst timing: due `quiet_s` after the last event, or `max_wait_s` after the first."""

from __future__ import annotations

import threading

import pytest

from vaultmem.daemon.debounce import Burst, wait_due


def test_a_burst_is_due_after_its_quiet_spell_or_its_longest_wait() -> None:
    burst = Burst(quiet_s=1.0, max_wait_s=3.0)
    assert burst.due_in(0.0) is None
    burst.add(10.0)
    assert burst.due_in(10.0) == pytest.approx(1.0)
    burst.add(10.5)  # a newer event pushes the quiet spell back
    assert burst.due_in(10.5) == pytest.approx(1.0)
    for t in (11.4, 12.3, 12.9):  # a stream that never pauses ...
        burst.add(t)
    assert burst.due_in(12.9) == pytest.approx(0.1)  # ... is due 3 s after its first event
    burst.end()
    assert burst.due_in(13.0) is None and burst.last_at == 12.9
    burst.add(20.0)  # the next event starts a new burst
    assert burst.due_in(20.0) == pytest.approx(1.0)


def test_negative_times_are_refused() -> None:
    with pytest.raises(ValueError):
        Burst(-1.0)
    with pytest.raises(ValueError):
        Burst(1.0, max_wait_s=-1.0)


@pytest.mark.timeout(10)
def test_wait_due_returns_when_due_and_stops_when_asked() -> None:
    cond, burst = threading.Condition(), Burst(0.05)
    with cond:
        burst.add()
        assert wait_due(cond, burst, lambda: False) is True
        burst.end()
    stop = threading.Event()

    def stopper() -> None:
        stop.set()
        with cond:
            cond.notify_all()

    timer = threading.Timer(0.1, stopper)
    timer.start()
    with cond:
        assert wait_due(cond, burst, stop.is_set) is False  # nothing pending: waits for stop
    timer.join()
