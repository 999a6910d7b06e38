"""What the use cases answer: frozen, typed values, turned into the protocol's JSON only at the
edge (`vaultmem/api/wire.py`, one function per shape; docs/protocol.md).

Values are kept as computed (unrounded scores, datetimes in the state): rounding and text
forms are the wire's business.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, Self

from vaultmem.core.decisions import Decision
from vaultmem.core.memory import MemoryState
from vaultmem.engine.status_results import StatusAnswer
from vaultmem.pipeline.index_ports import ReindexResult
from vaultmem.pipeline.progress import IndexState


@dataclass(frozen=True)
class MemoryView:
    """One memory as every answer shows it: its note, its state, and what decay makes of it
    at the answer's `now`."""

    path: str
    title: str
    uri: str  # opens the note in Obsidian
    state: MemoryState
    score: float
    decision: Decision
    review_priority: float

    @property
    def id(self) -> str:
        return self.state.id


@dataclass(frozen=True)
class NoteRef:
    """A memory named in an answer: its id, where its note is, its title and link."""

    id: str
    path: str
    title: str
    uri: str

    @staticmethod
    def of(view: MemoryView) -> NoteRef:
        return NoteRef(view.id, view.path, view.title, view.uri)


@dataclass(frozen=True)
class Successor:
    """The memory replacing a superseded one; path, title and uri are None when no note in
    the vault carries its id any more."""

    id: str
    path: str | None
    title: str | None
    uri: str | None


@dataclass(frozen=True)
class SearchHit:
    path: str
    title: str
    uri: str
    snippet: str
    relevance: float
    score: float | None  # memory score; None for regular notes
    final: float
    review: bool
    memory_id: str | None
    tags: tuple[str, ...]
    matched: bool = False  # relevance at or above the documented match threshold
    superseded_by: Successor | None = None


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: tuple[SearchHit, ...]
    indexing: IndexState | None = None  # the Api sets it on every answer


@dataclass(frozen=True)
class RelatedNote:
    path: str
    title: str
    similarity: float


@dataclass(frozen=True)
class RelatedResult:
    path: str
    related: tuple[RelatedNote, ...]


@dataclass(frozen=True)
class Observation:
    memory: MemoryView
    cross_domain: bool  # the use came from another domain than the memory's tags


@dataclass(frozen=True)
class ObserveResult:
    observed: tuple[Observation, ...]


@dataclass(frozen=True)
class UpdateProposal:
    """A detected update awaiting confirmation: `old` may be replaced by `by`."""

    old: NoteRef
    reason: str
    by: NoteRef


@dataclass(frozen=True)
class ReviewResult:
    items: tuple[MemoryView, ...]
    total: int
    updates: tuple[UpdateProposal, ...] = ()


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
class ClusterMember:
    id: str
    path: str
    title: str
    use_count: int
    score: float


@dataclass(frozen=True)
class ClusterView:
    id: str
    cohesion: float
    action: str  # merge, review or keep_apart
    members: tuple[ClusterMember, ...]


@dataclass(frozen=True)
class ClustersResult:
    clusters: tuple[ClusterView, ...]


@dataclass(frozen=True)
class MergeResult:
    cluster_id: str
    merged_into: MemoryView
    archived: tuple[Move, ...]
    operation: str | None = None

    def with_operation(self, operation: str) -> MergeResult:
        return replace(self, operation=operation)


@dataclass(frozen=True)
class MergeSkipped:
    cluster_id: str
    reason: str


@dataclass(frozen=True)
class AutoMergeResult:
    merged: tuple[MergeResult, ...]
    review: tuple[ClusterView, ...]
    skipped: tuple[MergeSkipped, ...]
    operation: str | None = None

    def with_operation(self, operation: str) -> AutoMergeResult:
        return replace(self, operation=operation)


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
class Reinforced:
    """A save that repeated a memory: a use of that memory (`counted`) instead of a new one."""

    id: str
    reason: str
    counted: bool


@dataclass(frozen=True)
class Similar:
    """The memory a held-back save says nearly what it says."""

    id: str
    path: str
    title: str
    similarity: float


@dataclass(frozen=True)
class PossibleUpdate:
    """The memory a new save most likely updates; `applied` when it was superseded at once."""

    of: NoteRef
    reason: str
    cosine: float
    applied: bool


@dataclass(frozen=True)
class SaveResult:
    created: bool
    memory: MemoryView  # the new memory, or the one the save reinforced or resembles
    reinforced: Reinforced | None = None
    similar: Similar | None = None  # held back: the save was not written
    superseded: NoteRef | None = None
    possible_update_of: PossibleUpdate | None = None


@dataclass(frozen=True)
class ListResult:
    memories: tuple[MemoryView, ...]
    total: int  # how many passed the filters, before the limit


@dataclass(frozen=True)
class ForgetResult:
    forgotten: Move
    memory: MemoryView


@dataclass(frozen=True)
class RestoreResult:
    restored: Move
    memory: MemoryView


@dataclass(frozen=True)
class EditResult:
    id: str
    path: str
    changed: tuple[str, ...]  # text, title, tags
    memory: MemoryView


@dataclass(frozen=True)
class SupersedeResult:
    superseded: MemoryView
    by: MemoryView


@dataclass(frozen=True)
class UnsupersedeResult:
    unsuperseded: MemoryView | None
    successor: MemoryView | None
    dismissed: MemoryView | None = None  # a proposed update dropped instead


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


# every typed answer an operation gives (`Api.run`); `api/wire.py` has the JSON of each
Result = (MemoryView | SearchResult | RelatedResult | ObserveResult | ReviewResult
          | ClustersResult | MergeResult | GcResult | PromoteResult | SweepResult | SaveResult
          | ListResult | ForgetResult | RestoreResult | EditResult | SupersedeResult
          | UnsupersedeResult | UndoResult | RecentOperations | ReconcileResult
          | StatusAnswer | ReindexResult)
