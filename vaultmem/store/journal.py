"""Usage writes in the daemon: durable at once, visible at once, written to notes coalesced.

The daemon's `MemoryStore` is given a `UsageJournal`: a touch or observe computes the new state
under the store's lock and records it in this SQLite journal (WAL, synchronous=FULL) before the
call returns, so it survives kill -9. The store's reads lay the journal over the note's own
frontmatter, so the next search sees the new state. The store's `flush` (scheduled) splices the
pending state into each note with a guarded write; many touches of one note between flushes
become one file write. A note edited by the user meanwhile is simply re-read: the splice only
touches stm_* lines, so the user's edit stays and the usage lands.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
