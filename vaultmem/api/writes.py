"""The handlers of the operations that write notes or the index (`api/operations.py` lists
them, and says which take the write lane and which `undo` can take back): each takes the
Api's parts, the checked body and `now`. The lane and the undo record are the Api's
(`Api._perform`), never a handler's."""

from __future__ import annotations

from datetime import datetime

from vaultmem.api.parts import ApiParts
from vaultmem.api.reads import ref
from vaultmem.core.json_types import JSON
from vaultmem.engine.results import (
    AutoMergeResult,
    EditResult,
    ForgetResult,
    MemoryView,
    MergeResult,
    ObserveResult,
    RestoreResult,
    Result,
    SaveResult,
    SupersedeResult,
    UnsupersedeResult,
)
from vaultmem.engine.upkeep_results import (
    GcResult,
    PromoteResult,
    RecentOperations,
    ReconcileResult,
    SweepResult,
    UndoResult,
)
from vaultmem.pipeline.index_ports import ReindexResult

# uses: in-place `stm_*` lines, outside the lane (engine/write_lane.py) -----------------------


def touch(parts: ApiParts, body: JSON, now: datetime) -> MemoryView:
    return parts.uses.touch(ref(body), now, boost=body["boost"])


def feedback(parts: ApiParts, body: JSON, now: datetime) -> MemoryView:
    return parts.uses.feedback(body["id"], body["helpful"], now)


def pin(parts: ApiParts, body: JSON, now: datetime) -> MemoryView:
    return parts.uses.set_pinned(body["id"], body["pinned"], now)


def observe(parts: ApiParts, body: JSON, now: datetime) -> ObserveResult:
    return parts.uses.observe(body["ids"], body["context_tags"], now)


# notes created, moved or rewritten, the index rebuilt: in the lane ----------------------------


def save(parts: ApiParts, body: JSON, now: datetime) -> SaveResult:
    return parts.updates.save(
        body["content"], now, title=body.get("title"), tags=body.get("tags", ()),
        type=body.get("type"), strength=body["strength"], pinned=body["pinned"],
        source=body.get("source"), force=body["force"], supersedes=body.get("supersedes"),
    )


def sweep(parts: ApiParts, body: JSON, now: datetime) -> SweepResult:
    return parts.lifecycle.sweep(now, dry_run=body["dry_run"])


def gc(parts: ApiParts, body: JSON, now: datetime) -> GcResult:
    return parts.lifecycle.gc(now, apply=body["apply"])


def promote(parts: ApiParts, body: JSON, now: datetime) -> PromoteResult:
    return parts.lifecycle.promote(body.get("id"), now, dry_run=body["dry_run"])


def reconcile(parts: ApiParts, body: JSON, now: datetime) -> ReconcileResult:
    return parts.reconciler.reconcile(apply=body["apply"])


def restore(parts: ApiParts, body: JSON, now: datetime) -> RestoreResult:
    return parts.restorer.restore(body["id"], now)


def supersede(parts: ApiParts, body: JSON, now: datetime) -> SupersedeResult:
    return parts.updates.superseder.supersede(body["id"], body["by"], now)


def unsupersede(parts: ApiParts, body: JSON, now: datetime) -> UnsupersedeResult:
    return parts.updates.superseder.unsupersede(body["id"], now)


def merge_cluster(parts: ApiParts, body: JSON, now: datetime) -> MergeResult:
    return parts.consolidator.merge(body["cluster_id"], now)


def consolidate(parts: ApiParts, body: JSON, now: datetime) -> AutoMergeResult:
    """The daemon's scheduled consolidation: merge every cohesive cluster."""
    return parts.consolidator.auto_merge(now)


def reindex(parts: ApiParts, body: JSON, now: datetime) -> ReindexResult:
    if parts.reindex is not None:  # the daemon's: it keeps its progress for `status`
        return parts.reindex(body["full"])
    return parts.sync.reindex(full=body["full"], progress=parts.progress).result()


def forget(parts: ApiParts, body: JSON, now: datetime) -> ForgetResult:
    return parts.admin.forget(body["id"], now)


def edit(parts: ApiParts, body: JSON, now: datetime) -> EditResult:
    return parts.admin.edit(body["id"], now, content=body.get("content"),
                            title=body.get("title"), tags=body.get("tags"))


def undo(parts: ApiParts, body: JSON, now: datetime) -> UndoResult | RecentOperations:
    if body["list"]:
        return parts.undoer.recent()
    return parts.undoer.undo(body.get("operation"), now)


def merged_ids(result: Result | AutoMergeResult) -> list[str]:
    """The memories a merge or a consolidation created (`undo` archives them)."""
    if isinstance(result, MergeResult):
        return [result.merged_into.id]
    assert isinstance(result, AutoMergeResult)
    return [merge.merged_into.id for merge in result.merged]
