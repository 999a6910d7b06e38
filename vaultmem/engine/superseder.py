"""Explicit updates: a newer memory supersedes a stale one, and the undo (`unsupersede`).

Both notes are written through the memory store's `rewrite`, under its lock, from the notes as
they are now: the successor's `stm_supersedes` first, then the stale memory's
`stm_superseded_by` (so a memory is never marked stale without its successor naming it). Only
`stm_*` lines change. The rules (what may supersede what) are `core.supersede`'s.

The two writes are whole or nothing: when the user edits the stale note between them (its
guarded write finds it changed), both are planned again from the notes as they are then (the
successor's link, written already, is kept); after ATTEMPTS tries the successor's link is taken
back and the supersede refused (ConcurrentEdit), so no one-sided link is left behind.
"""

from __future__ import annotations

import logging
from datetime import datetime

from vaultmem.core.supersede import (
    SupersedeRefused,
    dismissed,
    forget_predecessor,
    released,
    supersede,
)
from vaultmem.engine.results import SupersedeResult, UnsupersedeResult
from vaultmem.engine.views import Views
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError, NotFound
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote, Rewrite, check_writable
from vaultmem.store.memory_store import MemoryStore, Plan

log = logging.getLogger(__name__)
ATTEMPTS = 3  # plans of a supersede whose stale note its user keeps editing meanwhile


def find_path(store: MemoryStore, memory_id: str | None) -> str | None:
    """The note of the memory with this id, or None when no note in the vault has it."""
    if memory_id is None:
        return None
    try:
        return store.resolve(memory_id)
    except (NotFound, InvalidInput):
        return None


class Superseder:
    def __init__(self, store: MemoryStore, sync: IndexSync, views: Views) -> None:
        self.store = store
        self.sync = sync
        self.views = views

    def supersede(self, old_ref: str, new_ref: str, now: datetime) -> SupersedeResult:
        """`new_ref` replaces `old_ref`: both notes gain their link; nothing else changes."""
        old_path, new_path = self.store.resolve(old_ref), self.store.resolve(new_ref)
        if old_path == new_path:
            raise InvalidInput("a memory cannot supersede itself")

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            old, new = _pick(current, old_path), _pick(current, new_path)
            check_writable(old)
            check_writable(new)
            try:
                old_state, new_state = supersede(old.state, new.state)
            except SupersedeRefused as exc:
                raise InvalidInput(str(exc)) from None
            return [Rewrite(new, new_state), Rewrite(old, old_state)]

        try:
            written = self._attempts([old_path, new_path], plan)
        except ConcurrentEdit:
            self._take_back_link(new_path, old_path)
            raise
        finally:
            self.sync.sync_paths([old_path, new_path])
        new, old = written
        return SupersedeResult(superseded=self.views.view(old, now),
                               by=self.views.view(new, now))

    def _attempts(self, paths: list[str], plan: Plan) -> list[MemoryNote]:
        for attempt in range(ATTEMPTS):
            try:
                return self.store.rewrite(paths, plan, strict=True)
            except ConcurrentEdit:
                if attempt + 1 == ATTEMPTS:
                    raise
                log.info("%s changed during a supersede: planned again", paths)
        raise AssertionError("unreachable")

    def _take_back_link(self, new_path: str, old_path: str) -> None:
        """The successor's half of a supersede whose other half could not be written."""
        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            new = next((m for m in current if m.path == new_path), None)
            old = next((m for m in current if m.path == old_path), None)
            if new is None or old is None or new.state.supersedes != old.state.id \
                    or old.state.superseded_by == new.state.id:
                return []
            return [Rewrite(new, forget_predecessor(new.state, old.state.id))]

        try:
            self.store.rewrite([new_path, old_path], plan)
        except NoteError as exc:  # its user edits it too: `unsupersede` takes it back
            log.warning("%s keeps a link to a memory that does not link back: %s", new_path,
                        exc.message)

    def unsupersede(self, ref: str, now: datetime) -> UnsupersedeResult:
        """Undo a supersede. Given the stale memory, it is current again; given a successor
        (that is not itself superseded), the memory it replaced is current again."""
        memory = self.store.load(ref)
        if memory.state.superseded_by is not None:
            stale_path, successor_id = memory.path, memory.state.superseded_by
        elif memory.state.supersedes is not None:
            stale_path = find_path(self.store, memory.state.supersedes) or ""
            successor_id = memory.state.id
            if not stale_path:  # the stale note is gone: only the successor's link is left
                return self._drop_predecessor(memory.path, now)
        elif memory.state.possible_update_of is not None:
            return self._dismiss(memory.path, now)
        else:
            raise InvalidInput(f"{memory.path} is not superseded, supersedes nothing and has "
                               "no proposed update: there is nothing to undo")
        successor_path = find_path(self.store, successor_id)
        paths = [stale_path] + ([successor_path] if successor_path else [])

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            stale = _pick(current, stale_path)
            check_writable(stale)
            writes = [Rewrite(stale, released(stale.state))]
            successor = next((m for m in current if m.path == successor_path), None)
            if successor is not None and successor.state.supersedes == stale.state.id:
                writes.append(Rewrite(successor, forget_predecessor(successor.state,
                                                                    stale.state.id)))
            return writes

        written = self.store.rewrite(paths, plan, strict=True)
        self.sync.sync_paths(paths)
        return UnsupersedeResult(
            unsuperseded=self.views.view(written[0], now),
            successor=self.views.view(written[1], now) if len(written) > 1 else None)

    def _dismiss(self, path: str, now: datetime) -> UnsupersedeResult:
        """The proposed update of the memory at `path` is not one: dropped."""
        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            return [Rewrite(m, dismissed(m.state)) for m in current if m.path == path]

        [written] = self.store.rewrite([path], plan, strict=True)
        self.sync.sync_paths([path])
        return UnsupersedeResult(unsuperseded=None, successor=None,
                                 dismissed=self.views.view(written, now))

    def _drop_predecessor(self, path: str, now: datetime) -> UnsupersedeResult:
        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            memory = _pick(current, path)
            stale_id = memory.state.supersedes or ""
            return [Rewrite(memory, forget_predecessor(memory.state, stale_id))]

        [written] = self.store.rewrite([path], plan, strict=True)
        self.sync.sync_paths([path])
        return UnsupersedeResult(unsuperseded=None, successor=self.views.view(written, now))


def _pick(current: list[MemoryNote], path: str) -> MemoryNote:
    found = next((m for m in current if m.path == path), None)
    if found is None:  # strict rewrites raise first; a note gone meanwhile lands here
        raise NotFound(f"note {path!r} does not exist")
    return found
