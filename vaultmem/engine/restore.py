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
from vaultmem.core.supersede import forget_predecessor, released
from vaultmem.engine.moves import Mover, inside
from vaultmem.engine.results import RestoreResult
from vaultmem.engine.status_results import Settled
from vaultmem.engine.superseder import find_path
from vaultmem.engine.upkeep_results import Move
from vaultmem.engine.views import Views
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote, Rewrite, check_writable, writable
from vaultmem.store.memory_store import MemoryStore


def restored_state(state: MemoryState, now: datetime) -> MemoryState:
    """Active again, used now (never moved back in time), its history kept; current again
    (no longer superseded)."""
    return released(replace(state, status=ACTIVE, last_used=max(state.last_used, now),
                            merged_into=None))


def _successor_release(current: list[MemoryNote], memory: MemoryNote) -> list[Rewrite]:
    """The successor's `stm_supersedes` dropped when `memory` (superseded) is restored."""
    return [Rewrite(m, forget_predecessor(m.state, memory.state.id)) for m in current[1:]
            if memory.state.superseded_by == m.state.id and m.state.supersedes == memory.state.id
            and writable(m)]


class Restorer:
    def __init__(self, *, store: MemoryStore, sync: IndexSync, views: Views, mover: Mover,
                 memory_folder: str, archive_folder: str) -> None:
        self.store = store
        self.sync = sync
        self.views = views
        self.mover = mover
        self.memory_folder = memory_folder
        self.archive_folder = archive_folder

    def restore(self, ref: str, now: datetime) -> RestoreResult:
        """Bring an archived memory back into the memory folder as an active memory."""
        memories = self.store
        archive = self.archive_folder

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            memory = current[0]
            if memory.state.status != ARCHIVED and not inside(memory.path, archive):
                raise InvalidInput(f"{memory.path} is {memory.state.status}, not archived: "
                                   "there is nothing to restore")
            check_writable(memory)
            archived = memory.state.status == ARCHIVED
            if not archived:
                return [Rewrite(memory, memory.state)]
            return [Rewrite(memory, restored_state(memory.state, now)),
                    *_successor_release(current, memory)]

        path = memories.resolve(ref)
        successor = find_path(memories, memories.load(path).state.superseded_by)
        memory, *_ = memories.rewrite([path, *([successor] if successor else [])], plan,
                                      strict=True)
        in_archive = inside(memory.path, archive)
        target = memory.path
        if in_archive:
            moved = self.mover.into(memory.path, self.memory_folder)
            if moved is None:
                raise NoteError(f"{memory.path} was moved or deleted while it was restored")
            target = moved
        restored = memories.load(target)
        return RestoreResult(restored=Move(restored.state.id, memory.path, target),
                             memory=self.views.view(restored, now))

    def settle_moves(self, moves: Iterable[tuple[str, str]], now: datetime) -> list[Settled]:
        """Understand notes the user moved across the archive folder's edge (see above)."""
        done = []
        for old, new in moves:
            change = self._settle(old, new, now)
            if change is not None:
                done.append(change)
        return done

    def _settle(self, old: str, new: str, now: datetime) -> Settled | None:
        archive = self.archive_folder
        was_in, now_in = inside(old, archive), inside(new, archive)
        if was_in == now_in:
            return None
        settled: list[MemoryState] = []

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            memory = current[0] if current and current[0].path == new else None
            if memory is None or not writable(memory):
                return []
            if was_in and memory.state.status == ARCHIVED:
                settled.append(restored_state(memory.state, now))
                return [Rewrite(memory, settled[0]), *_successor_release(current, memory)]
            if now_in and memory.state.status == ACTIVE:
                settled.append(replace(memory.state, status=ARCHIVED))
                return [Rewrite(memory, settled[0])]
            return []

        store = self.store
        successor = find_path(store, _superseded_by(store, new)) if was_in else None
        try:
            written = store.rewrite([new, *([successor] if successor else [])], plan)
        except (ConcurrentEdit, NoteError):
            # the user edited the note meanwhile: it is left as it is (`vaultmem restore` or
            # another move settles it)
            return None
        if not written:
            return None
        self.sync.sync_paths([new, *([successor] if successor else [])])
        return Settled(id=written[0].state.id, path=new, status=settled[0].status)


def _superseded_by(store: MemoryStore, path: str) -> str | None:
    memory = store.try_load(path)
    return memory.state.superseded_by if memory is not None else None
