"""A sync's notes to embed, turned into batches ready to write: each note parsed (a large one
apart, vault/parse_apart.py) and chunked, its chunks embedded in slices (slices.py) except
those of an edited note whose embedding input (note title, heading, text) is unchanged, which
keep their stored vectors. The indexer (indexer.py) decides what to embed and writes each
batch; this module only turns notes into (note record, chunks) batches, in the order chosen
here (`order`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vaultmem.core.chunking import Chunk, embedding_text, note_chunks
from vaultmem.index.base import ChunkRecord, NoteRecord, Vector
from vaultmem.pipeline.index_ports import StoreHandle
from vaultmem.pipeline.note_records import note_record
from vaultmem.pipeline.progress import Run
from vaultmem.pipeline.slices import SLICE_CHUNKS, Between, SlicedEmbedding
from vaultmem.vault.notes import Note, RawNote, read_note
from vaultmem.vault.parse_apart import parse_apart

# Notes read by a sync, by path. A note over LARGE_NOTE_BYTES is kept as its bytes until its
# turn to be embedded: parsing its Markdown (~0.7 ms per KB) must not delay the small notes
# of the same batch, which are embedded and written first.
Parsed = dict[str, Note | RawNote]
LARGE_NOTE_BYTES = 32_768

#: one batch: each note's record with its chunks (vectors set), and how many were embedded
Batch = tuple[list[tuple[NoteRecord, list[ChunkRecord]]], int]


class NoteBatches:
    def __init__(
        self, root: Path, store: StoreHandle, slices: SlicedEmbedding,
        chunk_sizes: tuple[int, int], batch_chunks: int,
    ) -> None:
        self._root = root
        self._store = store
        self._slices = slices
        self._max_chars, self._min_chars = chunk_sizes
        self._batch_chunks = batch_chunks

    def batches(
        self, paths: Sequence[str], parsed: Parsed, before: Mapping[str, str],
        between: Between | None, run: Run,
    ) -> Iterator[Batch]:
        """Batches of (note record, chunks) ready to write, each with how many chunks it
        embedded (the others kept their stored vectors). `before`: the title each edited
        note's stored chunks were embedded under."""
        pending: list[tuple[Note, list[Chunk]]] = []
        pending_chunks = 0
        first_unwritten = 0
        for n, path in enumerate(paths):
            # taken out of `parsed`: a note is held only until its batch is written, not for
            # the rest of the sync (a first index's thousands of notes)
            raw = parsed.pop(path, None)
            large = isinstance(raw, RawNote) and len(raw.raw) > LARGE_NOTE_BYTES
            if pending and large:  # what is ready goes first
                yield self._embed(pending, frozenset(paths[first_unwritten:]), before, between, run)
                pending, pending_chunks, first_unwritten = [], 0, n
            if large:
                assert isinstance(raw, RawNote)
                note, chunks = self._parse_large(raw, between, frozenset(paths[n:]))
            else:
                note = read_held(self._root, path, raw)
                chunks = self._chunks(note)
            alone = len(chunks) > SLICE_CHUNKS
            if pending and (alone or pending_chunks + len(chunks) > self._batch_chunks):
                # a note embedded in slices goes on its own, after the batch before it
                yield self._embed(pending, frozenset(paths[first_unwritten:]), before, between, run)
                pending, pending_chunks, first_unwritten = [], 0, n
            pending.append((note, chunks))
            pending_chunks += len(chunks)
            if alone or pending_chunks >= self._batch_chunks:
                yield self._embed(pending, frozenset(paths[first_unwritten:]), before, between, run)
                pending, pending_chunks, first_unwritten = [], 0, n + 1
        if pending:
            yield self._embed(pending, frozenset(paths[first_unwritten:]), before, between, run)

    def _parse_large(
        self, raw: RawNote, between: Between | None, unwritten: frozenset[str]
    ) -> tuple[Note, list[Chunk]]:
        """Parsed and chunked apart (vault/parse_apart.py): waiting edits go in meanwhile."""
        def wait() -> None:
            self._slices.check_stopping(raw.path)
            if between is not None:
                between(unwritten)

        return parse_apart(raw, wait, max_chars=self._max_chars, min_chars=self._min_chars)

    def _chunks(self, note: Note) -> list[Chunk]:
        return note_chunks(note.body, note.title, max_chars=self._max_chars,
                           min_chars=self._min_chars)

    def _embed(
        self, pending: list[tuple[Note, list[Chunk]]], unwritten: frozenset[str],
        before: Mapping[str, str], between: Between | None, run: Run,
    ) -> Batch:
        texts = [embedding_text(note.title, chunk) for note, chunks in pending for chunk in chunks]
        kept = self._stored_vectors([note.path for note, _ in pending], before)
        new = [n for n, text in enumerate(texts) if text not in kept]
        embedded = self._slices.embed([texts[n] for n in new],
                                      pending[0][0].path if len(pending) == 1 else None,
                                      unwritten, between, run)
        vectors: list[Any] = [kept.get(text) for text in texts]
        for n, vector in zip(new, embedded, strict=True):
            vectors[n] = vector
        out: list[tuple[NoteRecord, list[ChunkRecord]]] = []
        row = 0
        for note, chunks in pending:
            records = []
            for chunk in chunks:
                records.append(ChunkRecord(
                    chunk_id=f"{note.path}#{chunk.index}", path=note.path, index=chunk.index,
                    heading=chunk.heading, text=chunk.text, vector=vectors[row],
                ))
                row += 1
            out.append((note_record(note, len(records)), records))
        return out, len(new)

    def _stored_vectors(self, paths: Sequence[str], before: Mapping[str, str]) -> dict[str, Vector]:
        """The stored vectors of the edited notes among `paths`, by their embedding input (the
        same input gives the same vector: the index identity pins the embedder)."""
        edited = [path for path in paths if path in before]
        if not edited:
            return {}
        return {
            embedding_text(before[chunk.path], Chunk(chunk.index, chunk.heading, chunk.text)):
            chunk.vector
            for chunk in self._store().stored_chunks(edited)
        }


def read_held(root: Path, path: str, held: Note | RawNote | None) -> Note:
    """The note parsed: as held (parsed, or its bytes), or read now."""
    if isinstance(held, Note):
        return held
    return read_note(root, path) if held is None else held.parse()


def order(paths: list[str], parsed: Parsed, building: bool) -> list[str]:
    """The order notes are embedded in. A whole-vault sync: most recently modified first (the
    notes a user is most likely to ask about; every note's words are searchable already).
    Otherwise smallest first: a large note in the same batch delays none of the others."""
    if building:
        return sorted(paths, key=lambda p: (-_mtime(p, parsed), p))
    return sorted(paths, key=lambda p: (_size(p, parsed), p))


def _mtime(path: str, parsed: Parsed) -> int:
    note = parsed.get(path)
    return note.mtime_ns if note is not None else 0


def _size(path: str, parsed: Parsed) -> int:
    note = parsed.get(path)
    return len(note.raw) if isinstance(note, RawNote) else note.size if note else 0
