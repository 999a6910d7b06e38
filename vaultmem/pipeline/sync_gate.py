"""The single index writer, which lets waiting changes in between the slices of a long sync.

One sync writes the index at a time. A caller that wants its paths synced while another sync
runs (a watcher batch during the first index, or while a large note is embedded) leaves them
here and waits; the running sync, between two embedding slices (`Indexer.sync(between=…)`),
syncs every waiting set of paths it is not itself about to write, and hands each caller its
report. So a long index run delays a small edit by one slice and a large note by one piece
(a 1-chunk model call, see slices.LARGE_PIECE_CHUNKS), not by all of its own work. Paths the
running sync, or any sync it was let in between, has still to write wait for it to finish
(their newer state must not be overwritten by the older one it holds).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from vaultmem.pipeline.index_ports import Progress, SyncReport
from vaultmem.pipeline.indexer import Indexer
from vaultmem.vault.notes import Note

log = logging.getLogger(__name__)
# Paths to sync and the notes vaultmem wrote among them (see Indexer.sync), or None.
Source = Callable[[frozenset[str]], tuple[Collection[str], Mapping[str, Note]] | None]
MAX_NESTING = 3  # syncs run between the slices of a sync that itself runs between slices …
WAIT_STEP_S = 0.05  # a waiting caller re-checks the writer's lock at least this often


@dataclass(eq=False)
class _Waiting:
    paths: frozenset[str]
    written: Mapping[str, Note]
    report: SyncReport | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class SyncGate:
    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer
        self._lock = threading.RLock()  # one index writer at a time
        self._cond = threading.Condition()
        self._waiting: list[_Waiting] = []
        self._depth = 0  # syncs running on the writer's thread (guarded by _lock)
        # what each sync interrupted by a let-in has yet to write, outermost first (_lock)
        self._unwritten: list[frozenset[str]] = []
        self._sources: list[tuple[Source, Callable[[SyncReport], None]]] = []

    def let_in(self, source: Source, on_report: Callable[[SyncReport], None]) -> None:
        """Between slices, also sync what `source` hands over (paths it takes from a queue of
        its own, such as the watcher's, given the paths the running sync has yet to write),
        and give `on_report` the report. The caller of the running sync may be the one that
        would hand them over otherwise (the watcher's thread)."""
        self._sources.append((source, on_report))

    def queued(self) -> int:
        """Paths left here by callers waiting for the writer."""
        with self._cond:
            return sum(len(w.paths) for w in self._waiting)

    def reindex(self, *, full: bool, progress: Progress | None) -> SyncReport:
        with self._writing(blocking=True):
            self._depth += 1
            try:
                if full:
                    return self.indexer.rebuild(progress, between=self._between)
                return self.indexer.sync(progress=progress, between=self._between)
            finally:
                self._depth -= 1

    def sync_paths(self, paths: Collection[str], written: Mapping[str, Note]) -> SyncReport:
        """Sync `paths` now, or, while another sync runs, as soon as it lets them in."""
        waiting = _Waiting(frozenset(paths), written)
        with self._cond:
            self._waiting.append(waiting)
        while True:
            with self._writing(blocking=False) as mine:
                if mine:
                    with self._cond:
                        if waiting in self._waiting:
                            self._waiting.remove(waiting)
                    if not waiting.done.is_set():
                        return self._sync(waiting.paths, waiting.written)
            with self._cond:
                if not waiting.done.is_set():
                    self._cond.wait(WAIT_STEP_S)
            if waiting.done.is_set():
                if waiting.error is not None:
                    raise waiting.error
                assert waiting.report is not None
                return waiting.report

    def sync_paths_if_free(self, paths: Collection[str],
                           written: Mapping[str, Note]) -> SyncReport | None:
        """Sync `paths` now if no other sync runs; None at once otherwise (the caller leaves
        them to the watcher's batch of the same notes, which the running sync lets in)."""
        with self._writing(blocking=False) as mine:
            if mine:
                return self._sync(frozenset(paths), written)
        return None

    @contextmanager
    def _writing(self, *, blocking: bool) -> Iterator[bool]:
        """The writer's lock (True), or False when another thread holds it and not
        `blocking`; whoever waits hears of its release."""
        if not self._lock.acquire(blocking=blocking):
            yield False
            return
        try:
            yield True
        finally:
            self._lock.release()
            with self._cond:
                self._cond.notify_all()

    def _sync(self, paths: Collection[str], written: Mapping[str, Note]) -> SyncReport:
        self._depth += 1
        try:
            between = self._between if self._depth <= MAX_NESTING else None
            return self.indexer.sync(paths=paths, written=written, between=between)
        finally:
            self._depth -= 1

    def _between(self, unwritten: frozenset[str]) -> None:
        """On the writer's thread, holding the lock: sync what waits and is not `unwritten`,
        nor left to write by a sync this one was let in between (a sync let in may let others
        in, MAX_NESTING deep: each waits for every enclosing sync, not only its own, or the
        older state an outer sync holds would be written over the newer one, e.g. the record
        of a note deleted meanwhile)."""
        self._unwritten.append(unwritten)
        try:
            held = frozenset().union(*self._unwritten)
            self._let_in_callers(held)
            for source, on_report in self._sources:
                got = source(held)
                if got is not None:
                    try:
                        on_report(self._sync(*got))
                    except Exception:  # theirs to report, not the interrupted sync's failure
                        log.exception("syncing %d changed paths between slices failed",
                                      len(got[0]))
        finally:
            self._unwritten.pop()

    def _let_in_callers(self, unwritten: frozenset[str]) -> None:
        with self._cond:
            taken = [w for w in self._waiting if not w.paths & unwritten]
            for waiting in taken:
                self._waiting.remove(waiting)
        if not taken:
            return
        paths = frozenset().union(*(w.paths for w in taken))
        written = {k: v for w in taken for k, v in w.written.items()}
        try:
            report = self._sync(paths, written)
        except Exception as exc:  # the callers' failure, not the interrupted sync's
            with self._cond:
                for waiting in taken:
                    waiting.error = exc
                    waiting.done.set()
                self._cond.notify_all()
            return
        with self._cond:
            for waiting in taken:
                waiting.report = report
                waiting.done.set()
            self._cond.notify_all()
