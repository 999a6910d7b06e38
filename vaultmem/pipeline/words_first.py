"""Words first: a whole-vault sync makes every new note searchable by its words before any
vector is computed.

Embedding is the slow part of a first index (~25-35 chunks a second on two cores: minutes
for a few thousand notes, twenty for ten thousand). Parsing, chunking and writing the chunks'
text is much faster, and a first index reads the notes without parsing them until this pass.
So a whole-vault sync with notes to add first writes each one's names (catalog) and chunks
(LanceDB: text, names, analysed terms, and a zero vector the vector search never ranks above
a real one), in one pass, newest first in writes that grow from a few notes to thousands;
then the indexer embeds them as usual, most recently modified first, each batch replacing
the note's chunks.

Before its words, the pass writes every new note's names (vault/names.py: its file name and
frontmatter, no Markdown parsed), one row each without text, in a few writes: a vault of ten
thousand notes is searchable by its notes' names within seconds, by their words a minute or
two later. Each note's words replace its names row.

The notes are parsed, chunked and judged (language) in child processes (vault/parse_apart.py's
ApartMap, WORDS_PROCESSES of them), started once the names are written: parsing the Markdown
of ten thousand notes in the daemon held its GIL for ~30 s, which the searches meanwhile
waited on; apart, two cores parse side by side while the daemon writes what is done. A daemon
told to stop ends the pass before its next write (the notes not written are new at the next
start).

A note written by the words pass is recorded in the catalog with its body hash marked
(`WORDS_ONLY`), never as indexed: if the daemon stops before its vectors are written, the next
sync sees it as changed and embeds it (none of its zero vectors is kept as a stored vector).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from vaultmem.core.chunking import Chunk, note_chunks
from vaultmem.errors import NoteError
from vaultmem.index.analysis import note_terms
from vaultmem.index.base import ChunkRecord, NoteRecord
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_ports import StoreHandle
from vaultmem.pipeline.note_records import INDEXED, note_record
from vaultmem.vault.names import note_names
from vaultmem.vault.notes import Note, RawNote
from vaultmem.vault.parse_apart import PROCESS_BYTES, ApartMap

WORDS_ONLY = "words-only:"  # the body hash's mark: the note's chunks have no vectors yet
# chunks per index write in the words pass: the first write comes quickly (the newest notes
# searchable within seconds), each next one twice as large up to the last size
FIRST_BATCH_CHUNKS, WORDS_BATCH_CHUNKS = 128, 4096
MIN_NOTES = 2  # fewer notes to add than this: embedding them is as quick, no words pass
#: Child processes parsing the notes (two cores: two; the daemon's own writes are ~1/5 of it).
WORDS_PROCESSES = min(2, os.cpu_count() or 1)

Between = Callable[[frozenset[str]], None]
Words = tuple[NoteRecord, list[Chunk], list[str]]  # a note's record, chunks, chunks' terms


def words_only(record: NoteRecord) -> bool:
    """Whether the catalog's record is the words pass's: chunks without vectors yet."""
    return record.body_hash.startswith(WORDS_ONLY)


class WordsFirst:
    """Writes the words of a whole-vault sync's new notes (see the module docstring)."""

    def __init__(self, store: StoreHandle, catalog: Catalog, sizes: tuple[int, int],
                 dim: Callable[[], int], stopping: Callable[[str], None],
                 processes: int = WORDS_PROCESSES) -> None:
        """`sizes`: the chunks' (max_chars, min_chars); `stopping` raises Stopping once the
        daemon is told to stop (its argument: what is left for the next start)."""
        self._store = store
        self._catalog = catalog
        self._sizes = sizes
        self._dim = dim
        self._stopping = stopping
        self._processes = processes

    def write(self, paths: Sequence[str], parsed: dict[str, Note | RawNote],
              between: Between | None = None) -> int:
        """Write the words of `paths` (parsed notes; a note too large to parse here waits for
        its vectors); how many notes were written. `between` is called between writes with
        the paths not written yet (waiting syncs go in)."""
        if len(paths) < MIN_NOTES:
            return 0
        zero = np.zeros(self._dim(), dtype=np.float32)
        written = 0
        unwritten = frozenset(paths)  # by vectors: all of them, still
        held = [note for path in paths if (note := _held(parsed.get(path))) is not None]
        work = functools.partial(words_of, max_chars=self._sizes[0], min_chars=self._sizes[1])
        # the names first, alone: the children's start beside them delayed the names (and a
        # search by a note's title) on a busy 2-core machine (docs/benchmarks.md)
        for batch in self._names_batches(paths, parsed, zero):
            self._write(batch, between, unwritten)
        with ApartMap(work, held, processes=self._processes) as words:
            for batch in _batches(words, zero):
                self._write(batch, between, unwritten)
                written += len(batch)
        return written

    def _write(self, batch: list[tuple[NoteRecord, list[ChunkRecord]]],
               between: Between | None, unwritten: frozenset[str]) -> None:
        self._stopping(f"{len(unwritten)} notes of this sync")
        self._store().apply(upserts=batch)
        self._catalog.apply(record for record, _ in batch)
        if between is not None:
            between(unwritten)

    def _names_batches(
        self, paths: Sequence[str], parsed: dict[str, Note | RawNote], zero: np.ndarray,
    ) -> Iterator[list[tuple[NoteRecord, list[ChunkRecord]]]]:
        """Each note's names row (see the module docstring), in writes growing as `_batches`'."""
        batch: list[tuple[NoteRecord, list[ChunkRecord]]] = []
        limit = FIRST_BATCH_CHUNKS
        for path in paths:
            if (record := _names_record(parsed.get(path))) is None:
                continue
            batch.append((record, [ChunkRecord(chunk_id=f"{path}#0", path=path, index=0,
                                               heading="", text="", vector=zero)]))
            if len(batch) >= limit:
                yield batch
                batch, limit = [], min(2 * limit, WORDS_BATCH_CHUNKS)
        if batch:
            yield batch


def _batches(words: Iterable[Words | None], zero: np.ndarray,
             ) -> Iterator[list[tuple[NoteRecord, list[ChunkRecord]]]]:
    """The notes' words as index writes, growing from FIRST_BATCH_CHUNKS chunks to
    WORDS_BATCH_CHUNKS."""
    batch: list[tuple[NoteRecord, list[ChunkRecord]]] = []
    size, limit = 0, FIRST_BATCH_CHUNKS
    for done in words:
        if done is None:
            continue
        record, chunks, terms = done
        path = record.path
        batch.append((record, [
            ChunkRecord(chunk_id=f"{path}#{chunk.index}", path=path, index=chunk.index,
                        heading=chunk.heading, text=chunk.text, vector=zero, terms=analysed)
            for chunk, analysed in zip(chunks, terms, strict=True)]))
        size += len(chunks)
        if size >= limit:
            yield batch
            batch, size, limit = [], 0, min(2 * limit, WORDS_BATCH_CHUNKS)
    if batch:
        yield batch


def _held(note: Note | RawNote | None) -> Note | RawNote | None:
    """The note as the sync holds it, if the words pass writes its words: one held as its
    bytes is parsed when it is small enough to parse without a process of its own
    (vault/parse_apart.py); a larger one gets its words with its vectors."""
    if isinstance(note, RawNote) and len(note.raw) >= PROCESS_BYTES:
        return None
    return note


def words_of(note: Note | RawNote, *, max_chars: int, min_chars: int) -> Words | None:
    """A note's words as the pass writes them: its catalog row (marked WORDS_ONLY), its
    chunks, cut as the indexer cuts them, and their analysed terms (the full-text index's
    `terms` column, ~1 ms a chunk: made here, not in the daemon's write). None: its bytes do
    not parse, reported when its turn to be embedded comes. Run in a child process: the note
    parsed there is not kept (`parsed` holds it as its bytes until its turn to be embedded; a
    parsed note holds ~2-3x its bytes)."""
    if isinstance(note, RawNote):
        try:
            note = note.parse()
        except NoteError:
            return None
    chunks = note_chunks(note.body, note.title, max_chars=max_chars, min_chars=min_chars)
    record = note_record(note, len(chunks))
    return (replace(record, body_hash=WORDS_ONLY + record.body_hash), chunks,
            [note_terms(chunk.text, record.language) for chunk in chunks])


def _names_record(note: Note | RawNote | None) -> NoteRecord | None:
    """The catalog's row of a note whose names only are written (None: not read as bytes, or
    binary: the words pass and the embedding report it)."""
    if not isinstance(note, RawNote):
        return None
    try:
        names = note_names(note)
    except NoteError:
        return None
    return NoteRecord(
        path=names.path, file_hash="", body_hash=WORDS_ONLY + names.body_hash,
        title=names.title, tags=names.tags, aliases=names.aliases, links=(), note_id="",
        status=INDEXED, reason="", mtime_ns=names.mtime_ns, size=names.size, chunk_count=1,
    )
