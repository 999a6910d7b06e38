"""An in-memory matrix of chunk vectors for exact cosine top-k search.

LanceDB stays the durable store; this mirror answers vector queries with one
matrix-vector product (milliseconds at 100k x 384) instead of a brute-force table scan
or an approximate index. Rows of removed notes are tombstoned and squeezed out once they
make up a quarter of the matrix, so each update costs O(changed rows), amortised.

Not thread-safe on its own: LanceIndex serialises access with its lock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

from vaultmem.core.ranking import ChunkHit
from vaultmem.index.base import Vector

_MIN_CAPACITY = 1024
# A path filter keeping at least 1/BROAD_FILTER of the notes is searched by walking the
# unfiltered ranking (see VectorMatrix._search_broad); narrower ones gather their own rows.
BROAD_FILTER = 20
_MIN_DEAD_FOR_COMPACTION = 1024
_COPY_ROWS = 4096  # rows copied at a time when the matrix is moved (grown or compacted)


def normalise_rows(vectors: Vector) -> Vector:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    unit: Vector = (vectors / norms).astype(np.float32, copy=False)
    return unit


class VectorMatrix:
    """Chunk vectors with parallel chunk id, path and text lists."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._reset()

    def _reset(self) -> None:
        dim = self.dim
        self._vectors: Vector = np.zeros((_MIN_CAPACITY, dim), dtype=np.float32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(_MIN_CAPACITY, dtype=bool)
        self._ids: list[str] = []
        self._paths: list[str] = []
        self._texts: list[str] = []
        # each row's chunk index and heading, or None where the caller did not give them
        self._places: list[tuple[int, str] | None] = []
        self._rows_by_path: dict[str, list[int]] = {}
        # each row's LanceDB row id (-1: not known), and the live rows by row id
        self._row_ids: list[int] = []
        self._rows_by_row_id: dict[int, int] = {}
        self._dead = 0
        self._note_cache: tuple[list[str], Vector] | None = None

    def __len__(self) -> int:
        """Number of live chunk rows."""
        return len(self._ids) - self._dead

    @property
    def note_count(self) -> int:
        """Number of notes with live rows."""
        return len(self._rows_by_path)

    def add(
        self,
        chunk_ids: Sequence[str],
        paths: Sequence[str],
        texts: Sequence[str],
        vectors: Vector,
        places: Sequence[tuple[int, str] | None] | None = None,
        row_ids: Sequence[int] | None = None,
    ) -> None:
        """Append rows; the caller removes a note's old rows first. `places`: each row's
        chunk index and heading, which `chunks_of` needs; `row_ids`: their LanceDB row ids,
        which `hits_by_row_id` needs (-1 or None: not known)."""
        count = len(chunk_ids)
        places = [None] * count if places is None else places
        row_ids = [-1] * count if row_ids is None else row_ids
        if not (len(paths) == len(texts) == len(places) == len(row_ids) == count
                == vectors.shape[0]):
            raise ValueError("chunk ids, paths, texts, places, row ids and vectors differ "
                             "in length")
        if count == 0:
            return
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of dim {self.dim}, got shape {vectors.shape}")
        start = len(self._ids)
        self._reserve(start + count)
        _write_rows(self._vectors, start, vectors)
        self._append(chunk_ids, paths, texts, places, row_ids)

    def _append(self, chunk_ids: Sequence[str], paths: Sequence[str], texts: Sequence[str],
                places: Sequence[tuple[int, str] | None], row_ids: Sequence[int]) -> None:
        """The rows' lists and lookups (their vectors written already)."""
        start, count = len(self._ids), len(chunk_ids)
        self._alive[start : start + count] = True
        self._ids.extend(chunk_ids)
        self._paths.extend(paths)
        self._texts.extend(texts)
        self._places.extend(places)
        self._row_ids.extend(row_ids)
        for offset, path in enumerate(paths):
            self._rows_by_path.setdefault(path, []).append(start + offset)
        for offset, row_id in enumerate(row_ids):
            if row_id >= 0:
                self._rows_by_row_id[row_id] = start + offset
        self._note_cache = None

    def remove_paths(self, paths: Iterable[str]) -> int:
        """Tombstone every row of these notes; returns the number of rows removed."""
        removed = 0
        for path in paths:
            rows = self._rows_by_path.pop(path, None)
            if rows:
                self._alive[rows] = False
                removed += len(rows)
                for row in rows:
                    self._rows_by_row_id.pop(self._row_ids[row], None)
        if removed:
            self._dead += removed
            self._note_cache = None
            if self._dead >= max(_MIN_DEAD_FOR_COMPACTION, len(self._ids) // 4):
                self.compact()
        return removed

    def compact(self) -> None:
        """Drop tombstoned rows and rebuild the lookup tables."""
        keep = np.flatnonzero(self._alive[: len(self._ids)])
        old = self._vectors
        ids = [self._ids[i] for i in keep]
        paths = [self._paths[i] for i in keep]
        texts = [self._texts[i] for i in keep]
        places = [self._places[i] for i in keep]
        row_ids = [self._row_ids[i] for i in keep]
        self._reset()
        self._reserve(len(keep))
        for first in range(0, len(keep), _COPY_ROWS):  # no copy of every row at once
            rows = keep[first : first + _COPY_ROWS]
            _write_rows(self._vectors, first, old[rows])
        self._append(ids, paths, texts, places, row_ids)

    def set_row_ids(self, row_ids: Sequence[int], chunk_ids: Sequence[str],
                    paths: Sequence[str]) -> None:
        """The row ids of the stored rows now (a table optimise gives every row a new one);
        a row not among them has none until it is learnt."""
        self._row_ids = [-1] * len(self._ids)
        self._rows_by_row_id = {}
        self.learn_row_ids(row_ids, chunk_ids, paths)

    def learn_row_ids(self, row_ids: Sequence[int], chunk_ids: Sequence[str],
                      paths: Sequence[str]) -> None:
        """These stored rows' ids (rows written since the ids were last set have none)."""
        for row_id, chunk_id, path in zip(row_ids, chunk_ids, paths, strict=True):
            for row in self._rows_by_path.get(path, ()):
                if self._ids[row] == chunk_id:
                    self._rows_by_row_id.pop(self._row_ids[row], None)
                    self._row_ids[row] = row_id
                    self._rows_by_row_id[row_id] = row
                    break

    def unknown_row_ids(self, row_ids: Iterable[int]) -> list[int]:
        """The ids among these that no live row has."""
        return [row_id for row_id in row_ids if row_id not in self._rows_by_row_id]

    def hits_by_row_id(self, row_ids: Sequence[int], scores: Sequence[float]
                       ) -> list[ChunkHit] | None:
        """Hits for LanceDB rows found by their ids, or None if one is not a known live row
        (written since the row ids were last set)."""
        rows = self._rows_by_row_id
        hits = []
        for row_id, score in zip(row_ids, scores, strict=True):
            row = rows.get(row_id)
            if row is None:
                return None
            hits.append(ChunkHit(self._ids[row], self._paths[row], self._texts[row], score))
        return hits

    def chunks_of(self, paths: Collection[str]) -> list[tuple[str, str, int, str, str, Vector]]:
        """The live rows of these notes: (chunk id, path, index, heading, text, vector)."""
        out = []
        for path in paths:
            for row in self._rows_by_path.get(path, ()):
                place = self._places[row]
                if place is None:
                    raise ValueError(f"row {self._ids[row]} was added without its place")
                out.append((self._ids[row], path, place[0], place[1], self._texts[row],
                            self._vectors[row].copy()))
        return out

    def search(self, query: Vector, k: int, paths: Collection[str] | None = None) -> list[ChunkHit]:
        """Exact cosine top-k over live rows, optionally only rows of the given notes."""
        if k <= 0 or len(self) == 0:
            return []
        query = _unit(query.astype(np.float32, copy=False))
        if paths is not None and len(paths) * BROAD_FILTER >= len(self._rows_by_path):
            return self._search_broad(query, k, paths)
        rows, scores = self._scores(query, paths)
        if scores.size == 0:
            return []
        order = _top_k(scores, k)
        picked = order if rows is None else rows[order]
        return self._hits(picked.tolist(), scores[order].tolist())

    def _search_broad(self, query: Vector, k: int, paths: Collection[str]) -> list[ChunkHit]:
        """A filter that keeps many notes: rank every row (as unfiltered), then walk the best
        rows down until k belong to allowed notes, widening the walk when too few do. Exact,
        and far cheaper than gathering the allowed notes' rows one by one."""
        allowed = paths if isinstance(paths, (set, frozenset)) else set(paths)
        _, scores = self._scores(query, None)
        live = len(self)
        share = max(len(allowed), 1) / max(len(self._rows_by_path), 1)
        depth = min(live, max(2 * k, int(1.5 * k / share)))
        while True:
            order = _top_k(scores, depth).tolist()
            picked = [row for row in order if self._paths[row] in allowed][:k]
            if len(picked) == k or depth >= live:
                break
            depth = min(live, depth * 4)
        return self._hits(picked, scores[picked].tolist())

    def _hits(self, rows: list[int], scores: list[float]) -> list[ChunkHit]:
        # Python ints and floats: indexing the lists with numpy scalars took several times longer
        ids, paths, texts = self._ids, self._paths, self._texts
        return [ChunkHit(ids[row], paths[row], texts[row], score)
                for row, score in zip(rows, scores, strict=True)]

    def note_vectors(self, paths: Collection[str] | None = None) -> dict[str, Vector]:
        """One unit-length mean vector per note (notes without rows are left out)."""
        names, matrix = self._note_matrix()
        if paths is None:
            return {name: matrix[i] for i, name in enumerate(names)}
        wanted = set(paths)
        return {name: matrix[i] for i, name in enumerate(names) if name in wanted}

    def related(self, path: str, k: int) -> list[tuple[str, float]]:
        """Nearest other notes by note vector (cosine), best first."""
        names, matrix = self._note_matrix()
        if k <= 0 or path not in self._rows_by_path:
            return []
        own = names.index(path)
        scores = matrix @ matrix[own]
        scores[own] = -np.inf
        count = min(k, len(names) - 1)
        if count <= 0:
            return []
        order = _top_k(scores, count)
        return [(names[i], float(scores[i])) for i in order]

    def _scores(
        self, query: Vector, paths: Collection[str] | None
    ) -> tuple[npt.NDArray[np.intp] | None, npt.NDArray[np.float32]]:
        used = len(self._ids)
        if paths is None:
            scores = self._vectors[:used] @ query
            if self._dead:
                scores[~self._alive[:used]] = -np.inf
            return None, scores
        wanted = [self._rows_by_path[p] for p in set(paths) if p in self._rows_by_path]
        rows = np.fromiter(chain.from_iterable(wanted), dtype=np.intp)
        if rows.size * 4 >= used:
            return rows, (self._vectors[:used] @ query)[rows]
        return rows, self._vectors[rows] @ query

    def _note_matrix(self) -> tuple[list[str], Vector]:
        if self._note_cache is None:
            names = list(self._rows_by_path)
            if not names:
                self._note_cache = ([], np.zeros((0, self.dim), dtype=np.float32))
                return self._note_cache
            groups = [self._rows_by_path[name] for name in names]
            rows = np.fromiter(chain.from_iterable(groups), dtype=np.intp)
            starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
            sums = np.add.reduceat(self._vectors[rows], starts, axis=0)
            unit = normalise_rows(sums)
            unit.setflags(write=False)  # callers get views of this cache
            self._note_cache = (names, unit)
        return self._note_cache

    def _reserve(self, needed: int) -> None:
        capacity = self._vectors.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2)
        vectors = np.zeros((new_capacity, self.dim), dtype=np.float32)
        for first in range(0, len(self._ids), _COPY_ROWS):
            _write_rows(vectors, first, self._vectors[first : first + _COPY_ROWS])
        alive = np.zeros(new_capacity, dtype=bool)
        alive[:capacity] = self._alive
        self._vectors, self._alive = vectors, alive


def _write_rows(matrix: Vector, start: int, vectors: Vector) -> None:
    """`vectors` into `matrix` from row `start`, leaving its zero rows unwritten: the matrix
    is made zeroed (np.zeros: pages the system gives on first write), so a zero row need not
    be written, and a page never written takes no memory. A first index's words pass adds
    every chunk with a zero vector (pipeline/words_first.py): tens of thousands of rows, tens
    of MB, that its vectors then replace."""
    filled = np.flatnonzero(vectors.any(axis=1))
    if filled.size == len(vectors):
        matrix[start : start + len(vectors)] = vectors
    elif filled.size:
        matrix[start + filled] = vectors[filled]


def _unit(vector: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    return vector if norm == 0.0 else vector / norm


def _top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k highest scores, best first (excluding -inf)."""
    count = min(k, int(np.count_nonzero(scores > -np.inf)))
    if count <= 0:
        return np.zeros(0, dtype=np.intp)
    if count < scores.size:
        part = np.argpartition(-scores, count - 1)[:count]
    else:
        part = np.arange(scores.size)
    return part[np.argsort(-scores[part], kind="stable")]
