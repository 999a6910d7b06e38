"""Arrow schemas of the index tables, row conversions and small SQL/FTS helpers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pyarrow as pa

from vaultmem.index.base import ChunkRecord, NoteRecord, Vector, chunk_id_for

NOTES = "notes"
CHUNKS = "chunks"
FTS_COLUMNS = ("text", "title")

_STRING_LIST = pa.list_(pa.string())

NOTES_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("file_hash", pa.string()),
        ("body_hash", pa.string()),
        ("title", pa.string()),
        ("tags", _STRING_LIST),
        ("aliases", _STRING_LIST),
        ("links", _STRING_LIST),
        ("note_id", pa.string()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("mtime_ns", pa.int64()),
        ("size", pa.int64()),
        ("chunk_count", pa.int32()),
    ]
)

_NOTE_FIELDS = NOTES_SCHEMA.names
_RECORD_FIELDS = [field.name for field in fields(NoteRecord)]  # constructor order
_TUPLE_FIELDS = frozenset({"tags", "aliases", "links"})


def chunks_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("chunk_id", pa.string()),
            ("path", pa.string()),
            ("idx", pa.int32()),
            ("heading", pa.string()),
            ("text", pa.string()),
            ("title", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def vector_dim(schema: pa.Schema) -> int:
    """The fixed list size of the `vector` column."""
    field_type = schema.field("vector").type
    if not pa.types.is_fixed_size_list(field_type):
        raise ValueError("vector column is not a fixed-size list")
    return int(field_type.list_size)


def notes_to_arrow(records: Sequence[NoteRecord]) -> pa.Table:
    columns = {name: [_note_value(record, name) for record in records] for name in _NOTE_FIELDS}
    return pa.table(columns, schema=NOTES_SCHEMA)


def _note_value(record: NoteRecord, name: str) -> object:
    value = getattr(record, name)
    return list(value) if name in _TUPLE_FIELDS else value


def notes_from_arrow(table: pa.Table) -> list[NoteRecord]:
    columns: list[list[Any]] = [table.column(name).to_pylist() for name in _RECORD_FIELDS]
    for position, name in enumerate(_RECORD_FIELDS):
        if name in _TUPLE_FIELDS:
            columns[position] = [tuple(value) if value else () for value in columns[position]]
    return [NoteRecord(*row) for row in zip(*columns, strict=True)]


def chunks_to_arrow(chunks: Sequence[tuple[ChunkRecord, str]], dim: int) -> pa.Table:
    """(chunk, note title) pairs as a chunks-table batch."""
    vectors = np.zeros((len(chunks), dim), dtype=np.float32)
    for row, (chunk, _) in enumerate(chunks):
        vectors[row] = chunk.vector
    columns = {
        "chunk_id": [chunk.chunk_id for chunk, _ in chunks],
        "path": [chunk.path for chunk, _ in chunks],
        "idx": [chunk.index for chunk, _ in chunks],
        "heading": [chunk.heading for chunk, _ in chunks],
        "text": [chunk.text for chunk, _ in chunks],
        "title": [title for _, title in chunks],
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
