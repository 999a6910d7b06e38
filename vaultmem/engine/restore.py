"""Restoring archived memories: on request, and when the user moves a note by hand.

`restore(ref, now)` brings an archived memory back: its state becomes `stm_status: active` with
a fresh `stm_last_used` (its history - created, use count, strength, reviews - is kept, and a
`stm_merged_into` left by a merge is dropped: the memory stands on its own again), written
guarded in place first, then the note moves from the archive folder back into the memory
folder (never overwriting). A crash between the two leaves an active note in the archive
folder; the next sweep's `finish_moves` moves it out.

Moving a note by hand is understood the same way (the rule in docs/architecture.md): when the
index sees a memory move out of the archive folder while its state still says archived, it is
restored where the user put it (active, fresh `last_used`); a memory moved into the archive
folder while active is archived. Both are vaultmem's normal guarded `stm_*` writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from vaultmem.core.memory import ACTIVE, ARCHIVED, MemoryState
from vaultmem.engine.lifecycle import Lifecycle, _inside
from vaultmem.engine.memory_store import MemoryNote, MemoryStore, check_writable, writable
from vaultmem.engine.shapes import JSON
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError


def restored_state(state: MemoryState, now: datetime) -> MemoryState:
    """Active again, used now (never moved back in time), its history kept."""
    return replace(state, status=ACTIVE, last_used=max(state.last_used, now), merged_into=None)


class Restorer:
    def __init__(self, lifecycle: Lifecycle) -> None:
        self.lifecycle = lifecycle
        self.engine = lifecycle.engine
        self.params = lifecycle.params

    def restore(self, ref: str, now: datetime) -> JSON:
        """Bring an archived memory back into the memory folder as an active memory."""
        memories = self.engine.memories
        archive = self.params.archive_folder
        with memories.lock:
            memory = memories.load(ref)
            in_archive = _inside(memory.path, archive)
            if memory.state.status != ARCHIVED and not in_archive:
                raise InvalidInput(f"{memory.path} is {memory.state.status}, not archived: "
                                   "there is nothing to restore")
            check_writable(memory)
            if memory.state.status == ARCHIVED:
                memory = memories.write_state_now(memory, restored_state(memory.state, now))
        target = memory.path
        if in_archive:
            moved = self.lifecycle._move(memory.path, self.params.memory_folder)
            if moved is None:
                raise NoteError(f"{memory.path} was moved or deleted while it was restored")
            target = moved
        restored = memories.load(target)
        return {"restored": {"id": restored.state.id, "from": memory.path, "to": target},
                "memory": self.engine.view(restored, now)}

    def settle_moves(self, moves: Iterable[tuple[str, str]], now: datetime) -> list[JSON]:
        """Understand notes the user moved across the archive folder's edge (see above)."""
        done = []
        for old, new in moves:
            change = self._settle(old, new, now)
            if change is not None:
                done.append(change)
        return done

    def _settle(self, old: str, new: str, now: datetime) -> JSON | None:
        archive = self.params.archive_folder
        was_in, now_in = _inside(old, archive), _inside(new, archive)
        if was_in == now_in:
            return None
        memories = self.engine.memories
        with memories.lock:
            memory = memories.try_load(new)
            if memory is None or not writable(memory):
                return None
            if was_in and memory.state.status == ARCHIVED:
                new_state = restored_state(memory.state, now)
            elif now_in and memory.state.status == ACTIVE:
                new_state = replace(memory.state, status=ARCHIVED)
            else:
                return None
            if not _write(memories, memory, new_state):
                return None
        self.engine.sync_paths([new])
        return {"id": memory.state.id, "path": new, "status": new_state.status}


def _write(memories: MemoryStore, memory: MemoryNote, new: MemoryState) -> bool:
    """The guarded write; False when the user edited the note meanwhile (it is then left as
    it is: `vaultmem restore` or another move settles it)."""
    try:
        memories.write_state_now(memory, new)
    except (ConcurrentEdit, NoteError):
        return False
    return True
