"""Uses of a memory: touch, feedback, pin, observe; each one change through the store.

A use is a pure function of the memory (core.reinforce) applied by `MemoryStore.update` under
the store's lock; in the daemon it lands in the usage journal, in-process in the note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from vaultmem.core.memory import MemoryState, future_problem
from vaultmem.core.reinforce import ReinforceParams, adjust_strength, observe, touch
from vaultmem.engine.results import MemoryView, Observation, ObserveResult
from vaultmem.engine.views import Views
from vaultmem.errors import InvalidInput
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.store.memory_store import MemoryStore


class Uses:
    def __init__(self, store: MemoryStore, views: Views, params: ReinforceParams) -> None:
        self._store = store
        self._views = views
        self._params = params

    def touch(self, ref: str, now: datetime, *, boost: bool = False) -> MemoryView:
        def use(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            return touch(memory.state, now, self._params, boost=boost)

        return self._views.view(self._store.update(ref, use), now)

    def feedback(self, ref: str, helpful: bool, now: datetime) -> MemoryView:
        """Helpful: a use with a strength boost. Unhelpful: strength lowered by the feedback
        penalty (floor 0), not counted as a use."""
        if helpful:
            return self.touch(ref, now, boost=True)
        penalty = -self._params.feedback_penalty

        def lower(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            return adjust_strength(memory.state, penalty, self._params)

        return self._views.view(self._store.update(ref, lower), now)

    def set_pinned(self, ref: str, pinned: bool, now: datetime) -> MemoryView:
        """Pin (never forgotten, archived or merged away) or unpin a memory; not a use."""
        updated = self._store.update(ref, lambda memory: replace(memory.state, pinned=pinned))
        return self._views.view(updated, now)

    def observe(self, refs: Sequence[str], context_tags: Sequence[str],
                now: datetime) -> ObserveResult:
        if not refs:
            raise InvalidInput("give at least one memory id to observe")
        cross: dict[str, bool] = {}

        def use(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            new, cross[memory.path] = observe(memory.state, now, context_tags, self._params)
            return new

        return ObserveResult(observed=tuple(
            Observation(self._views.view(memory, now), cross[memory.path])
            for memory in self._store.update_each(refs, use)))  # all or nothing


def _check_use(memory: MemoryNote, now: datetime) -> None:
    """A use may not update a memory whose dates lie in the future."""
    problem = future_problem(memory.state, now)
    if problem is not None:
        raise InvalidInput(f"{memory.path}: {problem}; fix the note's dates first")
