"""What the vault's upkeep answers, as frozen dataclasses (their JSON is `api/wire.py`'s):
a sweep, gc or promotion (planned and done moves, memories left alone), undo and the
operations it can take back, and a reconcile of sync conflict copies; `Move`, a memory's note
moved, which the other answers (`engine/results.py`) name too."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, Self

from vaultmem.core.decisions import Decision


class Undoable(Protocol):
    """A result of an operation `undo` can take back: it carries the operation's id once its
    writes are logged (engine/undo.py)."""

    def with_operation(self, operation: str) -> Self: ...


@dataclass(frozen=True)
class Move:
    """A memory's note moved (archived, promoted, restored, finished moving)."""

    id: str
    source: str  # "from" on the wire
    to: str


@dataclass(frozen=True)
class Planned:
    """A memory a sweep, gc or promotion plans to move, with the decision about it."""

    id: str
    path: str
    decision: Decision


@dataclass(frozen=True)
class Archived:
    id: str
    source: str  # "from" on the wire
    to: str
    reason: str


@dataclass(frozen=True)
class Promoted:
    id: str
    source: str  # "from" on the wire
    to: str
    reason: str
    links: tuple[str, ...]  # the Related section's wikilinks


@dataclass(frozen=True)
class LeftAlone:
    """An active memory no sweep touches (a read-only note), and why."""

    id: str
    path: str
    reason: str


@dataclass(frozen=True)
class GcResult:
    dry_run: bool
    archive: tuple[Planned, ...]
    archived: tuple[Archived, ...]
    kept: int
    left_alone: tuple[LeftAlone, ...]
    operation: str | None = None

    def with_operation(self, operation: str) -> GcResult:
        return replace(self, operation=operation)


@dataclass(frozen=True)
class PromoteResult:
    dry_run: bool
    promote: tuple[Planned, ...]
    promoted: tuple[Promoted, ...]
    left_alone: tuple[LeftAlone, ...]
    operation: str | None = None

    def with_operation(self, operation: str) -> PromoteResult:
        return replace(self, operation=operation)


@dataclass(frozen=True)
class SweepResult:
    dry_run: bool
    archive: tuple[Planned, ...]
    promote: tuple[Planned, ...]
    keep: int
    archived: tuple[Archived, ...]
    promoted: tuple[Promoted, ...]
    finished_moves: tuple[Move, ...]
    left_alone: tuple[LeftAlone, ...]
    operation: str | None = None

    def with_operation(self, operation: str) -> SweepResult:
        return replace(self, operation=operation)


@dataclass(frozen=True)
class PutBack:
    """A note moved back where it was (undo), or a conflict copy moved to the archive."""

    source: str  # "from" on the wire
    to: str


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class UndoResult:
    operation: str
    kind: str
    restored: tuple[PutBack, ...]
    archived: tuple[Move, ...]  # memories the operation had created
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True)
class OperationSummary:
    """One logged operation `undo` can take back."""

    id: str
    kind: str
    at: str  # ISO 8601, as logged
    moves: int
    created: int  # memories it created (a merged note)
    undone_at: str | None


@dataclass(frozen=True)
class RecentOperations:
    operations: tuple[OperationSummary, ...]


@dataclass(frozen=True)
class ConflictCopy:
    """A sync conflict copy of a memory's note, as a reconcile plans to merge it."""

    path: str
    kind: str | None  # the sync tool its name points to (None: not a known one)
    text_differs: bool  # its text is not the canonical note's (linked from it when merged)


@dataclass(frozen=True)
class CopiesPlanned:
    id: str
    canonical: str
    copies: tuple[ConflictCopy, ...]
    use_count: int  # the canonical note's count once the copies' uses are merged in


@dataclass(frozen=True)
class CopiesMerged:
    id: str
    canonical: str
    use_count: int
    archived: tuple[PutBack, ...]  # each copy's move into the archive folder
    linked: tuple[str, ...]  # copies whose differing text the canonical note links to


@dataclass(frozen=True)
class ReconcileResult:
    dry_run: bool
    duplicates: tuple[CopiesPlanned, ...]
    merged: tuple[CopiesMerged, ...]
    git_conflicts: tuple[str, ...]
