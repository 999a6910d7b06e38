"""LanceIndex: the durable, rebuildable chunk index in LanceDB.

One table, `chunks`: one row per embedded chunk (text, vector and the note's searchable
title); what is known per note file lives in the catalog (index/catalog.py) alone. Vector
search runs on an in-memory mirror of the chunk vectors (vectors.VectorMatrix); full-text
search uses LanceDB's native BM25 index. Every write makes a LanceDB fragment and version, so
`apply` batches a whole change into at most one delete and one add, and the upkeep policy
(index/upkeep.py) says when the table is optimised. Once more than FLAT_TEXT_ROWS rows with
text wait for the next optimise (a first index's words pass, a large note), the full-text
search leaves their text to it and scans their names only (full_text.py): a scan of their
text cost up to seconds a search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from vaultmem.core.ranking import ChunkHit
from vaultmem.errors import IndexUnusableError
from vaultmem.index import analysis, full_text
from vaultmem.index import tables as tb
from vaultmem.index.base import ChunkRecord, IndexOptions, NoteRecord, Vector
from vaultmem.index.changes import ChangePlan
from vaultmem.index.identity import identity_problem, wipe_index, write_identity
from vaultmem.index.lazy_client import deferred_models, lazy_packages, marked_overrides
from vaultmem.index.upkeep import Occasion, UpkeepPolicy
from vaultmem.index.vectors import VectorMatrix

# LanceDB without its REST client's eager imports, its models' eager builds or the bytecode
# reading of its override checks (see lazy_client.py)
with lazy_packages(), deferred_models(), marked_overrides():
    import lancedb
    from lancedb.index import FTS

# pyarrow's default pool (mimalloc) kept ~20 MB of freed pages resident for good (a 29k-row
# words pass, then an optimise: RSS 204 -> 185 MB before it, 210 -> 191 after, with glibc's
# malloc, which the daemon tunes to hand large blocks back: daemon/native.py)
pa.set_memory_pool(pa.system_memory_pool())

#: Old table versions are kept this long after an optimise (readers may still use them).
KEEP_OLD_VERSIONS = timedelta(minutes=5)
#: Rows with text written since the last optimise beyond which a search scans their names only.
FLAT_TEXT_ROWS = 512


class _Unusable(Exception):
    """The stored index cannot be used as it is; rebuild it."""


class LanceIndex:
    """The chunks table plus an in-memory vector mirror. Thread-safe."""

    def __init__(
        self, path: Path, embedder_name: str, options: IndexOptions
    ) -> None:
        self.path = Path(path)
        self.embedder_name = embedder_name
        self.policy = UpkeepPolicy(every_writes=options.optimize_every)
        self._session = lancedb.Session(
            index_cache_size_bytes=options.index_cache_mb * 2**20,
            metadata_cache_size_bytes=options.metadata_cache_mb * 2**20,
        )
        self.rebuilt_reason: str | None = None
        self._lock = threading.RLock()  # the tables, the matrix and their state
        self._write_lock = threading.RLock()  # writers and optimise, one at a time
        self._db: Any = None
        self._chunks: Any = None
        self._dim: int | None = None
        self._matrix: VectorMatrix | None = None
        self._fts_ready = False
        self._writes_since_optimize = 0
        self._unindexed_text = 0  # rows with text the text index has not taken in yet
        #: called (outside the locks) after a full-text search that scanned rows written
        #: since the last optimise: the daemon optimises once searches pause (upkeep.py)
        self.on_pile_searched: Callable[[], object] | None = None
        self._open()

    # ---- opening, validation and rebuilding -------------------------------------------

    def _open(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise IndexUnusableError(f"index path {self.path} is a file, not a directory")
        self.path.mkdir(parents=True, exist_ok=True)
        reason = identity_problem(self.path, self.embedder_name)
        if reason is not None:
            self._wipe(reason)
        try:
            self._open_tables()
        except Exception as exc:
            if self.rebuilt_reason is not None:
                raise IndexUnusableError(f"cannot create the index at {self.path}: {exc}") from exc
            self._wipe(f"index storage was unreadable ({_short(exc)})")
            self._open_tables()
        write_identity(self.path, self.embedder_name)
        self.upkeep(Occasion.OPEN)  # the write counter died with the process that wrote

    def _wipe(self, reason: str) -> None:
        self._db = self._chunks = None
        wipe_index(self.path)
        self.rebuilt_reason = reason

    def _open_tables(self) -> None:
        self._db = lancedb.connect(str(self.path), session=self._session)
        self._matrix, self._fts_ready, self._dim = None, False, None
        self._chunks = None
        if (self.path / f"{tb.CHUNKS}.lance").exists():
            self._chunks = self._db.open_table(tb.CHUNKS)
            self._dim = tb.vector_dim(self._chunks.schema)
            if self._chunks.schema != tb.chunks_schema(self._dim):
                raise _Unusable("chunks table has an unexpected schema")
            self._chunks.search().select(["chunk_id", "path"]).to_arrow()

    # ---- reads ------------------------------------------------------------------------

    def warm(self) -> int:
        """Load now what every search reads (the in-memory vectors, the full-text indexes);
        the number of chunks there are to search."""
        self.ensure_fts_index()
        with self._lock:
            matrix = self._ensure_matrix()
            return len(matrix) if matrix is not None else 0

    def vector_search(
        self, vector: Vector, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]:
        with self._lock:
            matrix = self._ensure_matrix()
            if matrix is None:
                return []
            if vector.shape != (matrix.dim,):
                raise IndexUnusableError(
                    f"query vector has shape {vector.shape}, index dim {matrix.dim}")
            return matrix.search(vector, k, paths)

    def text_search(
        self, query: str, k: int, *, paths: Collection[str] | None = None,
        languages: Collection[str] = (),
    ) -> list[ChunkHit]:
        """The k best chunks by BM25 for `query`'s words, and for its terms as each of
        `languages` (the vault's notes') analyses them (index/analysis.py)."""
        words = tb.fts_terms(query)
        if not words or k <= 0 or (paths is not None and not paths):
            return []
        terms = full_text.Terms(words, analysis.query_terms(query, languages))
        with self._lock, _storage_errors():
            if self._chunks is None:
                return []
            self.ensure_fts_index()
            found = full_text.search(self._chunks, self._ensure_matrix(), terms, k, paths,
                                     indexed_text=self._text_waits())
            piled = self._writes_since_optimize > 0
        if piled and self.on_pile_searched is not None:
            self.on_pile_searched()
        return found

    def _text_waits(self) -> bool:
        """Whether so many rows with text are out of the full-text index that a search leaves
        their text to the next optimise (full_text.py)."""
        return self._unindexed_text > FLAT_TEXT_ROWS

    def note_vectors(self, paths: Collection[str] | None = None) -> dict[str, Vector]:
        with self._lock:
            matrix = self._ensure_matrix()
            return {} if matrix is None else matrix.note_vectors(paths)

    def related(self, path: str, k: int) -> list[tuple[str, float]]:
        with self._lock:
            matrix = self._ensure_matrix()
            return [] if matrix is None else matrix.related(path, k)

    def stored_chunks(self, paths: Collection[str]) -> list[ChunkRecord]:
        """The stored chunks of `paths` (an edited note's unchanged chunks keep their vectors),
        from the in-memory mirror, which holds every column they need: an edit reads nothing
        from LanceDB before it writes."""
        with self._lock, _storage_errors():
            matrix = self._ensure_matrix() if paths else None
            if matrix is None:
                return []
            return [ChunkRecord(chunk_id=chunk_id, path=path, index=index, heading=heading,
                                text=text, vector=vector)
                    for chunk_id, path, index, heading, text, vector in matrix.chunks_of(paths)]

    def _ensure_matrix(self) -> VectorMatrix | None:
        if self._matrix is None and self._chunks is not None and self._dim is not None:
            with _storage_errors():
                rows = self._chunks.search().select(
                    ["chunk_id", "path", "idx", "heading", "text", "vector"]).with_row_id(True)
                self._matrix = tb.matrix_from(rows.to_arrow(), self._dim)
        return self._matrix

    # ---- writes -----------------------------------------------------------------------

    def apply(
        self,
        *,
        upserts: Sequence[tuple[NoteRecord, Sequence[ChunkRecord]]] = (),
        retitles: Sequence[NoteRecord] = (),
        moves: Sequence[tuple[str, NoteRecord]] = (),
        deletes: Sequence[str] = (),
    ) -> None:
        """One batched change: at most one delete and one add. `retitles`: notes whose
        searchable title changed (their chunks carry it for the full-text index)."""
        plan = ChangePlan.build(upserts, retitles, moves, deletes)
        if plan.is_empty:
            return
        with self._write_lock:
            with self._lock, _storage_errors():
                carried = self._carried_chunks(plan)
            # the rows are made (text analysed: ~1 ms a chunk) with searches going on: only
            # writers, who hold the writers' lock, change what this reads
            with _storage_errors():
                new_chunks = self._new_chunk_rows(plan, carried)
            with self._lock, _storage_errors():
                wrote = self._write_chunks(plan.chunk_paths_to_remove(carried), new_chunks)
                self._writes_since_optimize += wrote
            if wrote:
                self.upkeep(Occasion.WRITE)

    def clear(self) -> None:
        """Delete every chunk: the index is rebuilt from the vault. A rebuild this index made
        when it opened (`rebuilt_reason`) is thereby taken care of."""
        with self._write_lock, self._lock, _storage_errors():
            if self._chunks is not None and self._chunks.count_rows():
                self._chunks.delete("true")
                self._writes_since_optimize += 1
            self._matrix, self._unindexed_text = None, 0
            self.rebuilt_reason = None

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
            raise IndexUnusableError(
                f"chunk vectors have dim {dim} but the index holds dim {self._dim}; "
                "rebuild the index"
            )
        parts = [tb.chunks_to_arrow(plan.upsert_chunks(), dim)]
        if carried is not None:
            parts.extend(plan.rewritten_chunks(carried))
        table = pa.concat_tables(parts)
        return table if table.num_rows else None

    def _write_chunks(self, remove: set[str], add: pa.Table | None) -> bool:
        """Whether anything was written."""
        wrote = add is not None
        if self._chunks is not None and remove:
            self._chunks.delete(tb.in_list("path", remove))
            wrote = True
        if add is not None:
            if self._chunks is None:
                self._dim = tb.vector_dim(add.schema)
                self._chunks = self._db.create_table(tb.CHUNKS, data=add)
                self._fts_ready = False
            else:
                self._chunks.add(add)
                self._unindexed_text += tb.with_text(add)
        if self._matrix is not None:
            self._matrix.remove_paths(remove)
            if add is not None:
                tb.add_to_matrix(self._matrix, add)
        return wrote

    # ---- maintenance ------------------------------------------------------------------

    def upkeep(self, occasion: Occasion) -> str | None:
        """Optimise if the upkeep policy says it is due now; why it was, or None."""
        with self._lock, _storage_errors():
            writes = self._writes_since_optimize
            opened = occasion is Occasion.OPEN and self._chunks is not None
            fragments = _fragments(self._chunks) if opened else 0
            waiting = self._unindexed_text if self._text_waits() else 0
        reason = self.policy.due(occasion, writes=writes, fragments=fragments,
                                 text_waiting=waiting)
        if reason is not None:
            self.optimize()
        return reason

    def optimize(self) -> None:
        """Compact fragments, bring indexes up to date and drop old versions.

        Searches go on meanwhile (an optimise takes seconds at 10k chunks): it holds only the
        writers' lock, and LanceDB keeps the versions that running searches read."""
        with self._write_lock:
            with self._lock:
                chunks = self._chunks
            stored = None
            if chunks is not None:
                with _storage_errors():
                    chunks.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
                    if self._matrix is not None:  # (one loaded later reads the new ids itself)
                        stored = _row_ids(chunks)
            with self._lock:
                self._writes_since_optimize = self._unindexed_text = 0
                self.ensure_fts_index()
                if stored is not None and self._matrix is not None:
                    self._matrix.set_row_ids(*stored)

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
            if tb.FTS_COLUMNS[0] not in indexed:  # the text index, made now, holds every row
                self._unindexed_text = 0
            if tb.TERMS_COLUMN not in indexed:  # analysed already: split on spaces, no more
                self._chunks.create_index(tb.TERMS_COLUMN, replace=True, config=FTS(
                    base_tokenizer="whitespace", lower_case=False, stem=False,
                    remove_stop_words=False, ascii_folding=False,
                    max_token_length=analysis.MAX_TERM_CHARS * 2))
            self._fts_ready = True

    def stats(self) -> dict[str, int]:
        with self._lock, _storage_errors():
            result = {"chunks": 0}
            if self._chunks is not None:
                result["chunks"] = self._chunks.count_rows()
                result["chunk_fragments"] = _fragments(self._chunks)
                result["chunk_version"] = int(self._chunks.version)
            result["writes_since_optimize"] = self._writes_since_optimize
            result["cache_bytes"] = int(self._session.size_bytes)
            return result

    def close(self) -> None:
        with self._write_lock, self._lock:  # after a running optimise
            self._chunks = self._db = None
            self._matrix = None


def _row_ids(table: Any) -> tuple[list[int], list[str], list[str]]:
    """Every stored row's id, chunk id and path: an optimise gives the rows new ids. Read
    outside the searches' lock; no write comes between, as the caller holds the writers'."""
    rows = table.search().select(["chunk_id", "path"]).with_row_id(True).to_arrow()
    return (rows.column("_rowid").to_pylist(), rows.column("chunk_id").to_pylist(),
            rows.column("path").to_pylist())


def _fragments(table: Any) -> int:
    return int(table.stats()["fragment_stats"]["num_fragments"])


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:197] + "..."


@contextmanager
def _storage_errors() -> Iterator[None]:
    """Turn storage failures (LanceDB raises OSError/RuntimeError) into IndexUnusableError."""
    try:
        yield
    except (OSError, RuntimeError) as exc:
        raise IndexUnusableError(f"the index is unusable ({_short(exc)}); run a rebuild") from exc
