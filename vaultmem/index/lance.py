"""LanceIndex: the durable, rebuildable index of notes and chunks in LanceDB.

Two tables: `notes` (one row per note file, including skipped/failed ones) and `chunks`
(one row per embedded chunk). Vector search runs on an in-memory mirror of the chunk
vectors (vectors.VectorMatrix); full-text search uses LanceDB's native BM25 index.
Every write makes a LanceDB fragment and version, so `apply` batches a whole change into
at most one delete and one add per table, and the tables are optimised every few writes.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
from lancedb.index import FTS
from lancedb.query import FullTextOperator, MultiMatchQuery

from vaultmem.core.ranking import ChunkHit
from vaultmem.errors import IndexError_
from vaultmem.index import tables as tb
from vaultmem.index.base import SCHEMA_VERSION, ChunkRecord, IndexOptions, NoteRecord, Vector
from vaultmem.index.changes import ChangePlan
from vaultmem.index.identity import META_FILE, identity_problem
from vaultmem.index.vectors import BROAD_FILTER, VectorMatrix

#: Old table versions are kept this long after an optimise (readers may still use them).
KEEP_OLD_VERSIONS = timedelta(minutes=5)
_TITLE_BOOST = 0.5
OPEN_FRAGMENT_LIMIT = 8  # more fragments than this when the index opens: optimise
BROAD_TEXT_HITS = 50  # allowed full-text hits a broad filter's walk is sized for


class _Unusable(Exception):
    """The stored index cannot be used as it is; rebuild it."""


class LanceIndex:
    """The notes and chunks tables plus an in-memory vector mirror. Thread-safe."""

    def __init__(
        self, path: Path, embedder_name: str, options: IndexOptions | None = None
    ) -> None:
        options = options or IndexOptions()
        self.path = Path(path)
        self.embedder_name = embedder_name
        self.optimize_every = options.optimize_every
        self._session = lancedb.Session(
            index_cache_size_bytes=options.index_cache_mb * 2**20,
            metadata_cache_size_bytes=options.metadata_cache_mb * 2**20,
        )
        self.rebuilt_reason: str | None = None
        self._lock = threading.RLock()  # the tables, the matrix and their state
        self._write_lock = threading.RLock()  # writers and optimise, one at a time
        self._db: Any = None
        self._notes: Any = None
        self._chunks: Any = None
        self._dim: int | None = None
        self._matrix: VectorMatrix | None = None
        self._fts_ready = False
        self._writes_since_optimize = 0
        self._open()

    # ---- opening, validation and rebuilding -------------------------------------------

    def _open(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise IndexError_(f"index path {self.path} is a file, not a directory")
        self.path.mkdir(parents=True, exist_ok=True)
        reason = self._meta_problem()
        if reason is not None:
            self._wipe(reason)
        try:
            self._open_tables()
        except Exception as exc:
            if self.rebuilt_reason is not None:
                raise IndexError_(f"cannot create the index at {self.path}: {exc}") from exc
            self._wipe(f"index storage was unreadable ({_short(exc)})")
            self._open_tables()
        self._write_meta()
        self._optimize_if_fragmented()

    def _optimize_if_fragmented(self) -> None:
        """The write counter is per process: catch up on fragments left by earlier runs (a
        fragment written since the last optimise is searched without the full-text index)."""
        if self.optimize_every <= 0:
            return
        tables = [t for t in (self._notes, self._chunks) if t is not None]
        if any(_fragments(table) > OPEN_FRAGMENT_LIMIT for table in tables):
            self.optimize()

    def _meta_problem(self) -> str | None:
        """Why the stored index must be rebuilt, or None if it is usable (or new)."""
        return identity_problem(self.path, self.embedder_name)

    def _table_dirs(self) -> list[Path]:
        return [
            self.path / f"{name}.lance"
            for name in (tb.NOTES, tb.CHUNKS)
            if (self.path / f"{name}.lance").exists()
        ]

    def _wipe(self, reason: str) -> None:
        """Remove only what this index created, never other files in the directory."""
        self._db = self._notes = self._chunks = None
        for table_dir in self._table_dirs():
            if table_dir.is_dir():
                shutil.rmtree(table_dir)
            else:
                table_dir.unlink()
        (self.path / META_FILE).unlink(missing_ok=True)
        self.rebuilt_reason = reason

    def _open_tables(self) -> None:
        self._db = lancedb.connect(str(self.path), session=self._session)
        self._matrix, self._fts_ready, self._dim = None, False, None
        self._notes = self._open_or_create(tb.NOTES, tb.NOTES_SCHEMA)
        if self._notes.schema != tb.NOTES_SCHEMA:
            raise _Unusable("notes table has an unexpected schema")
        self._notes.to_arrow()  # reads every notes data file: catches damaged storage early
        self._chunks = None
        if (self.path / f"{tb.CHUNKS}.lance").exists():
            self._chunks = self._db.open_table(tb.CHUNKS)
            self._dim = tb.vector_dim(self._chunks.schema)
            if self._chunks.schema != tb.chunks_schema(self._dim):
                raise _Unusable("chunks table has an unexpected schema")
            self._chunks.search().select(["chunk_id", "path"]).to_arrow()

    def _open_or_create(self, name: str, schema: pa.Schema) -> Any:
        if (self.path / f"{name}.lance").exists():
            return self._db.open_table(name)
        return self._db.create_table(name, schema=schema)

    def _write_meta(self) -> None:
        meta = {"schema_version": SCHEMA_VERSION, "embedder_name": self.embedder_name}
        tmp = self.path / f"{META_FILE}.tmp"
        tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.path / META_FILE)

    # ---- reads ------------------------------------------------------------------------

    def note_records(self) -> dict[str, NoteRecord]:
        with self._lock, _storage_errors():
            records = tb.notes_from_arrow(self._notes.to_arrow())
        return {record.path: record for record in records}

    def find_by_note_id(self, note_id: str) -> NoteRecord | None:
        if not note_id:
            return None
        with self._lock, _storage_errors():
            rows = self._notes.search().where(f"note_id = {tb.sql_string(note_id)}")
            found = tb.notes_from_arrow(rows.limit(1).to_arrow())
        return found[0] if found else None

    def vector_search(
        self, vector: Vector, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]:
        with self._lock:
            matrix = self._ensure_matrix()
            if matrix is None:
                return []
            if vector.shape != (matrix.dim,):
                raise IndexError_(f"query vector has shape {vector.shape}, index dim {matrix.dim}")
            return matrix.search(vector, k, paths)

    def text_search(
        self, query: str, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]:
        terms = tb.fts_terms(query)
        if not terms or k <= 0 or (paths is not None and not paths):
            return []
        with self._lock, _storage_errors():
            if self._chunks is None:
                return []
            self.ensure_fts_index()
            notes = self._matrix.note_count if self._matrix is not None else 0
            if paths is not None and len(paths) * BROAD_FILTER >= notes > 0:
                return self._text_search_broad(terms, k, paths, notes)
            where = tb.in_list("path", paths) if paths is not None else None
            return self._full_text(terms, k, where)

    def _full_text(
        self, terms: str, k: int, where: str | None, *, with_text: bool = True
    ) -> list[ChunkHit]:
        full_text = MultiMatchQuery(
            terms,
            list(tb.FTS_COLUMNS),
            boosts=[1.0, _TITLE_BOOST],
            operator=FullTextOperator.OR,
        )
        search = self._chunks.search(full_text, query_type="fts")
        columns = ["chunk_id", "path", "text", "_score"] if with_text else [
            "chunk_id", "path", "_score"]
        search = search.select(columns).limit(k)
        if where is not None:
            search = search.where(where, prefilter=True)
        rows = search.to_arrow().to_pylist()
        return [
            ChunkHit(row["chunk_id"], row["path"], row.get("text", ""), float(row["_score"]))
            for row in rows
        ]

    def _text_search_broad(
        self, terms: str, k: int, paths: Collection[str], notes: int
    ) -> list[ChunkHit]:
        """A filter that keeps many notes: a list of thousands of paths makes the prefilter
        cost several times the search, so fetch more unfiltered hits and keep the allowed
        ones; only if too few are allowed among them, fall back to the prefilter."""
        allowed = paths if isinstance(paths, (set, frozenset)) else set(paths)
        # The walk is sized for BROAD_TEXT_HITS allowed hits: beyond the first few dozen, words
        # add candidates whose BM25 is a small share of the best, not worth a deeper walk.
        wanted = min(k, BROAD_TEXT_HITS)
        depth = max(2 * wanted, int(1.5 * wanted * notes / max(len(allowed), 1)))
        # without the text column (most of the bytes): the kept hits' texts come from the
        # in-memory matrix, which holds every chunk's text
        hits = self._full_text(terms, depth, None, with_text=False)
        kept = [hit for hit in hits if hit.path in allowed][:k]
        if len(kept) >= wanted or len(hits) < depth:  # enough, or every match was seen
            texts = [self._chunk_text(hit) for hit in kept]
            if None not in texts:
                return [replace(hit, text=text) for hit, text in zip(kept, texts, strict=True)
                        if text is not None]
        return self._full_text(terms, k, tb.in_list("path", allowed))

    def _chunk_text(self, hit: ChunkHit) -> str | None:
        return None if self._matrix is None else self._matrix.text_of(hit.chunk_id, hit.path)

    def note_vectors(self, paths: Collection[str] | None = None) -> dict[str, Vector]:
        with self._lock:
            matrix = self._ensure_matrix()
            return {} if matrix is None else matrix.note_vectors(paths)

    def related(self, path: str, k: int) -> list[tuple[str, float]]:
        with self._lock:
            matrix = self._ensure_matrix()
            return [] if matrix is None else matrix.related(path, k)

    def chunk_vectors(self, path: str) -> Vector | None:
        """The stored chunk vectors of one note in chunk order, or None if it has none."""
        with self._lock:
            matrix = self._ensure_matrix()
            if matrix is None or path not in matrix.paths:
                return None
            return matrix.vectors_for(path)

    def _ensure_matrix(self) -> VectorMatrix | None:
        if self._matrix is None and self._chunks is not None and self._dim is not None:
            with _storage_errors():
                rows = self._chunks.search().select(["chunk_id", "path", "text", "vector"])
                self._matrix = _matrix_from(rows.to_arrow(), self._dim)
        return self._matrix

    # ---- writes -----------------------------------------------------------------------

    def apply(
        self,
        *,
        upserts: Sequence[tuple[NoteRecord, Sequence[ChunkRecord]]] = (),
        meta_updates: Sequence[NoteRecord] = (),
        moves: Sequence[tuple[str, NoteRecord]] = (),
        deletes: Sequence[str] = (),
    ) -> None:
        """One batched change: at most one delete and one add per table."""
        plan = ChangePlan.build(upserts, meta_updates, moves, deletes)
        if plan.is_empty:
            return
        with self._write_lock:
            with self._lock, _storage_errors():
                carried = self._carried_chunks(plan)
                new_chunks = self._new_chunk_rows(plan, carried)
                # Chunks first: if the process dies in between, the note rows still carry the
                # old hashes, so the next sync redoes the change.
                self._write_chunks(plan.chunk_paths_to_remove(carried), new_chunks)
                self._write_notes(plan)
                self._writes_since_optimize += 1
            if self.optimize_every > 0 and self._writes_since_optimize >= self.optimize_every:
                self.optimize()

    def _carried_chunks(self, plan: ChangePlan) -> pa.Table | None:
        """Stored chunks of moved notes and of notes whose metadata changed."""
        wanted = plan.paths_to_carry()
        if self._chunks is None or not wanted:
            return None
        rows: pa.Table = self._chunks.search().where(tb.in_list("path", wanted)).to_arrow()
        return rows.select(tb.chunks_schema(self._dim or 0).names)

    def _new_chunk_rows(self, plan: ChangePlan, carried: pa.Table | None) -> pa.Table | None:
        dim = plan.vector_dim() or self._dim
        if dim is None:
            return None
        if self._dim is not None and dim != self._dim:
            raise IndexError_(
                f"chunk vectors have dim {dim} but the index holds dim {self._dim}; "
                "rebuild the index"
            )
        parts = [tb.chunks_to_arrow(plan.upsert_chunks(), dim)]
        if carried is not None:
            parts.extend(plan.rewritten_chunks(carried))
        table = pa.concat_tables(parts)
        return table if table.num_rows else None

    def _write_notes(self, plan: ChangePlan) -> None:
        self._notes.delete(tb.in_list("path", plan.note_paths_to_remove()))
        if plan.note_rows():
            self._notes.add(tb.notes_to_arrow(plan.note_rows()))

    def _write_chunks(self, remove: set[str], add: pa.Table | None) -> None:
        if self._chunks is not None and remove:
            self._chunks.delete(tb.in_list("path", remove))
        if add is not None:
            if self._chunks is None:
                self._dim = tb.vector_dim(add.schema)
                self._chunks = self._db.create_table(tb.CHUNKS, data=add)
                self._fts_ready = False
            else:
                self._chunks.add(add)
        if self._matrix is not None:
            self._matrix.remove_paths(remove)
            if add is not None:
                _add_to_matrix(self._matrix, add)

    # ---- maintenance ------------------------------------------------------------------

    def optimize(self) -> None:
        """Compact fragments, bring indexes up to date and drop old versions.

        Searches go on meanwhile (an optimise takes seconds at 10k chunks): it holds only the
        writers' lock, and LanceDB keeps the versions that running searches read."""
        with self._write_lock:
            with self._lock:
                tables = [t for t in (self._notes, self._chunks) if t is not None]
            with _storage_errors():
                for table in tables:
                    table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
            with self._lock:
                self._writes_since_optimize = 0
                self.ensure_fts_index()

    def ensure_fts_index(self) -> None:
        """Create the full-text indexes on chunk text and title if they are missing."""
        with self._lock, _storage_errors():
            if self._fts_ready or self._chunks is None:
                return
            indexed = {
                column
                for config in self._chunks.list_indices()
                if config.index_type == "FTS"
                for column in config.columns
            }
            for column in tb.FTS_COLUMNS:
                if column not in indexed:
                    self._chunks.create_index(column, config=FTS(), replace=True)
            self._fts_ready = True

    @property
    def writes_since_optimize(self) -> int:
        """Writes since the last optimise in this process (cheap: no table is read)."""
        return self._writes_since_optimize

    def stats(self) -> dict[str, int]:
        with self._lock, _storage_errors():
            result = {"notes": self._notes.count_rows(), "chunks": 0}
            result["note_fragments"] = _fragments(self._notes)
            result["note_version"] = int(self._notes.version)
            if self._chunks is not None:
                result["chunks"] = self._chunks.count_rows()
                result["chunk_fragments"] = _fragments(self._chunks)
                result["chunk_version"] = int(self._chunks.version)
            result["writes_since_optimize"] = self._writes_since_optimize
            result["cache_bytes"] = int(self._session.size_bytes)
            return result

    def close(self) -> None:
        with self._write_lock, self._lock:  # after a running optimise
            self._notes = self._chunks = self._db = None
            self._matrix = None


def _fragments(table: Any) -> int:
    return int(table.stats()["fragment_stats"]["num_fragments"])


def _matrix_from(rows: pa.Table, dim: int) -> VectorMatrix:
    matrix = VectorMatrix(dim)
    _add_to_matrix(matrix, rows)
    return matrix


def _add_to_matrix(matrix: VectorMatrix, rows: pa.Table) -> None:
    matrix.add(
        rows.column("chunk_id").to_pylist(),
        rows.column("path").to_pylist(),
        rows.column("text").to_pylist(),
        tb.vectors_from_arrow(rows.column("vector"), matrix.dim),
    )


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:197] + "..."


@contextmanager
def _storage_errors() -> Iterator[None]:
    """Turn storage failures (LanceDB raises OSError/RuntimeError) into IndexError_."""
    try:
        yield
    except (OSError, RuntimeError) as exc:
        raise IndexError_(f"the index is unusable ({_short(exc)}); run a rebuild") from exc
