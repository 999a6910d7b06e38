"""What the daemon says of its index runs: the last start-up (or on-demand) run's report or
error, beside the index writer's work in progress."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from vaultmem.engine.status_results import DaemonIndexing
from vaultmem.pipeline.index_ports import ReindexResult, SyncReport
from vaultmem.pipeline.progress import COMPLETE, IndexingNow, IndexState


class IndexingStatus:
    """The last start-up (or on-demand) index run's report or error, and whether one runs; the
    work in progress itself is the index writer's (`IndexSync.indexing`)."""

    def __init__(self) -> None:
        self.running = False
        self.last: ReindexResult | None = None
        self.error: str | None = None

    def view(self, writer: IndexingNow, watched: int) -> DaemonIndexing:
        """`running`: an index run or any sync (a watcher batch too) is under way; `queued`:
        changed notes not yet handed to the index writer (`watched`, the watcher's) or
        waiting for it."""
        return DaemonIndexing(work=writer.work, running=self.running or writer.work.running,
                              queued=watched + writer.waiting, last=self.last, error=self.error)


def finished_report(report: SyncReport) -> ReindexResult:
    """A finished index run's report, as `reindex` answers it and `status` shows it: with
    the time it finished."""
    return report.result(finished=datetime.now(UTC))



PROGRESS_EVERY_S = 10.0  # a progress line at most this often: a human reads them


class ProgressLog:
    """The daemon's log of an index run at a human pace: when the notes are counted (and
    searchable by their words), every PROGRESS_EVERY_S while notes are indexed, with the rate
    and the time left, then `index ready: N notes, M chunks in T s`. Called as the indexer's
    progress callback (notes done, total) from the index writer's thread."""

    def __init__(self, log: logging.Logger, state: Callable[[], IndexState],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log = log
        self._state = state
        self._clock = clock
        self._started = clock()
        self._last: float | None = None  # when the last progress line was written
        self._first = (self._started, 0)  # the first line's time and notes done: the rate's

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        if total == 0 or (self._last is not None and now - self._last < PROGRESS_EVERY_S
                          and done < total):
            return
        if self._last is None:
            words = (", every note searchable by its words" if
                     self._state().by_words == COMPLETE else "")
            self._log.info("indexing %s notes (%.1f s)%s", f"{total:,}", now - self._started,
                           words)
            self._first = (now, done)
        else:
            since, done_then = self._first
            rate = (done - done_then) / (now - since) if now > since else 0.0
            left = (f", about {_duration((total - done) / rate)} left"
                    if rate > 0 and done < total else "")
            self._log.info("indexing: %s of %s notes (%d %%)%s", f"{done:,}", f"{total:,}",
                           100 * done // total, left)
        self._last = now

    def finished(self, report: SyncReport, totals: tuple[int, int]) -> None:
        """The ready line, once the run that indexed notes has ended."""
        if self._last is None and not report.chunks_embedded:
            return  # nothing was indexed: no news
        notes, chunks = totals
        self._log.info("index ready: %s notes, %s chunks in %.1f s", f"{notes:,}",
                       f"{chunks:,}", self._clock() - self._started)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"
