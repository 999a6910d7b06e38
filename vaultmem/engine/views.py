"""A memory as every answer shows it, and the reads that answer with it: `get`, `review`.

The view adds what the note does not hold: the memory's score now, the sweep's decision and
its review priority (core.decay, core.decisions, core.reinforce).
"""

from __future__ import annotations

from datetime import datetime

from vaultmem.core.decay import score
from vaultmem.core.decisions import decide
from vaultmem.core.memory import ACTIVE
from vaultmem.core.reinforce import review_priority
from vaultmem.engine.parts import EngineParams
from vaultmem.engine.results import MemoryView, ReviewResult
from vaultmem.engine.shapes import obsidian_uri
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.store.memory_store import MemoryStore


class Views:
    def __init__(self, store: MemoryStore, params: EngineParams) -> None:
        self._store = store
        self._params = params

    def view(self, memory: MemoryNote, now: datetime) -> MemoryView:
        params = self._params
        value = score(memory.state, now, params.decay)
        return MemoryView(
            path=memory.path, title=memory.note.title,
            uri=obsidian_uri(params.vault_name, memory.path), state=memory.state,
            score=value, decision=decide(memory.state, now, params.decay, params.policy),
            review_priority=review_priority(value, params.reinforce),
        )

    def get(self, ref: str, now: datetime) -> MemoryView:
        return self.view(self._store.load(ref), now)

    def review(self, now: datetime, *, limit: int = 20) -> ReviewResult:
        items = []
        for memory in self._store.iter_memories():
            if memory.state.status != ACTIVE or memory.state.superseded_by is not None:
                continue
            view = self.view(memory, now)
            if round(view.review_priority, 6) > 0:
                items.append(view)
        # ordered by the priority as answered (rounded), so equal-looking ones go by path
        items.sort(key=lambda v: (-round(v.review_priority, 6), v.path))
        return ReviewResult(items=tuple(items[:limit]), total=len(items))
