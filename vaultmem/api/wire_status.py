"""The protocol's JSON for what `status`, `reindex` and the daemon say
(`vaultmem/engine/status_results.py`, the index writer's work, a reindex's counts): one
function per shape, gathered in `SHAPES` for `api/wire.py`'s `to_wire`.

Field names and their order are a public contract (docs/protocol.md,
tests/api/test_wire_golden.py): add fields freely, never rename or remove one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from vaultmem.core.json_types import JSON
from vaultmem.engine.status_results import (
    Counts,
    Coverage,
    DaemonIndexing,
    DaemonStatus,
    DuplicateGroup,
    DuplicatesReport,
    FileStatus,
    JobStatus,
    Languages,
    MemoryCounts,
    PathReason,
    Settled,
    StatusResult,
)
from vaultmem.pipeline.index_ports import ReindexResult
from vaultmem.pipeline.progress import IndexingNow, IndexWork, SlicedNote


def _counts(counts: Counts) -> JSON:
    return dict(counts)


def memory_counts_wire(counts: MemoryCounts) -> JSON:
    decisions = counts.decisions
    return {"total": counts.total, "by_status": _counts(counts.by_status),
            "by_type": _counts(counts.by_type),
            "decisions": {"keep": decisions.keep, "forget": decisions.forget,
                          "promote": decisions.promote}}


def path_reason_wire(item: PathReason) -> JSON:
    return {"path": item.path, "reason": item.reason}


def file_status_wire(item: FileStatus) -> JSON:
    memory = item.memory
    return {"path": item.path, "status": item.status, "reason": item.reason,
            "chunks": item.chunks,
            "memory": None if memory is None else {"id": memory.id, "status": memory.status,
                                                   "score": round(memory.score, 6)}}


def coverage_wire(coverage: Coverage) -> JSON:
    data: JSON = {
        "indexed": coverage.indexed,
        "chunks": coverage.chunks,
        "skipped": [path_reason_wire(i) for i in coverage.skipped],
        "failed": [path_reason_wire(i) for i in coverage.failed],
        "warnings": [path_reason_wire(i) for i in coverage.warnings],
        "problems": list(coverage.problems),
    }
    if coverage.files is not None:
        data["files"] = [file_status_wire(f) for f in coverage.files]
    return data


def languages_wire(languages: Languages) -> JSON:
    return {"sampled": languages.sampled, "not_english": languages.not_english,
            "not_english_share": round(languages.not_english_share, 3),
            "advice": languages.advice}


def status_wire(result: StatusResult) -> JSON:
    model = result.model
    return {
        "vault": result.vault,
        "notes": result.notes,
        "memories": memory_counts_wire(result.memories),
        "coverage": coverage_wire(result.coverage),
        "embedder": result.embedder,
        "model": {"setting": model.setting, "model": model.model, "reason": model.reason},
        "languages": languages_wire(result.languages),
    }


def duplicate_group_wire(group: DuplicateGroup) -> JSON:
    return {"id": group.id, "canonical": group.canonical,
            "copies": [{"path": c.path, "kind": c.kind, "use_count": c.use_count}
                       for c in group.copies]}


def duplicates_wire(report: DuplicatesReport) -> JSON:
    return {"duplicates": [duplicate_group_wire(g) for g in report.duplicates],
            "git_conflicts": list(report.git_conflicts)}


def reindex_wire(result: ReindexResult) -> JSON:
    data: JSON = {
        "added": result.added, "changed": result.changed, "meta_changed": result.meta_changed,
        "moved": result.moved, "deleted": result.deleted, "skipped": result.skipped,
        "failed": result.failed, "chunks_embedded": result.chunks_embedded,
        "seconds": result.seconds, "rebuilt_reason": result.rebuilt_reason,
        "failures": [list(f) for f in result.failures],
    }
    if result.finished is not None:  # a daemon's run
        data["finished"] = result.finished.isoformat(timespec="seconds")
    return data


def sliced_note_wire(note: SlicedNote) -> JSON:
    return {"path": note.path, "chunks_done": note.chunks_done,
            "chunks_total": note.chunks_total}


def index_work_wire(work: IndexWork) -> JSON:
    return {"running": work.running, "kind": work.kind, "done": work.done,
            "total": work.total,
            "current": None if work.current is None else sliced_note_wire(work.current)}


def indexing_now_wire(now: IndexingNow) -> JSON:
    return {**index_work_wire(now.work), "waiting": now.waiting}


def daemon_indexing_wire(indexing: DaemonIndexing) -> JSON:
    return {**index_work_wire(indexing.work), "running": indexing.running,
            "queued": indexing.queued,
            "last": None if indexing.last is None else reindex_wire(indexing.last),
            "error": indexing.error}


def _utc(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat()


def job_status_wire(job: JobStatus) -> JSON:
    return {"name": job.name, "interval_s": job.interval_s, "last_run": _utc(job.last_run),
            "last_result": job.last_result, "last_duration_s": job.last_duration_s,
            "next_run": _utc(job.next_run), "runs": job.runs}


def daemon_status_wire(status: DaemonStatus) -> JSON:
    return {"pid": status.pid, "version": status.version, "url": status.url,
            "started": status.started.isoformat(timespec="seconds"),
            "indexing": daemon_indexing_wire(status.indexing),
            "queue_depth": status.queue_depth,
            "pending_usage_writes": status.pending_usage_writes,
            "jobs": [job_status_wire(job) for job in status.jobs],
            "model_loaded": status.model_loaded}


def settled_wire(settled: Settled) -> JSON:
    return {"id": settled.id, "path": settled.path, "status": settled.status}


SHAPES: dict[type, Callable[[Any], JSON]] = {
    StatusResult: status_wire,
    DuplicatesReport: duplicates_wire,
    ReindexResult: reindex_wire,
    IndexWork: index_work_wire,
    IndexingNow: indexing_now_wire,
    DaemonIndexing: daemon_indexing_wire,
    DaemonStatus: daemon_status_wire,
    JobStatus: job_status_wire,
    Settled: settled_wire,
}
