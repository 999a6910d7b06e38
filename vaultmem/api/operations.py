"""The one table of operations: what each runs, whether it writes, whether `undo` can take it
back.

`Api.run` (the socket, the CLI, the MCP bridge) and `Api.run_job` (the daemon's scheduled
jobs) both go through `Api._perform`, which reads the table: an operation that writes runs
in the process's one write lane (engine/write_lane.py, `now` read once inside it), and one
that is recorded logs what it applied for `undo` (engine/undo.py). Adding an operation is a
row here, its handler (`api/reads.py` or `api/writes.py`), its request and response schema
and route (`api/schemas.py`), and its test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from vaultmem.api import reads, writes
from vaultmem.api.parts import ApiParts
from vaultmem.core.json_types import JSON
from vaultmem.engine.results import AutoMergeResult, Result

Answer = Result | AutoMergeResult | JSON  # the operations not typed yet answer JSON-ready dicts
Handler = Callable[[ApiParts, JSON, datetime], Answer]
Check = Callable[[JSON], bool]


def always(body: JSON) -> bool:
    return True


def never(body: JSON) -> bool:
    return False


def not_dry_run(body: JSON) -> bool:
    return not body["dry_run"]


def applies(body: JSON) -> bool:
    return bool(body["apply"])


def none_created(result: Result | AutoMergeResult) -> list[str]:
    return []


@dataclass(frozen=True)
class Operation:
    handler: Handler
    writes: Check = never  # for this body, the operation runs in the write lane
    recorded: Check = never  # for this body, what it applies is logged for `undo`
    # the memories it created, which `undo` archives (the others it puts back)
    created: Callable[[Result | AutoMergeResult], list[str]] = none_created
    scheduled: bool = False  # the daemon's scheduler runs it; no route, no schema


# In the order the protocol lists them (`unknown operation` errors name them so).
OPERATIONS: dict[str, Operation] = {
    "health": Operation(reads.health),
    "status": Operation(reads.status),
    "search": Operation(reads.search),
    "related": Operation(reads.related),
    "get": Operation(reads.get),
    "save": Operation(writes.save, writes=always),
    "touch": Operation(writes.touch),
    "observe": Operation(writes.observe),
    "review": Operation(reads.review),
    "sweep": Operation(writes.sweep, writes=always, recorded=not_dry_run),
    "gc": Operation(writes.gc, writes=always, recorded=applies),
    "promote": Operation(writes.promote, writes=always, recorded=not_dry_run),
    "clusters": Operation(reads.clusters),
    "merge_cluster": Operation(writes.merge_cluster, writes=always, recorded=always,
                               created=writes.merged_ids),
    "reindex": Operation(writes.reindex, writes=always),
    "feedback": Operation(writes.feedback),
    "pin": Operation(writes.pin),
    "reconcile": Operation(writes.reconcile, writes=always),
    "restore": Operation(writes.restore, writes=always),
    "list": Operation(reads.list_memories),
    "forget": Operation(writes.forget, writes=always),
    "edit": Operation(writes.edit, writes=always),
    "undo": Operation(writes.undo, writes=lambda body: not body["list"]),
    "supersede": Operation(writes.supersede, writes=always),
    "unsupersede": Operation(writes.unsupersede, writes=always),
    # the daemon's scheduled consolidation (`vaultmem undo` takes its merges back)
    "consolidation": Operation(writes.consolidate, writes=always, recorded=always,
                               created=writes.merged_ids, scheduled=True),
}
