"""What the index writer is doing right now, for `status` and for search answers.

The indexer records each sync it runs (a run): its kind, how many notes it embeds and how many
are written, and the note being embedded when one note is large enough to be embedded in
slices (its chunks done and total), and whether a whole-vault run has made every note
searchable by its words yet (pipeline/words_first.py: before any vector). Runs nest: a sync
that takes waiting changes between the slices of a large note (pipeline/sync_gate.py) runs
inside the one it interrupts. Thread-safe: the writer updates it, `status` and `search` read
snapshots from other threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

SCAN = "scan"  # the whole vault compared with the index (start-up, rescan, in-process freshness)
REBUILD = "rebuild"  # everything derived dropped and made again (a model change, --full)
CHANGES = "changes"  # named paths: the watcher's batches, vaultmem's own writes
BUILDING_KINDS = (SCAN, REBUILD)

# The index's state as every search answer says it (`state`)
STARTING = "starting"  # the daemon serves, its first whole-vault sync has not counted the notes
INDEXING = "indexing"  # a whole-vault sync has notes to index: answers are partial
READY = "ready"  # nothing left to index: answers are complete
PARTIAL, COMPLETE = "partial", "complete"  # by_words, by_meaning


@dataclass(frozen=True)
class IndexState:
    """What an answer from the index can promise: `by_words` complete once every note's names,
    properties and text are searchable, `by_meaning` once every chunk has its vector; `done` /
    `total`: the notes whose vectors are written, while indexing."""

    state: str
    by_words: str
    by_meaning: str
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class SlicedNote:
    """The note embedded in slices now: its chunks done and total."""

    path: str
    chunks_done: int
    chunks_total: int


@dataclass(frozen=True)
class IndexWork:
    """What the index writer does now: whether a run is under way, the outermost run's kind,
    notes done / total over every running run, and the note embedded in slices (the innermost
    such), or None."""

    running: bool
    kind: str | None
    done: int
    total: int
    current: SlicedNote | None


IDLE = IndexWork(running=False, kind=None, done=0, total=0, current=None)


@dataclass(frozen=True)
class IndexingNow:
    """The index writer's work (`IndexSync.indexing`) and the paths waiting for it."""

    work: IndexWork
    waiting: int


@dataclass
class Run:
    kind: str
    total: int = 0  # notes to embed in this run
    done: int = 0  # of them, written to the index
    note: str | None = None  # the note embedded in slices now
    words_pending: bool = False  # notes planned whose words are not searchable yet
    chunks_done: int = 0
    chunks_total: int = 0


class IndexProgress:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: list[Run] = []
        self._awaiting_scan = False  # the state is STARTING until a whole-vault run counts

    def await_scan(self) -> None:
        """A whole-vault sync is coming (the daemon's start-up): until it has counted the
        notes, answers say the index state is not known yet."""
        with self._lock:
            self._awaiting_scan = True

    # the writer's side --------------------------------------------------------------------

    def begin(self, kind: str) -> Run:
        run = Run(kind)
        with self._lock:
            self._runs.append(run)
        return run

    def end(self, run: Run) -> None:
        with self._lock:
            if run in self._runs:
                self._runs.remove(run)
            if run.kind in BUILDING_KINDS:
                self._awaiting_scan = False

    def outermost(self, run: Run) -> bool:
        """Whether `run` is no sync let in between the slices of another."""
        with self._lock:
            return bool(self._runs) and self._runs[0] is run

    def planned(self, run: Run, notes: int) -> None:
        """`notes` to embed: their words are searchable once `words_written` says so (words
        first) or their vectors are written."""
        with self._lock:
            run.total = notes
            run.words_pending = notes > 0
            if run.kind in BUILDING_KINDS:
                self._awaiting_scan = False

    def words_written(self, run: Run) -> None:
        """Every planned note of `run` is searchable by its words now."""
        with self._lock:
            run.words_pending = False

    def written(self, run: Run, notes: int) -> None:
        with self._lock:
            run.done += notes

    def slicing(self, run: Run, note: str | None, chunks_total: int = 0) -> None:
        """`note` is embedded in slices from now on (None: no note is)."""
        with self._lock:
            run.note, run.chunks_done, run.chunks_total = note, 0, chunks_total

    def sliced(self, run: Run, chunks: int) -> None:
        with self._lock:
            run.chunks_done += chunks

    # the readers' side --------------------------------------------------------------------

    def snapshot(self) -> IndexWork:
        """The running runs as one (see IndexWork)."""
        with self._lock:
            runs = [Run(**vars(run)) for run in self._runs]
        current = next((SlicedNote(r.note, r.chunks_done, r.chunks_total)
                        for r in reversed(runs) if r.note is not None), None)
        return IndexWork(
            running=bool(runs),
            kind=runs[0].kind if runs else None,
            done=sum(r.done for r in runs),
            total=sum(r.total for r in runs),
            current=current,
        )

    def state(self) -> IndexState:
        """The index's state for an answer (see IndexState)."""
        with self._lock:
            if self._awaiting_scan:
                return IndexState(STARTING, PARTIAL, PARTIAL)
            outer = self._runs[0] if self._runs else None
            if outer is None or outer.kind not in BUILDING_KINDS or outer.total == 0:
                return IndexState(READY, COMPLETE, COMPLETE)
            words = PARTIAL if outer.words_pending and outer.done < outer.total else COMPLETE
            return IndexState(INDEXING, words, PARTIAL, outer.done, outer.total)

    def building(self) -> dict[str, int] | None:
        """While a whole-vault sync (the first index, a rebuild, a start-up catch-up) has notes
        to embed: `{"done", "total"}` of it, so answers can say they are partial."""
        with self._lock:
            outer = self._runs[0] if self._runs else None
            if outer is None or outer.kind not in BUILDING_KINDS or outer.total == 0:
                return None
            return {"done": outer.done, "total": outer.total}
