"""A memory as the store hands it out, and the small rules about writing one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.memory import (
    STM_KEYS,
    MemoryState,
    is_memory,
    state_from_fields,
    state_to_fields,
)
from vaultmem.errors import FrontmatterError, InvalidInput, NoteError, NotFound
from vaultmem.vault.notes import INVALID_UTF8, READ_ONLY, Note, names_id, read_note_text

StmValue = str | int | float | bool | None
_SPACES = re.compile(r"\s+")
UNLOADABLE = (NotFound, NoteError, InvalidInput, OSError)  # why a path holds no memory


@dataclass(frozen=True)
class MemoryNote:
    path: str
    note: Note
    state: MemoryState
    text: str  # the file's text as read: what a write of this memory splices into


@dataclass(frozen=True)
class Rewrite:
    """A write `MemoryStore.rewrite` makes now: the memory as it was read, its new state, and
    the sections vaultmem keeps in a memory note (see `vault.memories.NoteEdit`)."""

    memory: MemoryNote
    state: MemoryState
    related: Sequence[str] | None = None
    copy_links: Sequence[str] = ()
    section: str = ""


def stm_updates(old: MemoryState | None, new: MemoryState) -> dict[str, StmValue]:
    """The stm_* lines to set (changed values) and remove (keys no longer present)."""
    new_fields = state_to_fields(new)
    old_fields = state_to_fields(old) if old is not None else {}
    updates: dict[str, StmValue] = {
        k: v for k, v in new_fields.items() if old_fields.get(k) != v
    }
    updates.update({k: None for k in STM_KEYS if k in old_fields and k not in new_fields})
    return updates


def unwritable_reason(memory: MemoryNote) -> str | None:
    """Why vaultmem never writes this note (its user made it read-only, or its bytes are not
    valid UTF-8), or None when it may."""
    if READ_ONLY in memory.note.warnings:
        return READ_ONLY
    if INVALID_UTF8 in memory.note.warnings:
        return "not valid UTF-8; vaultmem never writes it"
    return None


def writable(memory: MemoryNote) -> bool:
    return unwritable_reason(memory) is None


def check_writable(memory: MemoryNote) -> None:
    """Refuse a state change that could never reach the note's file (before recording it)."""
    reason = unwritable_reason(memory)
    if reason is not None:
        raise NoteError(f"memory {memory.state.id} ({memory.path}) cannot be written: it is "
                        f"{reason}")


def looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(".md")


def normalise_text(text: str) -> str:
    """Text compared as a person would: runs of white space as one space, any letter case."""
    return _SPACES.sub(" ", text).strip().casefold()


def content_of(memory: MemoryNote) -> str:
    """The remembered text: the body without its leading `# Title` line and Related section."""
    body = memory.note.body
    body = re.sub(r"<!-- vaultmem:(related|merged) -->.*?<!-- /vaultmem:\1 -->", "", body,
                  flags=re.S)
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines)


def memory_state(note: Note) -> MemoryState:
    """The memory's state from its note's stm_* fields; InvalidInput saying which is wrong."""
    try:
        return state_from_fields(note.fields, tags=note.tags)
    except ValueError as exc:
        raise InvalidInput(f"{note.path}: invalid memory fields: {exc}") from exc


def read_memory(root: Path, path: str) -> MemoryNote:
    """The memory at `path` as its file holds it; NotFound, FrontmatterError or InvalidInput
    (a regular note, bad stm_* fields) say why there is none."""
    try:
        note, text = read_note_text(root, path)
    except FileNotFoundError as exc:
        raise NotFound(f"note {path!r} does not exist") from exc
    if note.frontmatter_error:
        raise FrontmatterError(unparsed(path, path, note.frontmatter_error))
    if not is_memory(note.fields):
        raise InvalidInput(f"{path} is a regular note, not a memory (it has no stm_id)")
    return MemoryNote(path, note, memory_state(note), text)


def try_read_memory(root: Path, path: str) -> MemoryNote | None:
    """`read_memory`, or None when the path holds no readable memory."""
    try:
        return read_memory(root, path)
    except UNLOADABLE:
        return None


_WHERE = re.compile(r"at line (\d+), column (\d+): ")
UNPARSED_REASON = "frontmatter does not parse"  # how the catalog's reason for such a note starts


def unparsed(ref: str, path: str, error: str) -> str:
    """The message for a memory whose note's frontmatter does not parse (`error`, the parser's
    words, found at some line and column): it cannot be written until its user fixes it."""
    where = _WHERE.search(error)
    problem = error[where.end():] if where else error.split(": ", 1)[-1]
    at = f" (line {where.group(1)}, column {where.group(2)})" if where else ""
    named = "" if ref == path else f" ({path})"
    return (f"memory {ref}{named} cannot be written: its frontmatter does not parse{at}: "
            f"{problem}; vaultmem leaves the note alone until it is fixed")


def unparsed_memory(root: Path, paths: Sequence[str], memory_id: str
                    ) -> FrontmatterError | None:
    """The error for the memory `memory_id` when its note is one of `paths` and its frontmatter
    does not parse (found by its `stm_id` line); None when no such note names it."""
    for path in dict.fromkeys(paths):
        if not names_id(root, path, memory_id):
            continue
        try:
            note, _ = read_note_text(root, path)
        except (OSError, NoteError):
            continue
        if note.frontmatter_error:
            return FrontmatterError(unparsed(memory_id, path, note.frontmatter_error))
    return None
