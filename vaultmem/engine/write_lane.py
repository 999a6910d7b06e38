"""The one write lane: the operations that plan and then move memory notes, rewrite them or
rebuild the index run one at a time, whether a request or a scheduled job asked for them.

`app.build_app` makes one `WriteLane` per process; the Api holds it for save, sweep, gc,
promote, merge, reconcile, restore, supersede, forget, edit, undo and reindex, and the
daemon's scheduled sweep, reconcile and consolidation hold the same lane. So a scheduled sweep
never plans from notes a request's merge is moving, and the reverse.

Underneath, the store's lock keeps each single write whole and the index writer's lock
(`SyncGate`) keeps index writes one at a time; the lane sits above both. The order is always
lane first: a thread inside the index writer's lock (the watcher's batch, which also settles
notes moved by hand between the slices of a long sync) never waits for the lane, which is why
watcher batches, the start-up index and the usage flush (in-place `stm_*` writes, no move)
stay out of it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)


class WriteLane:
    """A re-entrant lane: an operation holding it may call another that holds it too."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._state = threading.Lock()  # guards the names below
        self._holder: str | None = None
        self._depth = 0
        self._waiting: list[str] = []

    @contextmanager
    def hold(self, operation: str) -> Iterator[None]:
        """Run the block alone in the lane, after the operation holding it (if any) ends."""
        if not self._lock.acquire(blocking=False):
            with self._state:
                self._waiting.append(operation)
                holder = self._holder
            log.debug("%s waits for %s", operation, holder)
            try:
                self._lock.acquire()
            finally:
                with self._state:
                    self._waiting.remove(operation)
        try:
            with self._state:
                if self._depth == 0:
                    self._holder = operation
                self._depth += 1
            yield
        finally:
            with self._state:
                self._depth -= 1
                if self._depth == 0:
                    self._holder = None
            self._lock.release()

    @property
    def holder(self) -> str | None:
        """The operation in the lane now (the outermost one), or None."""
        with self._state:
            return self._holder

    def waiting(self) -> list[str]:
        """The operations waiting for the lane, in the order they came."""
        with self._state:
            return list(self._waiting)
