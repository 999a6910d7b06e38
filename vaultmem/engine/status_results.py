"""What `status` and the daemon say, as frozen dataclasses: the vault's counts, coverage and
languages (`Status.status`), the notes several copies carry (`Reconciler.report`), the index
writer's work (`IndexSync.indexing`), the daemon's indexing and jobs, and the memories settled
after a move by hand (`Restorer.settle_moves`). Their JSON is built at the wire
(`api/wire_status.py`); the other use cases' results are in `engine/results.py` and
`engine/upkeep_results.py`.

Counts by name are tuples of (name, count) pairs in the order they were first seen: the wire
gives them as JSON objects in that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from vaultmem.engine.model_choice import ModelInUse
from vaultmem.pipeline.index_ports import ReindexResult
from vaultmem.pipeline.progress import IndexWork

Counts = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Decisions:
    """What the sweep would do now with the active memories."""

    keep: int
    forget: int
    promote: int


@dataclass(frozen=True)
class MemoryCounts:
    total: int
    by_status: Counts
    by_type: Counts
    decisions: Decisions


@dataclass(frozen=True)
class PathReason:
    path: str
    reason: str


@dataclass(frozen=True)
class FileMemory:
    """A memory note's id, status and score as of the status call's `now`."""

    id: str
    status: str
    score: float


@dataclass(frozen=True)
class FileStatus:
    """One file the index knows (`status --files`)."""

    path: str
    status: str
    reason: str
    chunks: int
    memory: FileMemory | None


@dataclass(frozen=True)
class Coverage:
    """How much of the vault is indexed; `files` only when asked for."""

    indexed: int
    chunks: int
    skipped: tuple[PathReason, ...]
    failed: tuple[PathReason, ...]
    warnings: tuple[PathReason, ...]
    problems: tuple[str, ...]
    files: tuple[FileStatus, ...] | None = None


@dataclass(frozen=True)
class Languages:
    """How much of the sampled notes is not English, and the advice when that matters."""

    sampled: int
    not_english: int
    not_english_share: float
    advice: str | None


@dataclass(frozen=True)
class StatusResult:
    vault: str
    notes: int
    memories: MemoryCounts
    coverage: Coverage
    embedder: str
    model: ModelInUse
    languages: Languages


@dataclass(frozen=True)
class CopySeen:
    """A note that carries another note's memory id (a sync tool's conflict copy)."""

    path: str
    kind: str | None  # the sync tool its name points to (None: not a known one)
    use_count: int


@dataclass(frozen=True)
class DuplicateGroup:
    id: str
    canonical: str
    copies: tuple[CopySeen, ...]


@dataclass(frozen=True)
class DuplicatesReport:
    """For `status`: the ids several notes carry, and the notes with git conflict markers."""

    duplicates: tuple[DuplicateGroup, ...]
    git_conflicts: tuple[str, ...]


@dataclass(frozen=True)
class StatusAnswer:
    """The `status` operation's answer: the vault's status, the sync copies, and either the
    daemon's part (when a daemon serves) or how many changes the index has not seen."""

    status: StatusResult
    sync: DuplicatesReport
    daemon: object | None = None  # the daemon's own status, turned into JSON at the wire
    unindexed_changes: int | None = None


@dataclass(frozen=True)
class DaemonIndexing:
    """The daemon's indexing: the writer's work, whether an index run or any sync runs, the
    changed notes not yet indexed, the last run's report and the last error."""

    work: IndexWork
    running: bool
    queued: int
    last: ReindexResult | None
    error: str | None


@dataclass(frozen=True)
class JobStatus:
    """One scheduled job: its interval, last run (when, result, seconds), next run, runs."""

    name: str
    interval_s: float
    last_run: datetime | None
    last_result: str | None
    last_duration_s: float | None
    next_run: datetime | None
    runs: int


@dataclass(frozen=True)
class Settled:
    """A memory moved by hand across the archive folder's edge, and its status now."""

    id: str
    path: str
    status: str


@dataclass(frozen=True)
class DaemonStatus:
    """The daemon's part of `status` (`Daemon.status`; its JSON: `api/wire_status.py`)."""

    pid: int
    version: str
    url: str | None  # None until the socket listens
    started: datetime
    indexing: DaemonIndexing  # the index run under way or the last one
    queue_depth: int  # changed notes not yet indexed
    pending_usage_writes: int
    jobs: list[JobStatus]  # the scheduler's jobs (daemon/scheduler.py)
    model_loaded: bool
