"""Debouncing: one burst of events handled once, after the burst ends.

`Burst` says when a burst is due: `quiet_s` after its last event, or `max_wait_s` after its
first (so a stream that never pauses still gets through). `wait_due` sleeps on the caller's
condition until then. The watcher (batches of changed notes) and `AfterQuiet` (an optimise
once edits stop) both debounce with them.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Burst:
    """The timing of one burst of events (monotonic seconds). Not locked: its owner guards it
    with the condition it waits on."""

    def __init__(self, quiet_s: float, max_wait_s: float = math.inf) -> None:
        if quiet_s < 0 or max_wait_s < 0:
            raise ValueError("quiet_s and max_wait_s must not be negative")
        self.quiet_s = quiet_s
        self.max_wait_s = max_wait_s
        self.first_at: float | None = None  # the oldest event not handled yet
        self.last_at: float | None = None  # the latest event, handled or not

    def add(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.last_at = now
        if self.first_at is None:
            self.first_at = now

    def end(self) -> None:
        """The burst is handled; the next event starts a new one."""
        self.first_at = None

    def due_in(self, now: float) -> float | None:
        """Seconds until the burst is due (0 or less: due now); None when there is none."""
        if self.first_at is None or self.last_at is None:
            return None
        return min(self.last_at + self.quiet_s, self.first_at + self.max_wait_s) - now


def wait_due(cond: threading.Condition, burst: Burst, stopping: Callable[[], bool]) -> bool:
    """With `cond` held, sleep until `burst` is due (True) or `stopping()` (False). Whoever
    changes the burst or the stop flag notifies `cond`."""
    while not stopping():
        remaining = burst.due_in(time.monotonic())
        if remaining is None:
            cond.wait()
        elif remaining > 0:
            cond.wait(remaining)
        else:
            return True
    return False


class AfterQuiet:
    """Calls `action` once, `delay_s` after the last `poke()`: a burst of pokes makes one call
    when it ends. One thread; `stop()` cancels a call not yet made."""

    def __init__(self, delay_s: float, action: Callable[[], object], *, name: str) -> None:
        self._burst = Burst(delay_s)
        self._action = action
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        with self._cond:
            self._burst.add()
            self._cond.notify()

    def stop(self, timeout: float = 60.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while self._wait_until_due():
            try:
                self._action()
            except Exception:
                log.exception("%s failed", self._thread.name)

    def _wait_until_due(self) -> bool:
        with self._cond:
            if not wait_due(self._cond, self._burst, lambda: self._stopped):
                return False
            self._burst.end()
            return True
