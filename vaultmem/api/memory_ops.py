"""The Api's operations on single memories and whole operations: list, forget, edit, undo.

A mixin of `vaultmem.api.ops.Api` (which validates every body before these run): each handler
takes the checked body and `now`, like the Api's own `_op_*` methods. `recorded_handlers`
wraps the Api's sweep, gc, promote and merge handlers so that what they apply is logged for
`undo` (engine/undo.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from vaultmem.core.json_types import JSON
from vaultmem.engine.memory_admin import ListFilters, MemoryAdmin
from vaultmem.engine.results import (
    GcResult,
    MergeResult,
    PromoteResult,
    Result,
    SweepResult,
)
from vaultmem.engine.undo import Undoer
from vaultmem.engine.write_lane import WriteLane
from vaultmem.errors import DaemonError

OPERATIONS: tuple[str, ...] = ("list", "forget", "edit", "undo")
UndoableResult = SweepResult | GcResult | PromoteResult | MergeResult
Answer = Result | JSON  # the operations not typed yet answer JSON-ready dicts
Handler = Callable[[JSON, datetime], Answer]
# the operations `undo` can take back: whether a body applies changes, what a result created
_UNDOABLE: dict[str, tuple[Callable[[JSON], bool], Callable[[UndoableResult], list[str]]]] = {
    "sweep": (lambda body: not body["dry_run"], lambda result: []),
    "gc": (lambda body: bool(body["apply"]), lambda result: []),
    "promote": (lambda body: not body["dry_run"], lambda result: []),
    "merge_cluster": (lambda body: True, lambda result: _merged_id(result)),
}


def _merged_id(result: UndoableResult) -> list[str]:
    assert isinstance(result, MergeResult)
    return [result.merged_into.id]


class MemoryOps:
    admin: MemoryAdmin
    undoer: Undoer | None  # None: no operation log was given
    lane: WriteLane

    def _memory_type(self, given: str | None) -> str | None:
        raise NotImplementedError  # the Api's own

    @property
    def _undoer(self) -> Undoer:
        if self.undoer is None:
            raise DaemonError("undo is not available here: no operation log was given")
        return self.undoer

    def recorded_handlers(self, handlers: dict[str, Handler]) -> dict[str, Handler]:
        """`handlers` with sweep, gc, promote and merge_cluster recording what they apply."""
        if self.undoer is None:
            return handlers
        wrapped = dict(handlers)
        for op, (applies, created) in _UNDOABLE.items():
            wrapped[op] = self._recorded(op, handlers[op], applies, created)
        return wrapped

    def _recorded(self, op: str, handler: Handler, applies: Callable[[JSON], bool],
                  created: Callable[[UndoableResult], list[str]]) -> Handler:
        def run(body: JSON, now: datetime) -> Answer:
            if not applies(body):
                return handler(body, now)

            def once() -> UndoableResult:
                answer = handler(body, now)
                assert isinstance(answer, UndoableResult)
                return answer

            with self.lane.hold(op):
                return self._undoer.record(op, now, once, created)
        return run

    def _op_undo(self, body: JSON, now: datetime) -> Answer:
        if body["list"]:
            return self._undoer.recent()
        with self.lane.hold("undo"):
            return self._undoer.undo(body.get("operation"), now)

    def _op_list(self, body: JSON, now: datetime) -> Answer:
        filters = ListFilters(
            statuses=tuple(body["status"]), tags_any=tuple(body.get("tags", ())),
            type=self._memory_type(body.get("type")), decision=body.get("decision"),
            pinned=body.get("pinned"),
        )
        return self.admin.list_memories(now, filters, sort=body["sort"], limit=body["limit"])

    def _op_forget(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("forget"):
            return self.admin.forget(body["id"], now)

    def _op_edit(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("edit"):
            return self.admin.edit(body["id"], now, content=body.get("content"),
                                    title=body.get("title"), tags=body.get("tags"))
