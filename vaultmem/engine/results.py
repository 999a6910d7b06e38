"""What the use cases answer: frozen, typed values, turned into the protocol's JSON only at the
edge (`vaultmem/api/wire.py`, one function per shape; docs/protocol.md).

Values are kept as computed (unrounded scores, datetimes in the state): rounding and text
forms are the wire's business.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.core.decisions import Decision
from vaultmem.core.memory import MemoryState


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
class IndexBuilding:
    """A whole-vault sync in progress: answers from the index are partial meanwhile."""

    done: int
    total: int


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: tuple[SearchHit, ...]
    indexing: IndexBuilding | None = None


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


# every typed answer an operation gives (`Api.run`); `api/wire.py` has the JSON of each
Result = MemoryView | SearchResult | RelatedResult | ObserveResult | ReviewResult
