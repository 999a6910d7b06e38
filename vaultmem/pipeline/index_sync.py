"""IndexSync: the single index writer every use case syncs through.

The watcher's batches, vaultmem's own writes, the usage flush and reindexes all reach the
indexer through one `SyncGate` (one writer at a time, others let in between a long sync's
slices). Notes the flush wrote are handed to the indexer as written, so the watcher's echo of
those writes needs no read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection

from vaultmem.pipeline.index_ports import Progress, SyncReport
from vaultmem.pipeline.indexer import Indexer
from vaultmem.pipeline.progress import IndexingNow, IndexState
from vaultmem.pipeline.sync_gate import SyncGate
from vaultmem.store.journal import FlushReport
from vaultmem.store.memory_store import MemoryStore
from vaultmem.vault.notes import Note


class IndexSync:
    def __init__(self, indexer: Indexer, store: MemoryStore, *, starting: bool = False) -> None:
        """`starting`: a whole-vault sync is coming before anything else (the daemon's
        start-up reconcile); answers say "starting" until it has counted the notes."""
        self._indexer = indexer
        if starting:
            indexer.progress.await_scan()
        self._store = store
        self._gate = SyncGate(indexer)  # one index writer at a time
        self._written: dict[str, Note] = {}  # flushed notes the catalog has not recorded yet
        self._written_lock = threading.Lock()

    def stop(self) -> None:
        """End a sync under way before its next embedding slice, and every later one (the
        daemon is stopping; see `Indexer.stop`)."""
        self._indexer.stop()

    def reindex(self, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
        return self._gate.reindex(full=full, progress=progress)

    def flush_usage(self) -> FlushReport:
        """Write the journal's pending uses into their notes (the daemon's flush job) and record
        the notes as written in the catalog: no note is read again, LanceDB is not written.
        While another sync runs, the flush does not wait for it: the catalog learns of the
        notes from the watcher's batch of them (let in between the sync's slices).
        Each note is known as written from the moment it is, so the watcher's echo of a write
        that arrives while the flush goes on needs no read either."""
        report = self._store.flush(on_written=self._remember_written)
        if report.written:
            written = self._take_written(report.written)
            if self._gate.sync_paths_if_free(report.written, written) is None:
                # a long sync runs (the first index, a large note): the flush never waits
                # behind it; the watcher's batch of these notes takes them as written
                with self._written_lock:
                    for path, note in written.items():
                        self._written.setdefault(path, note)
        return report

    def _remember_written(self, note: Note) -> None:
        with self._written_lock:
            self._written[note.path] = note

    def sync_paths(self, paths: Collection[str]) -> SyncReport:
        """Sync just these paths (the watcher's batches, vaultmem's own writes); a note the
        flush wrote is taken as written while its file is (see Indexer.sync)."""
        return self._gate.sync_paths(paths, self._take_written(paths))

    def _take_written(self, paths: Collection[str]) -> dict[str, Note]:
        with self._written_lock:
            return {p: self._written.pop(p) for p in paths if p in self._written}

    def let_in(self, take: Callable[[frozenset[str]], Collection[str]],
               on_report: Callable[[SyncReport], None]) -> None:
        """Between the slices of a long sync, also sync the paths `take` hands over (it is
        given the paths that sync has yet to write): the watcher's next batches."""
        def source(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, Note]] | None:
            paths = take(unwritten)
            return (paths, self._take_written(paths)) if paths else None
        self._gate.let_in(source, on_report)

    def indexing(self) -> IndexingNow:
        """What the index writer is doing: the running syncs' notes done / total, the note
        embedded in slices, and `waiting`: paths left for the writer by other callers."""
        return IndexingNow(self._indexer.progress.snapshot(), waiting=self._gate.queued())

    def building(self) -> dict[str, int] | None:
        """The first index (or a rebuild) under way, for search answers; None otherwise."""
        return self._indexer.progress.building()

    def state(self) -> IndexState:
        """The index's state every search answer carries (pipeline/progress.py)."""
        return self._indexer.progress.state()
