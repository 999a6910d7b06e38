"""What the catalog records of a note: its row when indexed, or a placeholder when skipped or
failed (with the reason a user sees in `status`).

A stored reason holds only what the note's bytes say. What depends on the time as well (a
memory's dates lying ahead of now) is judged when read, with the caller's `now`
(`with_dated_problems`): stored, it would go stale as the clock reaches those dates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from vaultmem.core.language_id import note_language
from vaultmem.core.memory import MemoryState, future_problem, is_memory, state_from_fields
from vaultmem.index.base import NoteRecord
from vaultmem.vault.notes import Note

INDEXED, SKIPPED, FAILED = "indexed", "skipped", "failed"
#: A note's language is judged on its text's first characters (a long note: its opening).
LANGUAGE_CHARS = 6000


def note_record(note: Note, chunk_count: int) -> NoteRecord:
    """The catalog's row for a parsed note (its problems reported in `reason`)."""
    note_id = ""
    if is_memory(note.fields):
        note_id = str(note.fields.get("stm_id", "")).strip()
    reason = ""
    if note.frontmatter_error:
        reason = f"frontmatter does not parse, body indexed only: {note.frontmatter_error}"
    elif note.warnings:
        reason = "; ".join(note.warnings)
    reason = "; ".join(filter(None, [reason, _memory_problem(note)]))
    return NoteRecord(
        path=note.path, file_hash=note.file_hash, body_hash=note.body_hash,
        title=note.title, tags=tuple(note.tags), aliases=_other_names(note),
        links=tuple(link.target for link in note.links), note_id=note_id,
        status=INDEXED, reason=reason, mtime_ns=note.mtime_ns, size=note.size,
        chunk_count=chunk_count, language=note_language(note.body[:LANGUAGE_CHARS]),
    )


def _other_names(note: Note) -> tuple[str, ...]:
    """The names a query may use besides the title: the aliases, the first heading (no
    longer the title, it is still how a note introduces itself, and search matches it), and
    the short textual values of its properties (who speaks in a chat turn, a book's author, a
    project): a question about Melanie is about the notes filed under `speaker: Melanie`
    more than about those that only mention her."""
    names = [*note.aliases, note.first_heading, *note.properties]
    return tuple(dict.fromkeys(n for n in names if n.strip() and n != note.title))


def _memory_problem(note: Note) -> str:
    """Why a memory-like note is reported instead of handled as a memory ("" when fine)."""
    if not is_memory(note.fields):
        return ""
    try:
        state_from_fields(note.fields, tags=note.tags)
    except ValueError as exc:
        return f"not a valid memory, never written: {exc}"
    return ""


def with_dated_problems(records: Mapping[str, NoteRecord],
                        memories: Iterable[tuple[str, MemoryState]],
                        now: datetime) -> dict[str, NoteRecord]:
    """`records` (path → row) with each memory whose dates lie ahead of `now` reported in its
    row's reason, as `status` shows it; `memories` are (path, state) pairs."""
    out = dict(records)
    for path, state in memories:
        problem = future_problem(state, now)
        record = out.get(path)
        if problem and record is not None:
            reason = "; ".join(filter(None, [record.reason, f"memory left alone: {problem}"]))
            out[path] = replace(record, reason=reason)
    return out


def placeholder(path: str, status: str, reason: str, root: Path) -> NoteRecord:
    """The catalog's row for a note that is skipped or failed (never read)."""
    try:
        st = (root / path).lstat()
        mtime_ns, size = st.st_mtime_ns, st.st_size
    except OSError:
        mtime_ns, size = 0, 0
    return NoteRecord(
        path=path, file_hash="", body_hash="", title=Path(path).stem, tags=(), aliases=(),
        links=(), note_id="", status=status, reason=reason, mtime_ns=mtime_ns, size=size,
        chunk_count=0,
    )
