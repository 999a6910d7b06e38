"""What the index writer is doing right now, for `status` and for search answers.

The indexer records each sync it runs (a run): its kind, how many notes it embeds and how many
are written, and the note being embedded when one note is large enough to be embedded in
slices (its chunks done and total). Runs nest: a sync that takes waiting changes between the
slices of a large note (engine/sync_gate.py) runs inside the one it interrupts. Thread-safe:
the writer updates it, `status` and `search` read snapshots from other threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

SCAN = "scan"  # the whole vault compared with the index (start-up, rescan, in-process freshness)
REBUILD = "rebuild"  # everything derived dropped and made again (a model change, --full)
CHANGES = "changes"  # named paths: the watcher's batches, vaultmem's own writes
BUILDING_KINDS = (SCAN, REBUILD)


@dataclass
class Run:
    kind: str
    total: int = 0  # notes to embed in this run
    done: int = 0  # of them, written to the index
    note: str | None = None  # the note embedded in slices now
    chunks_done: int = 0
    chunks_total: int = 0


class IndexProgress:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: list[Run] = []

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

    def planned(self, run: Run, notes: int) -> None:
        with self._lock:
            run.total = notes

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

    def snapshot(self) -> dict[str, Any]:
        """`running`, the outermost run's `kind`, notes `done` / `total` over every running
        run, and `current`: the note embedded in slices (the innermost such), or None."""
        with self._lock:
            runs = [Run(**vars(run)) for run in self._runs]
        current = next(({"path": r.note, "chunks_done": r.chunks_done,
                         "chunks_total": r.chunks_total}
                        for r in reversed(runs) if r.note is not None), None)
        return {
            "running": bool(runs),
            "kind": runs[0].kind if runs else None,
            "done": sum(r.done for r in runs),
            "total": sum(r.total for r in runs),
            "current": current,
        }

    def building(self) -> dict[str, int] | None:
        """While a whole-vault sync (the first index, a rebuild, a start-up catch-up) has notes
        to embed: `{"done", "total"}` of it, so answers can say they are partial."""
        with self._lock:
            outer = self._runs[0] if self._runs else None
            if outer is None or outer.kind not in BUILDING_KINDS or outer.total == 0:
                return None
            return {"done": outer.done, "total": outer.total}
