"""What the indexer (pipeline/indexer.py) works through and reports: the chunk store it writes
(LanceIndex implements it, behind the app's LazyIndex), the progress callback, and the report
of one sync."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from vaultmem.index.base import ChunkRecord, NoteRecord
from vaultmem.index.upkeep import Occasion

Progress = Callable[[int, int], None]


class ChunkStore(Protocol):
    """What the indexer needs of the chunk index (LanceIndex implements it)."""

    def apply(
        self,
        *,
        upserts: Sequence[tuple[NoteRecord, Sequence[ChunkRecord]]] = (),
        retitles: Sequence[NoteRecord] = (),
        moves: Sequence[tuple[str, NoteRecord]] = (),
        deletes: Sequence[str] = (),
    ) -> None: ...

    def clear(self) -> None: ...

    def stored_chunks(self, paths: Collection[str]) -> Sequence[ChunkRecord]: ...

    def upkeep(self, occasion: Occasion) -> str | None: ...


class StoreHandle(Protocol):
    """Opens the chunk store on demand; reports an identity problem without opening it."""

    def __call__(self) -> ChunkStore: ...

    def identity_problem(self) -> str | None: ...

    def exists(self) -> bool: ...


@dataclass
class SyncReport:
    added: int = 0
    changed: int = 0
    meta_changed: int = 0
    moved: int = 0
    deleted: int = 0
    skipped: int = 0
    failed: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    rebuilt_reason: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path)

    def result(self, finished: datetime | None = None) -> ReindexResult:
        """The report as `reindex` answers it (the moves themselves stay inside);
        `finished`: when the daemon's run ended (the daemon's answers and status say it)."""
        return ReindexResult(
            added=self.added, changed=self.changed, meta_changed=self.meta_changed,
            moved=self.moved, deleted=self.deleted, skipped=self.skipped, failed=self.failed,
            chunks_embedded=self.chunks_embedded, seconds=self.seconds,
            rebuilt_reason=self.rebuilt_reason, failures=tuple(self.failures),
            finished=finished,
        )

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.meta_changed + self.moved + self.deleted


@dataclass(frozen=True)
class ReindexResult:
    """A finished sync's counts as `reindex` answers them (`SyncReport.result`)."""

    added: int
    changed: int
    meta_changed: int
    moved: int
    deleted: int
    skipped: int
    failed: int
    chunks_embedded: int
    seconds: float
    rebuilt_reason: str | None
    failures: tuple[tuple[str, str], ...]
    finished: datetime | None = None
