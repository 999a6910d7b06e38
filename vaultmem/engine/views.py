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
from vaultmem.engine.memory_notes import MemoryNote
from vaultmem.engine.memory_store import MemoryStore
from vaultmem.engine.parts import EngineParams
from vaultmem.engine.shapes import JSON, memory_json


class Views:
    def __init__(self, store: MemoryStore, params: EngineParams) -> None:
        self._store = store
        self._params = params

    def view(self, memory: MemoryNote, now: datetime) -> JSON:
        params = self._params
        value = score(memory.state, now, params.decay)
        return memory_json(
            path=memory.path, title=memory.note.title, state=memory.state, score=value,
            decision=decide(memory.state, now, params.decay, params.policy),
            review_priority=review_priority(value, params.reinforce),
            vault_name=params.vault_name,
        )

    def get(self, ref: str, now: datetime) -> JSON:
        return self.view(self._store.load(ref), now)

    def review(self, now: datetime, *, limit: int = 20) -> JSON:
        items = []
        for memory in self._store.iter_memories():
            if memory.state.status != ACTIVE or memory.state.superseded_by is not None:
                continue
            view = self.view(memory, now)
            if view["review_priority"] > 0:
                items.append(view)
        items.sort(key=lambda v: (-v["review_priority"], v["path"]))
        return {"items": items[:limit], "total": len(items)}
