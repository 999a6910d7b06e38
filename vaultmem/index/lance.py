"""LanceIndex: the durable, rebuildable chunk index in LanceDB.

One table, `chunks`: one row per embedded chunk (text, vector and the note's searchable
title); what is known per note file lives in the catalog (index/catalog.py) alone. Vector
search runs on an in-memory mirror of the chunk vectors (vectors.VectorMatrix); full-text
search uses LanceDB's native BM25 index. Every write makes a LanceDB fragment and version, so
`apply` batches a whole change into at most one delete and one add, and the upkeep policy
(index/upkeep.py) says when the table is optimised. Once more than FLAT_TEXT_ROWS rows with
text wait for the next optimise (a first index's words pass, a large note), the full-text
search leaves their text to it and scans their names only (full_text.py): a scan of their
text cost up to seconds a search. Writers, one at a time, write LanceDB with searches going on:
searches read the version last published with the mirror (`_publish`), never a write's half.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
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

# pyarrow's default pool (mimalloc) kept ~20 MB of freed pages resident for good (a 29k-row
# words pass, then an optimise: RSS 204 -> 185 MB before it, 210 -> 191 after, with glibc's
# malloc, which the daemon tunes to hand large blocks back: daemon/native.py)
pa.set_memory_pool(pa.system_memory_pool())

#: Old table versions are kept this long after an optimise (readers may still use them; the
#: version searches read, however old, until it ends).
KEEP_OLD_VERSIONS = timedelta(minutes=5)
#: Rows with text written since the last optimise beyond which a search scans their names only.
FLAT_TEXT_ROWS = 512
#: Rows written since the title index took them in beyond which a write remakes it (~0.2 s at
#: 30k rows): a scan of their titles cost each search ~50-300 ms in a first index's words pass.
TITLE_ROWS = 2048


class _Unusable(Exception):
    """The stored index cannot be used as it is; rebuild it."""


class LanceIndex:
    """The chunks table plus an in-memory vector mirror. Thread-safe."""

    def __init__(
        self, path: Path, embedder_name: str, options: IndexOptions,
        *, clock: Callable[[], datetime] | None = None,
    ) -> None:
        """`clock`: the local wall time, which says how old the version searches read is
        when an optimise drops old versions (without it none is dropped)."""
        self.path = Path(path)
        self._clock = clock
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
        self._chunks: Any = None  # the writers' handle on the table: its latest version
        self._reads: Any = None  # the searches': the version the mirror matches (_publish)
        self._dim: int | None = None
        self._matrix: VectorMatrix | None = None
        self._fts_ready = False
        self._writes_since_optimize = 0
        self._unindexed_text = 0  # rows with text the text index has not taken in yet
        self._untitled = 0  # rows the title index has not taken in yet
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
        self._db = self._chunks = self._reads = None
        wipe_index(self.path)
        self.rebuilt_reason = reason

    def _open_tables(self) -> None:
        self._db = lancedb.connect(str(self.path), session=self._session)
        self._matrix, self._fts_ready, self._dim = None, False, None
        self._chunks = self._reads = None
        if (self.path / f"{tb.CHUNKS}.lance").exists():
            self._chunks = self._db.open_table(tb.CHUNKS)
            self._dim = tb.vector_dim(self._chunks.schema)
            if self._chunks.schema != tb.chunks_schema(self._dim):
                raise _Unusable("chunks table has an unexpected schema")
            self._chunks.search().select(["chunk_id", "path"]).to_arrow()
            self._publish()

    def _publish(self) -> None:
        """Searches read the table as written now (held: the searches' lock, and the writers'
        or no writer yet). They read a version of their own, moved on here with the mirror: a
        write's delete and add are two versions, between which a search on the latest one
        found none of the rewritten notes' rows."""
        if self._chunks is None:
            self._reads = None
            return
        if self._reads is None:
            self._reads = self._db.open_table(tb.CHUNKS)
        self._reads.checkout(self._chunks.version)

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
        self.ensure_fts_index()  # (before the searches' lock: it takes the writers' first)
        with self._lock, _storage_errors():
            if self._reads is None:
                return []
            found = full_text.search(self._reads, self._ensure_matrix(), terms, k, paths,
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
        if self._matrix is None and self._reads is not None and self._dim is not None:
            with _storage_errors():
                rows = self._reads.search().select(
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
        # Only writers (who hold the writers' lock) change the table, so the rows are read,
        # made (text analysed: ~1 ms a chunk) and written with searches going on: they read
        # the version published last (_publish), which this write publishes, with its rows in
        # the mirror, under their lock, once written (a delete and an add took ~200 ms).
        with self._write_lock:
            with _storage_errors():
                carried = self._carried_chunks(plan)
                new_chunks = self._new_chunk_rows(plan, carried)
                remove = plan.chunk_paths_to_remove(carried)
                wrote, created = self._write_chunks(remove, new_chunks)
            with self._lock, _storage_errors():
                if created is not None:
                    self._chunks, self._fts_ready = created, False
                    self._dim = tb.vector_dim(created.schema)
                elif new_chunks is not None:
                    self._unindexed_text += tb.with_text(new_chunks)
                    self._untitled += new_chunks.num_rows
                self._writes_since_optimize += wrote
                if self._matrix is not None:
                    self._matrix.remove_paths(remove)
                    if new_chunks is not None:
                        tb.add_to_matrix(self._matrix, new_chunks)
                self._publish()
            if created is not None:
                self.ensure_fts_index()  # (a search need never wait for a write to make them)
            elif self._untitled > TITLE_ROWS and self._fts_ready:
                self._remake_title_index()
            if wrote:
                self.upkeep(Occasion.WRITE)

    def _remake_title_index(self) -> None:
        """The title index remade over every row (held: the writers' lock), searches going
        on: the full-text search then scans no waiting row's title (full_text.py)."""
        with _storage_errors():
            full_text.make_title_index(self._chunks)
        with self._lock, _storage_errors():
            self._untitled = 0
            self._publish()

    def clear(self) -> None:
        """Delete every chunk: the index is rebuilt from the vault. A rebuild this index made
        when it opened (`rebuilt_reason`) is thereby taken care of."""
        with self._write_lock, self._lock, _storage_errors():
            if self._chunks is not None and self._chunks.count_rows():
                self._chunks.delete("true")
                self._writes_since_optimize += 1
            self._matrix, self._unindexed_text, self._untitled = None, 0, 0
            self._publish()
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

    def _write_chunks(self, remove: set[str], add: pa.Table | None) -> tuple[bool, Any]:
        """The change written to LanceDB (held: the writers' lock only): whether anything was,
        and the chunks table if this write created it."""
        wrote = add is not None
        if self._chunks is not None and remove:
            self._chunks.delete(tb.in_list("path", remove))
            wrote = True
        if add is None:
            return wrote, None
        if self._chunks is None:
            return wrote, self._db.create_table(tb.CHUNKS, data=add)
        self._chunks.add(add)
        return wrote, None

    # ---- maintenance ------------------------------------------------------------------

    def upkeep(self, occasion: Occasion) -> str | None:
        """Optimise if the upkeep policy says it is due now; why it was, or None."""
        with self._lock, _storage_errors():
            writes = self._writes_since_optimize
            opened = occasion is Occasion.OPEN and self._chunks is not None
            fragments = tb.fragments(self._chunks) if opened else 0
            waiting = self._unindexed_text if self._text_waits() else 0
        reason = self.policy.due(occasion, writes=writes, fragments=fragments,
                                 text_waiting=waiting)
        if reason is not None:
            self.optimize()
        return reason

    def optimize(self) -> None:
        """Compact fragments, bring indexes up to date and drop old versions.

        Searches go on meanwhile (an optimise takes seconds at 10k chunks): it holds only the
        writers' lock, and the version searches read is kept until the optimised one is
        published (with the rows' new ids, which a mirror loaded meanwhile lacks too)."""
        with self._write_lock:
            with self._lock:
                chunks = self._chunks
                reading = None if self._reads is None else int(self._reads.version)
            stored = None
            if chunks is not None:
                with _storage_errors():
                    chunks.optimize(cleanup_older_than=tb.versions_kept(
                        chunks, reading, KEEP_OLD_VERSIONS, self._clock))
                    stored = tb.row_ids(chunks)  # (no write comes between)
            with self._lock, _storage_errors():
                self._writes_since_optimize = self._unindexed_text = self._untitled = 0
                self.ensure_fts_index()
                if stored is not None and self._matrix is not None:
                    self._matrix.set_row_ids(*stored)
                self._publish()

    def ensure_fts_index(self) -> None:
        """Create the full-text indexes on chunk text and title if they are missing: a write,
        with searches going on (they read the version published before it)."""
        if self._fts_ready:
            return
        with self._write_lock, _storage_errors():
            if self._fts_ready or self._chunks is None:
                return
            text_indexed = full_text.make_indexes(self._chunks)
            with self._lock:
                if text_indexed:  # the text index, made now, holds every row
                    self._unindexed_text = self._untitled = 0
                self._fts_ready = True
                self._publish()

    def stats(self) -> dict[str, int]:
        with self._lock, _storage_errors():
            result = {"chunks": 0}
            if self._chunks is not None:
                result["chunks"] = self._chunks.count_rows()
                result["chunk_fragments"] = tb.fragments(self._chunks)
                result["chunk_version"] = int(self._chunks.version)
            result["writes_since_optimize"] = self._writes_since_optimize
            result["cache_bytes"] = int(self._session.size_bytes)
            return result

    def close(self) -> None:
        with self._write_lock, self._lock:  # after a running optimise
            self._chunks = self._reads = self._db = None
            self._matrix = None


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
