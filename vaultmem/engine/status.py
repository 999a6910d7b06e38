"""`status`: what the vault holds (notes, memories by status and type, the sweep's decisions),
how much of it is indexed, and how much of it is not English."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from vaultmem.core.decay import score
from vaultmem.core.memory import ACTIVE, MemoryState
from vaultmem.core.planning import plan_sweep
from vaultmem.engine.model_choice import ModelInUse, sample_languages
from vaultmem.engine.parts import EngineParams
from vaultmem.engine.shapes import coverage, languages
from vaultmem.engine.status_results import (
    Decisions,
    FileMemory,
    FileStatus,
    Languages,
    MemoryCounts,
    StatusResult,
)
from vaultmem.index.base import Embedder, NoteRecord
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.note_records import with_dated_problems
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.ignore import IgnoreRules


class Status:
    def __init__(self, *, root: Path, rules: IgnoreRules, catalog: Catalog, store: MemoryStore,
                 embedder: Embedder, model: ModelInUse, params: EngineParams) -> None:
        self._root = root
        self._rules = rules
        self._catalog = catalog
        self._store = store
        self._embedder = embedder
        self._model = model
        self._params = params
        self._language_cache: tuple[int, Languages] | None = None

    def snapshot(self) -> Snapshot:
        """A snapshot for one `status` call, shared with its other parts (sync copies,
        unindexed changes)."""
        return self._store.snapshot()

    def status(self, now: datetime, *, per_file: bool = False,
               snapshot: Snapshot | None = None) -> StatusResult:
        """`snapshot`: the caller's, when it reads the catalog and the memories too."""
        snapshot = snapshot or self._store.snapshot()
        records = snapshot.records
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        active: list[tuple[str, MemoryState]] = []
        states: list[tuple[str, MemoryState]] = []
        for memory in self._store.iter_memories(snapshot):
            states.append((memory.path, memory.state))
            by_status[memory.state.status] = by_status.get(memory.state.status, 0) + 1
            kind = memory.state.type or "untyped"
            by_type[kind] = by_type.get(kind, 0) + 1
            if memory.state.status == ACTIVE:
                active.append((memory.path, memory.state))
        records = with_dated_problems(records, states, now)
        # the sweep's own plan, so the counts include what the active-memory cap archives
        plan = plan_sweep(active, now, self._params.decay, self._params.policy)
        decisions = Decisions(keep=len(plan.keep), forget=len(plan.archive),
                              promote=len(plan.promote))
        covered = coverage(records, self._rules.problems)
        if per_file:
            covered = replace(covered, files=self._files(records, dict(states), now))
        return StatusResult(
            vault=str(self._root),
            notes=len(records),
            memories=MemoryCounts(total=sum(by_status.values()),
                                  by_status=tuple(by_status.items()),
                                  by_type=tuple(by_type.items()), decisions=decisions),
            coverage=covered,
            embedder=self._embedder.name,
            model=self._model,
            languages=self._languages(records),
        )

    def _files(self, records: dict[str, NoteRecord], states: dict[str, MemoryState],
               now: datetime) -> tuple[FileStatus, ...]:
        """Every file the index knows: its index status and chunks, and for a memory note its
        id, status and score as of `now` (`vaultmem status --files`)."""
        return tuple(
            FileStatus(r.path, r.status, r.reason, r.chunk_count,
                       None if (state := states.get(r.path)) is None else FileMemory(
                           state.id, state.status, score(state, now, self._params.decay)))
            for r in sorted(records.values(), key=lambda r: r.path)
        )

    def _languages(self, records: dict[str, NoteRecord]) -> Languages:
        """How much of the vault is not English, judged on a sample of its indexed notes (read
        from the vault: status must not load the index). Kept until the number of indexed notes
        changes."""
        indexed = [p for p, r in records.items() if r.status == "indexed"]
        cached = self._language_cache
        if cached is not None and cached[0] == len(indexed):
            return cached[1]
        result = languages(sample_languages(self._root, indexed), self._embedder.name,
                                self._model.setting)
        self._language_cache = (len(indexed), result)
        return result
