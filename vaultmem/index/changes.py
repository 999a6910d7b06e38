"""Turn one `LanceIndex.apply` call into the chunk rows to delete and add."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from vaultmem.index.base import ChunkRecord, NoteRecord, searchable_title
from vaultmem.index.tables import relocate_chunks


@dataclass(frozen=True)
class ChangePlan:
    """A validated batch of chunk changes: notes (re-)embedded, renamed in place (their
    searchable title changed), moved, or deleted. Note records only lend their path and names:
    the catalog is the one per-note record."""

    upserts: tuple[tuple[NoteRecord, tuple[ChunkRecord, ...]], ...]
    retitles: tuple[NoteRecord, ...]
    moves: tuple[tuple[str, NoteRecord], ...]
    deletes: frozenset[str]

    @classmethod
    def build(
        cls,
        upserts: Sequence[tuple[NoteRecord, Sequence[ChunkRecord]]],
        retitles: Sequence[NoteRecord],
        moves: Sequence[tuple[str, NoteRecord]],
        deletes: Sequence[str],
    ) -> ChangePlan:
        plan = cls(
            upserts=tuple((record, tuple(chunks)) for record, chunks in upserts),
            retitles=tuple(retitles),
            moves=tuple(moves),
            deletes=frozenset(deletes),
        )
        plan._validate()
        return plan

    def _validate(self) -> None:
        targets = [
            *(record.path for record, _ in self.upserts),
            *(record.path for record in self.retitles),
            *(record.path for _, record in self.moves),
        ]
        if len(targets) != len(set(targets)):
            raise ValueError("apply(): a note path is the target of more than one change")
        dims = set()
        for record, chunks in self.upserts:
            for chunk in chunks:
                if chunk.path != record.path:
                    raise ValueError(f"chunk {chunk.chunk_id!r} does not belong to {record.path!r}")
                if chunk.vector.ndim != 1:
                    raise ValueError(f"chunk {chunk.chunk_id!r} vector is not one-dimensional")
                dims.add(chunk.vector.shape[0])
        if len(dims) > 1:
            raise ValueError(f"apply(): chunk vectors of different sizes {sorted(dims)}")

    @property
    def is_empty(self) -> bool:
        return not (self.upserts or self.retitles or self.moves or self.deletes)

    def paths_to_carry(self) -> set[str]:
        """Notes whose stored chunks are kept but rewritten (moved or retitled)."""
        return {old for old, _ in self.moves} | {record.path for record in self.retitles}

    def vector_dim(self) -> int | None:
        for _, chunks in self.upserts:
            for chunk in chunks:
                return int(chunk.vector.shape[0])
        return None

    def upsert_chunks(self) -> list[tuple[ChunkRecord, str, str]]:
        return [(chunk, searchable_title(record), record.language)
                for record, chunks in self.upserts for chunk in chunks]

    def rewritten_chunks(self, carried: pa.Table) -> list[pa.Table]:
        """Moved chunks under their new path, and chunks of retitled notes with the new title."""
        rows_by_path = _rows_by_path(carried)
        parts = []
        for old, record in self.moves:
            if old in rows_by_path:
                parts.append(
                    relocate_chunks(carried.take(rows_by_path[old]), record.path,
                                    searchable_title(record))
                )
        for path in self._retitled(carried, rows_by_path):
            parts.append(relocate_chunks(carried.take(rows_by_path[path]), path,
                                         searchable_title(self._retitle_of(path))))
        return parts

    def chunk_paths_to_remove(self, carried: pa.Table | None) -> set[str]:
        removed = {record.path for record, _ in self.upserts}
        for old, record in self.moves:
            removed.update((old, record.path))
        if carried is not None:
            removed.update(self._retitled(carried, _rows_by_path(carried)))
        return removed | self.deletes

    def _retitled(self, carried: pa.Table, rows_by_path: dict[str, list[int]]) -> list[str]:
        titles = carried.column("title").to_pylist()
        return [
            record.path
            for record in self.retitles
            if any(titles[row] != searchable_title(record)
                   for row in rows_by_path.get(record.path, ()))
        ]

    def _retitle_of(self, path: str) -> NoteRecord:
        return next(record for record in self.retitles if record.path == path)


def _rows_by_path(rows: pa.Table) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for row, path in enumerate(rows.column("path").to_pylist()):
        grouped.setdefault(path, []).append(row)
    return grouped
