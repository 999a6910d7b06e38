"""Undoing a whole sweep, gc, promotion or merge in one step.

`record` runs an operation while the memory store records what it does (each note's text
before and after every write, every move) and keeps that in the operation log. `undo` puts
every note the operation touched back exactly: the text it had before (byte for byte: the
state, a Related section a promotion added, `stm_merged_into` a merge wrote) at the path it had
before; a memory the operation created (a merged note) is archived (never deleted, like every
vaultmem removal). A note changed since the operation (by the user, by a later use written to
it, by a move) is left as it is and listed under `skipped`, with the reason; the rest is
undone. An operation is undone once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import TypeVar

from vaultmem.engine.memory_admin import MemoryAdmin
from vaultmem.engine.operation_log import Operation, OperationLog
from vaultmem.engine.upkeep_results import PutBack, RecentOperations, Skipped, Undoable, UndoResult
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError, NotFound, VaultmemError
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.store.memory_store import MemoryStore

Done = TypeVar("Done", bound=Undoable)


@dataclass
class _Track:
    """One note through an operation: where it was, its text before and after."""

    origin: str
    before: str | None = None
    after: str | None = None


def tracks(events: list[dict[str, str]]) -> dict[str, _Track]:
    """{the note's path after the operation: its track}."""
    notes: dict[str, _Track] = {}
    for event in events:
        if "write" in event:
            track = notes.setdefault(event["write"], _Track(event["write"]))
            if track.before is None:
                track.before = event["before"]
            track.after = event["after"]
        elif "move" in event:
            moved = notes.pop(event["move"]) if event["move"] in notes else _Track(event["move"])
            notes[event["to"]] = moved
    return notes


class Undoer:
    def __init__(self, *, admin: MemoryAdmin, store: MemoryStore, sync: IndexSync,
                 log: OperationLog) -> None:
        self.admin = admin
        self.store = store
        self.sync = sync
        self.log = log

    def record(self, kind: str, now: datetime, run: Callable[[], Done],
               created: Callable[[Done], list[str]] = lambda result: []) -> Done:
        """Run `run` recording its writes and moves; when it changed anything, log them and
        answer with the operation's id (`operation`)."""
        with self.store.recording() as events:
            result = run()
        if events:
            return result.with_operation(self.log.add(kind, now, events, created(result)))
        return result

    def undo(self, op_id: str | None, now: datetime) -> UndoResult:
        operation = self._operation(op_id)
        made = self._created_paths(operation)
        restored: list[PutBack] = []
        skipped: list[Skipped] = []
        for path, track in tracks(operation.events).items():
            if path in made:
                continue
            try:
                restored.append(self._put_back(path, track, operation))
            except (VaultmemError, OSError) as exc:
                message = exc.message if isinstance(exc, VaultmemError) else str(exc)
                skipped.append(Skipped(path, message))
        archived = []
        for memory_id in operation.created:
            try:
                archived.append(self.admin.forget(memory_id, now).forgotten)
            except (VaultmemError, OSError) as exc:
                message = exc.message if isinstance(exc, VaultmemError) else str(exc)
                skipped.append(Skipped(memory_id, message))
        self.log.mark_undone(operation.id, now)
        return UndoResult(operation=operation.id, kind=operation.kind,
                          restored=tuple(restored), archived=tuple(archived),
                          skipped=tuple(skipped))

    def recent(self, limit: int = 10) -> RecentOperations:
        return RecentOperations(tuple(op.summary() for op in self.log.recent(limit)))

    def _operation(self, op_id: str | None) -> Operation:
        operation = self.log.last_open() if op_id is None else self.log.get(op_id.strip())
        if operation is None:
            raise NotFound("nothing to undo" if op_id is None
                           else f"no operation {op_id!r} (the last 50 are kept)")
        if operation.undone_at is not None:
            raise InvalidInput(f"operation {operation.id} was undone at {operation.undone_at}")
        return operation

    def _created_paths(self, operation: Operation) -> set[str]:
        paths = set()
        for memory_id in operation.created:
            try:
                paths.add(self.store.resolve(memory_id))
            except NotFound:
                continue
        return paths

    def _put_back(self, path: str, track: _Track, operation: Operation) -> PutBack:
        memories = self.store
        if track.before is not None:
            before, after = track.before, track.after

            def change(memory: MemoryNote) -> str:
                if memory.text != after:
                    raise ConcurrentEdit(f"{path} changed since the {operation.kind}; left as "
                                         "it is")
                assert before is not None
                return before

            memories.rewrite_text(path, change)
        back: str | None = path
        origin = PurePosixPath(track.origin)
        if PurePosixPath(path).parent != origin.parent:
            back = memories.move_into(path, origin.parent.as_posix())
        if back is None:
            raise NoteError(f"{path} was moved or deleted meanwhile")
        if PurePosixPath(back).name != origin.name:
            back = memories.rename_to(back, origin.name) or back
        self.sync.sync_paths([path, back])
        return PutBack(path, back)
