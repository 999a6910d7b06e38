"""Memory notes on disk: find them, read their state, write their state back surgically.

The note's frontmatter is the source of truth. `MemoryStore.write_state` is the one place a
memory's `stm_*` keys are written; the daemon swaps in a journalled, coalescing writer.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vaultmem.core.memory import (
    STM_KEYS,
    MemoryState,
    is_memory,
    state_from_fields,
    state_to_fields,
)
from vaultmem.core.sync import canonical_order, credit_uses, own_count
from vaultmem.errors import FrontmatterError, InvalidInput, NoteError, NotFound
from vaultmem.index.catalog import Catalog
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import INVALID_UTF8, Note, read_note
from vaultmem.vault.paths import resolve_in_vault
from vaultmem.vault.scan import scan_vault
from vaultmem.vault.writes import edit_stm


@dataclass(frozen=True)
class MemoryNote:
    path: str
    note: Note
    state: MemoryState


StmValue = str | int | float | bool | None


class Ledger(Protocol):
    """Where a device keeps the use counts it credited itself (the usage journal)."""

    def known(self, memory_id: str, device: str) -> int: ...
    def note_credit(self, memory_id: str, device: str, count: int) -> None: ...


def stm_updates(old: MemoryState | None, new: MemoryState) -> dict[str, StmValue]:
    """The stm_* lines to set (changed values) and remove (keys no longer present)."""
    new_fields = state_to_fields(new)
    old_fields = state_to_fields(old) if old is not None else {}
    updates: dict[str, StmValue] = {
        k: v for k, v in new_fields.items() if old_fields.get(k) != v
    }
    updates.update({k: None for k in STM_KEYS if k in old_fields and k not in new_fields})
    return updates


class MemoryStore:
    def __init__(
        self, root: Path, rules: IgnoreRules, catalog: Catalog, *, device: str = "",
        archive_folder: str = "", ledger: Ledger | None = None,
    ) -> None:
        self.root = root
        self.rules = rules
        self.catalog = catalog
        self.device = device  # the uses this store records are credited to it (core.sync)
        self.archive_folder = archive_folder
        self.ledger = ledger  # this device's own use counts per memory, durable
        # one lock for every read-modify-write of memory state: no lost increments
        self.lock = threading.RLock()

    # finding ------------------------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        """A memory id, or a vault-relative / absolute note path → vault-relative path."""
        ref = ref.strip()
        if not ref:
            raise InvalidInput("give a memory id or a note path")
        paths = [p for p in self.catalog.paths_for_note_id(ref) if (self.root / p).is_file()]
        if paths:
            return self.canonical(paths)
        if _looks_like_path(ref):
            path, _ = resolve_in_vault(self.root, ref)
            return path
        for memory in self.iter_memories():
            if memory.state.id == ref:
                return memory.path
        raise NotFound(f"no memory with id {ref!r} in this vault")

    def canonical(self, paths: list[str]) -> str:
        """Of several notes carrying one id, the memory itself (never a sync conflict copy
        while the original exists; see core.sync.canonical_order)."""
        return canonical_order(paths, self.archive_folder)[0]

    def load(self, ref: str) -> MemoryNote:
        path = self.resolve(ref)
        note = self._read(path)
        if note.frontmatter_error:
            raise FrontmatterError(f"{path}: frontmatter does not parse ({note.frontmatter_error})")
        if not is_memory(note.fields):
            raise InvalidInput(f"{path} is a regular note, not a memory (it has no stm_id)")
        return MemoryNote(path, note, self._state(note))

    def iter_memories(self) -> Iterator[MemoryNote]:
        """Every memory in the vault once: of notes sharing an id (sync conflict copies) only
        the canonical one; `iter_all_memories` and `duplicates` show the copies."""
        groups: dict[str, list[MemoryNote]] = {}
        for memory in self.iter_all_memories():
            groups.setdefault(memory.state.id, []).append(memory)
        chosen = []
        for group in groups.values():
            if len(group) == 1:
                chosen.append(group[0])
            else:
                first = self.canonical([m.path for m in group])
                chosen.append(next(m for m in group if m.path == first))
        yield from sorted(chosen, key=lambda m: m.path)

    def duplicates(self) -> dict[str, list[MemoryNote]]:
        """{memory id: its notes, canonical first} for every id more than one note carries."""
        groups: dict[str, list[MemoryNote]] = {}
        for memory in self.iter_all_memories():
            groups.setdefault(memory.state.id, []).append(memory)
        result = {}
        for memory_id, group in sorted(groups.items()):
            if len(group) > 1:
                order = canonical_order([m.path for m in group], self.archive_folder)
                result[memory_id] = sorted(group, key=lambda m: order.index(m.path))
        return result

    def iter_all_memories(self) -> Iterator[MemoryNote]:
        """Every memory note in the vault: catalogued ones plus notes changed since the last
        sync, copies sharing an id included."""
        records = self.catalog.records()
        scan = scan_vault(self.root, self.rules)
        for path, st in sorted(scan.files.items()):
            rec = records.get(path)
            unchanged = rec is not None and (rec.mtime_ns, rec.size) == (st.mtime_ns, st.size)
            if unchanged and rec is not None and not rec.note_id:
                continue  # a regular note that has not changed
            memory = self.try_load(path)
            if memory is not None:
                yield memory

    def try_load(self, path: str) -> MemoryNote | None:
        try:
            note = self._read(path)
        except (NoteError, NotFound, OSError):  # NotFound: deleted since it was listed
            return None
        if note.frontmatter_error or not is_memory(note.fields):
            return None
        try:
            return MemoryNote(path, note, self._state(note))
        except InvalidInput:
            return None

    # writing ------------------------------------------------------------------------------

    def write_state(self, memory: MemoryNote, new: MemoryState) -> MemoryNote:
        """Record a new state. Here: written to the note at once (the daemon journals it)."""
        check_writable(memory)
        with self.lock:
            new = self.credited(memory.state, new)
            written = self.write_state_now(memory, new)
            if self.ledger is not None and self.device:
                self.ledger.note_credit(new.id, self.device, own_count(new, self.device))
            return written

    def credited(self, old: MemoryState, new: MemoryState) -> MemoryState:
        """`new` with the uses it adds to `old` credited to this device, continuing from the
        highest count this device ever gave itself for the memory (core.sync.credit_uses)."""
        known = (self.ledger.known(old.id, self.device)
                 if self.ledger is not None and self.device else 0)
        return credit_uses(old, new, self.device, known)

    def write_state_now(self, memory: MemoryNote, new: MemoryState) -> MemoryNote:
        """Write changed stm_* keys now, guarded against a concurrent edit of the note."""
        updates = self.file_updates(memory, new)
        if updates:
            edit_stm(self.root / memory.path, updates, expected_hash=memory.note.file_hash)
        return self.load(memory.path)

    def written(self, memory_id: str) -> None:
        """The note now holds this memory's latest state (nothing pending here)."""

    def file_updates(self, memory: MemoryNote, new: MemoryState) -> dict[str, StmValue]:
        """The stm_* edits that take the note's file (not any pending overlay) to `new`."""
        return stm_updates(self._state(memory.note), new)

    # plumbing -----------------------------------------------------------------------------

    def _read(self, path: str) -> Note:
        try:
            return read_note(self.root, path)
        except FileNotFoundError as exc:
            raise NotFound(f"note {path!r} does not exist") from exc

    def _state(self, note: Note) -> MemoryState:
        try:
            return state_from_fields(note.fields, tags=note.tags)
        except ValueError as exc:
            raise InvalidInput(f"{note.path}: invalid memory fields: {exc}") from exc


def writable(memory: MemoryNote) -> bool:
    """False for a note vaultmem never writes (its bytes are not valid UTF-8)."""
    return INVALID_UTF8 not in memory.note.warnings


def check_writable(memory: MemoryNote) -> None:
    """Refuse a state change that could never reach the note's file (before recording it)."""
    if not writable(memory):
        raise NoteError(f"{memory.path} is not valid UTF-8; vaultmem never writes it")


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(".md")
