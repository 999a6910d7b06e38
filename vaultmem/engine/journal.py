"""Usage writes in the daemon: durable at once, visible at once, written to notes coalesced.

A touch or observe computes the new state under the store's lock and records it in a SQLite
journal (WAL, synchronous=FULL) before the call returns, so it survives kill -9. Reads overlay
the journal on the note's own frontmatter, so the next search sees the new state. A flush
(scheduled) splices the pending state into each note with a guarded write; many touches of
one note between flushes become one file write. A note edited by the user meanwhile is simply
re-read: the splice only touches stm_* lines, so the user's edit stays and the usage lands.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.core.memory import MemoryState, state_from_fields, state_to_fields
from vaultmem.core.sync import canonical_order, own_count, rebase
from vaultmem.engine.memory_store import MemoryNote, MemoryStore, check_writable
from vaultmem.errors import ConcurrentEdit, NoteError, NotFound, VaultmemError
from vaultmem.index.catalog import Catalog
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.writes import edit_stm

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    memory_id TEXT PRIMARY KEY, path TEXT NOT NULL, fields TEXT NOT NULL,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS credits (
    memory_id TEXT NOT NULL, device TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (memory_id, device)
);
"""


@dataclass(frozen=True)
class Pending:
    memory_id: str
    path: str
    fields: dict[str, Any]
    version: int


class UsageJournal:
    """Pending memory states, one row per memory, durable on return."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def put(
        self, memory_id: str, path: str, fields: dict[str, Any],
        credit: tuple[str, int] | None = None,
    ) -> int:
        """Record a pending state and, in the same transaction, this device's new own use
        count for the memory (see `known`)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT version FROM pending WHERE memory_id = ?", (memory_id,)
                ).fetchone()
                version = (row[0] if row else 0) + 1
                self._db.execute(
                    "INSERT OR REPLACE INTO pending(memory_id, path, fields, version) "
                    "VALUES (?, ?, ?, ?)",
                    (memory_id, path, json.dumps(fields), version),
                )
                if credit is not None:
                    self._credit(memory_id, *credit)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return version

    def known(self, memory_id: str, device: str) -> int:
        """The highest use count this device has credited itself for this memory (its note
        may show less after sync replaced it with another device's version)."""
        with self._lock:
            row = self._db.execute(
                "SELECT count FROM credits WHERE memory_id = ? AND device = ?",
                (memory_id, device),
            ).fetchone()
        return int(row[0]) if row else 0

    def note_credit(self, memory_id: str, device: str, count: int) -> None:
        with self._lock:
            self._credit(memory_id, device, count)

    def _credit(self, memory_id: str, device: str, count: int) -> None:
        self._db.execute(
            "INSERT INTO credits(memory_id, device, count) VALUES (?, ?, ?) "
            "ON CONFLICT(memory_id, device) DO UPDATE SET count = MAX(count, excluded.count)",
            (memory_id, device, count),
        )

    def get(self, memory_id: str) -> Pending | None:
        with self._lock:
            row = self._db.execute(
                "SELECT memory_id, path, fields, version FROM pending WHERE memory_id = ?",
                (memory_id,),
            ).fetchone()
        return _pending(row) if row else None

    def all(self) -> list[Pending]:
        with self._lock:
            rows = self._db.execute(
                "SELECT memory_id, path, fields, version FROM pending ORDER BY memory_id"
            ).fetchall()
        return [_pending(row) for row in rows]

    def clear(self, memory_id: str, version: int | None = None) -> None:
        """Drop a pending state (only the given version: a newer touch stays pending)."""
        with self._lock:
            if version is None:
                self._db.execute("DELETE FROM pending WHERE memory_id = ?", (memory_id,))
            else:
                self._db.execute(
                    "DELETE FROM pending WHERE memory_id = ? AND version = ?",
                    (memory_id, version),
                )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])


def _pending(row: tuple[Any, ...]) -> Pending:
    return Pending(row[0], row[1], json.loads(row[2]), int(row[3]))


@dataclass
class FlushReport:
    written: list[str]
    retry: list[tuple[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"written": self.written, "retry": [list(r) for r in self.retry]}


class JournaledMemoryStore(MemoryStore):
    """The daemon's memory store: journalled writes, overlay reads, cached parsing."""

    def __init__(
        self, root: Path, rules: IgnoreRules, catalog: Catalog, journal: UsageJournal, *,
        device: str = "", archive_folder: str = "",
    ) -> None:
        super().__init__(root, rules, catalog, device=device, archive_folder=archive_folder,
                         ledger=journal)
        self.journal = journal
        self._cache: dict[str, tuple[tuple[int, int], MemoryNote | None]] = {}

    # reads: the note's state with any pending state laid over it ---------------------------

    def load(self, ref: str) -> MemoryNote:
        memory = super().load(ref)
        return self._overlay(memory, self.journal.get(memory.state.id))

    def try_load(self, path: str) -> MemoryNote | None:
        memory = self._cached(path)
        if memory is None:
            return None
        return self._overlay(memory, self.journal.get(memory.state.id))

    def iter_all_memories(self) -> Iterator[MemoryNote]:
        """In the daemon the watcher keeps the catalog current: list memories from it.

        The pending states are read in one query up front (one per memory queued behind
        every touch under load); callers that need them exact hold `self.lock`, which every
        change to the journal holds too."""
        pending = {entry.memory_id: entry for entry in self.journal.all()}
        for path in self.catalog.all_memory_paths():
            memory = self._cached(path)
            if memory is not None:
                yield self._overlay(memory, pending.get(memory.state.id))

    def duplicates(self) -> dict[str, list[MemoryNote]]:
        """As `MemoryStore.duplicates`, but from the catalog's paths per id (current in the
        daemon), so `status` reads only the notes that share an id."""
        result = {}
        for memory_id, paths in self.catalog.duplicate_ids().items():
            loaded = [m for m in map(self._cached, paths)
                      if m is not None and m.state.id == memory_id]
            if len(loaded) > 1:
                order = canonical_order([m.path for m in loaded], self.archive_folder)
                result[memory_id] = sorted(loaded, key=lambda m: order.index(m.path))
        return result

    def _cached(self, path: str) -> MemoryNote | None:
        try:
            st = (self.root / path).stat()
        except OSError:
            self._cache.pop(path, None)
            return None
        key = (st.st_mtime_ns, st.st_size)
        hit = self._cache.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        memory = super().try_load(path)
        self._cache[path] = (key, memory)
        return memory

    def _overlay(self, memory: MemoryNote, pending: Pending | None) -> MemoryNote:
        if pending is None:
            return memory
        # another device's uses may have reached the note through sync since: keep both
        state = rebase(state_from_fields(pending.fields, tags=memory.note.tags), memory.state)
        return MemoryNote(memory.path, memory.note, state)

    # writes -------------------------------------------------------------------------------

    def write_state(self, memory: MemoryNote, new: MemoryState) -> MemoryNote:
        check_writable(memory)
        with self.lock:
            new = self.credited(memory.state, new)
            credit = (self.device, own_count(new, self.device)) if self.device else None
            self.journal.put(new.id, memory.path, state_to_fields(new), credit)
        return MemoryNote(memory.path, memory.note, new)

    def write_state_now(self, memory: MemoryNote, new: MemoryState) -> MemoryNote:
        with self.lock:
            written = super().write_state_now(memory, new)
            self.journal.clear(new.id)
            return written

    def written(self, memory_id: str) -> None:
        with self.lock:
            self.journal.clear(memory_id)

    def flush(self) -> FlushReport:
        """Write every pending state into its note (guarded); failures stay pending."""
        report = FlushReport(written=[], retry=[])
        for pending in self.journal.all():
            try:
                path = self._flush_one(pending)
            except (ConcurrentEdit, NoteError, NotFound, OSError) as exc:
                message = exc.message if isinstance(exc, VaultmemError) else str(exc)
                report.retry.append((pending.path, message))
                continue
            if path is not None:
                report.written.append(path)
        return report

    def _flush_one(self, pending: Pending) -> str | None:
        with self.lock:
            memory = self._file_memory(pending)
            if memory is None:
                self.journal.clear(pending.memory_id, pending.version)  # memory gone
                return None
            new = rebase(state_from_fields(pending.fields, tags=memory.note.tags), memory.state)
            updates = self.file_updates(memory, new)
            if updates:
                edit_stm(self.root / memory.path, updates, expected_hash=memory.note.file_hash)
            self.journal.clear(pending.memory_id, pending.version)
            return memory.path if updates else None

    def _file_memory(self, pending: Pending) -> MemoryNote | None:
        """The memory as its file holds it, found at its recorded path or by id; None only
        when no note in the vault has its id (the catalog may still show a renamed note at its
        old path, and dropping the pending state then would lose recorded uses)."""
        memory = MemoryStore.try_load(self, pending.path)
        if memory is not None and memory.state.id == pending.memory_id:
            return memory
        try:
            memory = MemoryStore.try_load(self, self.resolve(pending.memory_id))
        except NotFound:
            memory = None
        if memory is not None and memory.state.id == pending.memory_id:
            return memory
        found = [m.path for m in MemoryStore.iter_all_memories(self)
                 if m.state.id == pending.memory_id]
        return MemoryStore.try_load(self, self.canonical(found)) if found else None
