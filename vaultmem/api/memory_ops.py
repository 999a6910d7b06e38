"""The Api's operations on single memories and whole operations: list, forget, edit, undo.

A mixin of `vaultmem.api.ops.Api` (which validates every body before these run): each handler
takes the checked body and `now`, like the Api's own `_op_*` methods.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

from vaultmem.engine.engine import Engine
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.memory_admin import ListFilters, MemoryAdmin

JSON = dict[str, Any]

OPERATIONS: tuple[str, ...] = ("list", "forget", "edit")


class MemoryOps:
    engine: Engine
    lifecycle: Lifecycle
    _writes: threading.RLock

    def _memory_type(self, given: str | None) -> str | None:
        raise NotImplementedError  # the Api's own

    @property
    def _admin(self) -> MemoryAdmin:
        return MemoryAdmin(self.lifecycle)

    def _op_list(self, body: JSON, now: datetime) -> JSON:
        filters = ListFilters(
            statuses=tuple(body["status"]), tags_any=tuple(body.get("tags", ())),
            type=self._memory_type(body.get("type")), decision=body.get("decision"),
            pinned=body.get("pinned"),
        )
        return self._admin.list_memories(now, filters, sort=body["sort"], limit=body["limit"])

    def _op_forget(self, body: JSON, now: datetime) -> JSON:
        with self._writes:
            return self._admin.forget(body["id"], now)

    def _op_edit(self, body: JSON, now: datetime) -> JSON:
        with self._writes:
            return self._admin.edit(body["id"], now, content=body.get("content"),
                                    title=body.get("title"), tags=body.get("tags"))
