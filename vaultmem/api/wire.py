"""The protocol's JSON for the use cases' typed results (`vaultmem/engine/results.py`, the
upkeep's in `vaultmem/engine/upkeep_results.py`): one function per shape, and `to_wire`
choosing among them. `Api.call` answers through it, so the socket, the CLI and the MCP bridge
all send what is built here (docs/protocol.md).

Field names and their order are a public contract: add fields freely, never rename or remove
one (tests/api/test_wire_golden.py holds every answer byte for byte).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from vaultmem.api.wire_status import SHAPES as STATUS_SHAPES
from vaultmem.api.wire_status import duplicates_wire, status_wire
from vaultmem.core.json_types import JSON
from vaultmem.engine.results import (
    AutoMergeResult,
    ClustersResult,
    ClusterView,
    EditResult,
    ForgetResult,
    ListResult,
    MemoryView,
    MergeResult,
    NoteRef,
    ObserveResult,
    PossibleUpdate,
    RelatedResult,
    RestoreResult,
    ReviewResult,
    SaveResult,
    SearchHit,
    SearchResult,
    Successor,
    SupersedeResult,
    UnsupersedeResult,
    UpdateProposal,
)
from vaultmem.engine.status_results import StatusAnswer
from vaultmem.engine.upkeep_results import (
    Archived,
    CopiesMerged,
    CopiesPlanned,
    GcResult,
    LeftAlone,
    Move,
    Planned,
    Promoted,
    PromoteResult,
    PutBack,
    RecentOperations,
    ReconcileResult,
    SweepResult,
    UndoResult,
)
from vaultmem.pipeline.progress import INDEXING, IndexState


def iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def memory_wire(view: MemoryView) -> JSON:
    state = view.state
    return {
        "id": state.id,
        "path": view.path,
        "title": view.title,
        "uri": view.uri,
        "tags": list(state.tags),
        "type": state.type,
        "status": state.status,
        "pinned": state.pinned,
        "source": state.source,
        "created": iso(state.created),
        "last_used": iso(state.last_used),
        "use_count": state.use_count,
        "strength": round(state.strength, 4),
        "review_count": state.review_count,
        "cross_domain_count": state.cross_domain_count,
        "promoted_at": iso(state.promoted_at),
        "merged_into": state.merged_into,
        "superseded_by": state.superseded_by,
        "supersedes": state.supersedes,
        "possible_update_of": state.possible_update_of,
        "score": round(view.score, 6),
        "decision": view.decision.action,
        "reason": view.decision.reason,
        "review_priority": round(view.review_priority, 6),
    }


def note_ref_wire(ref: NoteRef) -> JSON:
    return {"id": ref.id, "path": ref.path, "title": ref.title, "uri": ref.uri}


def successor_wire(successor: Successor) -> JSON:
    return {"id": successor.id, "path": successor.path, "title": successor.title,
            "uri": successor.uri}


def search_hit_wire(hit: SearchHit) -> JSON:
    return {
        "id": hit.memory_id,
        "path": hit.path,
        "title": hit.title,
        "snippet": hit.snippet,
        "uri": hit.uri,
        "tags": list(hit.tags),
        "relevance": round(hit.relevance, 6),
        "matched": hit.matched,
        "score": None if hit.score is None else round(hit.score, 6),
        "final": round(hit.final, 6),
        "review": hit.review,
        "superseded_by": None if hit.superseded_by is None else successor_wire(hit.superseded_by),
    }


def index_state_wire(state: IndexState) -> JSON:
    data: JSON = {"state": state.state, "by_words": state.by_words,
                  "by_meaning": state.by_meaning}
    if state.state == INDEXING:
        data.update(done=state.done, total=state.total)
    return data


def search_wire(result: SearchResult) -> JSON:
    data: JSON = {"query": result.query, "results": [search_hit_wire(h) for h in result.hits]}
    if result.indexing is not None:
        data["indexing"] = index_state_wire(result.indexing)
    return data


def related_wire(result: RelatedResult) -> JSON:
    return {"path": result.path,
            "related": [{"path": n.path, "title": n.title, "similarity": round(n.similarity, 6)}
                        for n in result.related]}


def observe_wire(result: ObserveResult) -> JSON:
    return {"observed": [{**memory_wire(o.memory), "cross_domain": o.cross_domain}
                         for o in result.observed]}


def proposal_wire(proposal: UpdateProposal) -> JSON:
    return {**note_ref_wire(proposal.old), "reason": proposal.reason,
            "by": note_ref_wire(proposal.by)}


def review_wire(result: ReviewResult) -> JSON:
    return {"items": [memory_wire(v) for v in result.items], "total": result.total,
            "updates": [proposal_wire(p) for p in result.updates]}


def move_wire(move: Move) -> JSON:
    return {"id": move.id, "from": move.source, "to": move.to}


def cluster_wire(cluster: ClusterView) -> JSON:
    return {
        "id": cluster.id,
        "cohesion": round(cluster.cohesion, 4),
        "action": cluster.action,
        "members": [{"id": m.id, "path": m.path, "title": m.title, "use_count": m.use_count,
                     "score": round(m.score, 6)} for m in cluster.members],
    }


def clusters_wire(result: ClustersResult) -> JSON:
    return {"clusters": [cluster_wire(c) for c in result.clusters]}


def _with_operation(data: JSON, operation: str | None) -> JSON:
    """An operation `undo` can take back names its id once it changed anything."""
    if operation is not None:
        data["operation"] = operation
    return data


def merge_wire(result: MergeResult) -> JSON:
    return _with_operation({"cluster_id": result.cluster_id,
                            "merged_into": memory_wire(result.merged_into),
                            "archived": [move_wire(m) for m in result.archived]},
                           result.operation)


def auto_merge_wire(result: AutoMergeResult) -> JSON:
    return _with_operation({
        "merged": [merge_wire(m) for m in result.merged],
        "review": [cluster_wire(c) for c in result.review],
        "skipped": [{"cluster_id": s.cluster_id, "reason": s.reason} for s in result.skipped],
    }, result.operation)


def planned_wire(item: Planned) -> JSON:
    return {"id": item.id, "path": item.path, "decision": item.decision.action,
            "reason": item.decision.reason, "score": round(item.decision.score, 6)}


def archived_wire(move: Archived) -> JSON:
    return {"id": move.id, "from": move.source, "to": move.to, "reason": move.reason}


def promoted_wire(move: Promoted) -> JSON:
    return {"id": move.id, "from": move.source, "to": move.to, "reason": move.reason,
            "links": list(move.links)}


def left_alone_wire(item: LeftAlone) -> JSON:
    return {"id": item.id, "path": item.path, "reason": item.reason}


def gc_wire(result: GcResult) -> JSON:
    return _with_operation({
        "dry_run": result.dry_run,
        "archive": [planned_wire(i) for i in result.archive],
        "archived": [archived_wire(m) for m in result.archived],
        "kept": result.kept,
        "left_alone": [left_alone_wire(i) for i in result.left_alone],
    }, result.operation)


def promote_wire(result: PromoteResult) -> JSON:
    return _with_operation({
        "dry_run": result.dry_run,
        "promote": [planned_wire(i) for i in result.promote],
        "promoted": [promoted_wire(m) for m in result.promoted],
        "left_alone": [left_alone_wire(i) for i in result.left_alone],
    }, result.operation)


def sweep_wire(result: SweepResult) -> JSON:
    return _with_operation({
        "dry_run": result.dry_run,
        "archive": [planned_wire(i) for i in result.archive],
        "promote": [planned_wire(i) for i in result.promote],
        "keep": result.keep,
        "archived": [archived_wire(m) for m in result.archived],
        "promoted": [promoted_wire(m) for m in result.promoted],
        "finished_moves": [move_wire(m) for m in result.finished_moves],
        "left_alone": [left_alone_wire(i) for i in result.left_alone],
    }, result.operation)


def possible_update_wire(update: PossibleUpdate) -> JSON:
    return {**note_ref_wire(update.of), "reason": update.reason,
            "cosine": round(update.cosine, 4), "applied": update.applied}


def save_wire(result: SaveResult) -> JSON:
    data: JSON = {"created": result.created, "reinforced": None if result.reinforced is None
                  else {"id": result.reinforced.id, "reason": result.reinforced.reason,
                        "counted": result.reinforced.counted}}
    if result.similar is not None:
        similar = result.similar
        data["similar"] = {"id": similar.id, "path": similar.path, "title": similar.title,
                           "similarity": round(similar.similarity, 4)}
    data["memory"] = memory_wire(result.memory)
    data["superseded"] = None if result.superseded is None else note_ref_wire(result.superseded)
    data["possible_update_of"] = (None if result.possible_update_of is None
                                  else possible_update_wire(result.possible_update_of))
    return data


def list_wire(result: ListResult) -> JSON:
    return {"memories": [memory_wire(v) for v in result.memories], "total": result.total}


def forget_wire(result: ForgetResult) -> JSON:
    return {"forgotten": move_wire(result.forgotten), "memory": memory_wire(result.memory)}


def restore_wire(result: RestoreResult) -> JSON:
    return {"restored": move_wire(result.restored), "memory": memory_wire(result.memory)}


def edit_wire(result: EditResult) -> JSON:
    return {"edited": {"id": result.id, "path": result.path, "changed": list(result.changed)},
            "memory": memory_wire(result.memory)}


def supersede_wire(result: SupersedeResult) -> JSON:
    return {"superseded": memory_wire(result.superseded), "by": memory_wire(result.by)}


def _maybe_memory(view: MemoryView | None) -> JSON | None:
    return None if view is None else memory_wire(view)


def unsupersede_wire(result: UnsupersedeResult) -> JSON:
    data = {"unsuperseded": _maybe_memory(result.unsuperseded),
            "successor": _maybe_memory(result.successor)}
    if result.dismissed is not None:
        data["dismissed"] = memory_wire(result.dismissed)
    return data


def put_back_wire(item: PutBack) -> JSON:
    return {"from": item.source, "to": item.to}


def undo_wire(result: UndoResult) -> JSON:
    return {"operation": result.operation, "kind": result.kind,
            "restored": [put_back_wire(p) for p in result.restored],
            "archived": [move_wire(m) for m in result.archived],
            "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped]}


def copies_planned_wire(plan: CopiesPlanned) -> JSON:
    return {"id": plan.id, "canonical": plan.canonical,
            "copies": [{"path": c.path, "kind": c.kind, "text_differs": c.text_differs}
                       for c in plan.copies],
            "use_count": plan.use_count}


def copies_merged_wire(merged: CopiesMerged) -> JSON:
    return {"id": merged.id, "canonical": merged.canonical, "use_count": merged.use_count,
            "archived": [put_back_wire(m) for m in merged.archived],
            "linked": list(merged.linked)}


def reconcile_wire(result: ReconcileResult) -> JSON:
    return {"dry_run": result.dry_run,
            "duplicates": [copies_planned_wire(p) for p in result.duplicates],
            "merged": [copies_merged_wire(m) for m in result.merged],
            "git_conflicts": list(result.git_conflicts)}


def recent_wire(result: RecentOperations) -> JSON:
    return {"operations": [{"id": o.id, "kind": o.kind, "at": o.at, "moves": o.moves,
                            "created": o.created, "undone_at": o.undone_at}
                           for o in result.operations]}


def status_answer_wire(answer: StatusAnswer) -> JSON:
    """`status`: the vault's, then the sync copies, then the daemon's part (its own shape,
    through `to_wire`) or the changes the index has not seen."""
    data = {**status_wire(answer.status), "sync": duplicates_wire(answer.sync)}
    if answer.daemon is not None:
        data["daemon"] = to_wire(answer.daemon)
    if answer.unindexed_changes is not None:
        data["unindexed_changes"] = answer.unindexed_changes
    return data


_SHAPES: dict[type, Callable[[Any], JSON]] = {
    MemoryView: memory_wire,
    SearchResult: search_wire,
    RelatedResult: related_wire,
    ObserveResult: observe_wire,
    ReviewResult: review_wire,
    ClustersResult: clusters_wire,
    MergeResult: merge_wire,
    AutoMergeResult: auto_merge_wire,
    GcResult: gc_wire,
    PromoteResult: promote_wire,
    SweepResult: sweep_wire,
    SaveResult: save_wire,
    ListResult: list_wire,
    ForgetResult: forget_wire,
    RestoreResult: restore_wire,
    EditResult: edit_wire,
    SupersedeResult: supersede_wire,
    UnsupersedeResult: unsupersede_wire,
    UndoResult: undo_wire,
    ReconcileResult: reconcile_wire,
    RecentOperations: recent_wire,
    StatusAnswer: status_answer_wire,
    **STATUS_SHAPES,
}


def to_wire(result: object) -> Any:
    """The JSON for `result`: a typed result through its shape's function; in a dict or a
    list (health's answer, the daemon's own status), each value so."""
    shape = _SHAPES.get(type(result))
    if shape is not None:
        return shape(result)
    if isinstance(result, dict):
        return {key: to_wire(value) for key, value in result.items()}
    if isinstance(result, list | tuple):
        return [to_wire(value) for value in result]
    return result
