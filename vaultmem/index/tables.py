"""The Arrow schema of the chunks table, row conversions (records to rows, rows to the
in-memory vector mirror), small SQL/FTS helpers and the table's fragments and versions kept."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vaultmem.index.analysis import note_terms
from vaultmem.index.base import ChunkRecord, Vector, chunk_id_for
from vaultmem.index.vectors import VectorMatrix

CHUNKS = "chunks"
#: Indexed with LanceDB's English analysis (lower-cased, accent-folded, stemmed).
FTS_COLUMNS = ("text", "title")
#: Indexed as whitespace-separated terms, no analysis of LanceDB's: the chunk's words as its
#: note's language analyses them (index/analysis.py: stemmed, CJK cut into words); for an
#: English note only its CJK bigrams, if any.
TERMS_COLUMN = "terms"


def chunks_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("chunk_id", pa.string()),
            ("path", pa.string()),
            ("idx", pa.int32()),
            ("heading", pa.string()),
            ("text", pa.string()),
            ("title", pa.string()),
            (TERMS_COLUMN, pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def vector_dim(schema: pa.Schema) -> int:
    """The fixed list size of the `vector` column."""
    field_type = schema.field("vector").type
    if not pa.types.is_fixed_size_list(field_type):
        raise ValueError("vector column is not a fixed-size list")
    return int(field_type.list_size)


def chunks_to_arrow(chunks: Sequence[tuple[ChunkRecord, str, str]], dim: int) -> pa.Table:
    """(chunk, note title, note language) triples as a chunks-table batch."""
    vectors = np.zeros((len(chunks), dim), dtype=np.float32)
    for row, (chunk, _, _) in enumerate(chunks):
        vectors[row] = chunk.vector
    columns = {
        "chunk_id": [chunk.chunk_id for chunk, _, _ in chunks],
        "path": [chunk.path for chunk, _, _ in chunks],
        "idx": [chunk.index for chunk, _, _ in chunks],
        "heading": [chunk.heading for chunk, _, _ in chunks],
        "text": [chunk.text for chunk, _, _ in chunks],
        "title": [title for _, title, _ in chunks],
        TERMS_COLUMN: [chunk.terms if chunk.terms is not None else note_terms(chunk.text, language)
                       for chunk, _, language in chunks],
        "vector": vectors_to_arrow(vectors),
    }
    return pa.table(columns, schema=chunks_schema(dim))


def vectors_to_arrow(vectors: Vector) -> pa.FixedSizeListArray:
    dim = vectors.shape[1]
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def vectors_from_arrow(column: pa.ChunkedArray | pa.Array, dim: int) -> Vector:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    flat = column.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(-1, dim)


def relocate_chunks(rows: pa.Table, new_path: str, new_title: str) -> pa.Table:
    """The same chunks (same vectors) under a new path and title, with fresh chunk ids."""
    indexes = rows.column("idx").to_pylist()
    count = rows.num_rows
    rows = rows.set_column(
        rows.schema.get_field_index("chunk_id"),
        "chunk_id",
        pa.array([chunk_id_for(new_path, i) for i in indexes], pa.string()),
    )
    rows = rows.set_column(
        rows.schema.get_field_index("path"), "path", pa.array([new_path] * count, pa.string())
    )
    return rows.set_column(
        rows.schema.get_field_index("title"), "title", pa.array([new_title] * count, pa.string())
    )


def matrix_from(rows: pa.Table, dim: int) -> VectorMatrix:
    """The vector mirror of stored chunk rows (vectors.VectorMatrix)."""
    matrix = VectorMatrix(dim)
    add_to_matrix(matrix, rows)
    return matrix


def add_to_matrix(matrix: VectorMatrix, rows: pa.Table) -> None:
    """Chunk rows into the vector mirror (with their row ids, when `rows` has them)."""
    matrix.add(
        rows.column("chunk_id").to_pylist(),
        rows.column("path").to_pylist(),
        rows.column("text").to_pylist(),
        vectors_from_arrow(rows.column("vector"), matrix.dim),
        list(zip(rows.column("idx").to_pylist(), rows.column("heading").to_pylist(),
                 strict=True)),
        rows.column("_rowid").to_pylist() if "_rowid" in rows.column_names else None,
    )


def with_text(rows: pa.Table) -> int:
    """Rows whose text is not empty (a names row of the words pass has none)."""
    return int(pc.sum(pc.greater(pc.utf8_length(rows.column("text")), 0)).as_py() or 0)


def sql_string(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    """`column IN ('a', 'b')` for a non-empty collection of strings."""
    literals = ", ".join(sql_string(value) for value in sorted(set(values)))
    return f"{column} IN ({literals})"


_FTS_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 64
_MAX_TERM_CHARS = 40


def fts_terms(query: str) -> str:
    """Plain, lower-cased word terms of a user query: no operators, quotes or field syntax."""
    words = [
        word.lower()
        for word in _FTS_WORD.findall(query)
        if len(word) <= _MAX_TERM_CHARS and word.strip("_")
    ]
    return " ".join(words[:_MAX_TERMS])


def row_ids(table: Any) -> tuple[list[int], list[str], list[str]]:
    """Every stored row's id, chunk id and path (an optimise gives the rows new ids)."""
    rows = table.search().select(["chunk_id", "path"]).with_row_id(True).to_arrow()
    return (rows.column("_rowid").to_pylist(), rows.column("chunk_id").to_pylist(),
            rows.column("path").to_pylist())


def fragments(table: Any) -> int:
    return int(table.stats()["fragment_stats"]["num_fragments"])


#: An optimise's cleanup age that drops no version (no clock given: versions_kept).
KEEP_ALL = timedelta(days=36500)


def versions_kept(table: Any, reading: int | None, keep: timedelta,
                  clock: Callable[[], datetime] | None) -> timedelta:
    """How old a version an optimise drops: `keep`, or the age of the version searches read
    (`reading`, published before the optimise: lance.py) and a minute more, kept for them.
    `clock`: the local wall time (the versions' timestamps are naive, local); without one no
    age is known and no old version is dropped."""
    if clock is None:
        return KEEP_ALL
    now = clock()
    ages: list[timedelta] = [now - version["timestamp"] + timedelta(minutes=1)
                             for version in table.list_versions()
                             if version["version"] == reading]
    return max([keep, *ages])
