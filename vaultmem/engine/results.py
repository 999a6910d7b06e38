"""What the use cases answer: frozen, typed values, turned into the protocol's JSON only at the
edge (`vaultmem/api/wire.py`, one function per shape; docs/protocol.md).

Values are kept as computed (unrounded scores, datetimes in the state): rounding and text
forms are the wire's business. What the vault's upkeep answers (sweep, gc, promote, undo,
reconcile) is in `engine/upkeep_results.py`; `Result` names every typed answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vaultmem.core.decisions import Decision
from vaultmem.core.memory import MemoryState
from vaultmem.engine.status_results import StatusAnswer
from vaultmem.engine.upkeep_results import (
    GcResult,
    Move,
    PromoteResult,
    RecentOperations,
    ReconcileResult,
    SweepResult,
    UndoResult,
)
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


# every typed answer an operation gives (`Api.run`); `api/wire.py` has the JSON of each
Result = (MemoryView | SearchResult | RelatedResult | ObserveResult | ReviewResult
          | ClustersResult | MergeResult | GcResult | PromoteResult | SweepResult | SaveResult
          | ListResult | ForgetResult | RestoreResult | EditResult | SupersedeResult
          | UnsupersedeResult | UndoResult | RecentOperations | ReconcileResult
          | StatusAnswer | ReindexResult)
