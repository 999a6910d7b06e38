"""The operations a user may undo (sweeps, gc, promotions, merges): what each did to which
notes, kept in a small SQLite file in the data dir (outside the vault), the newest first; and
the ids merges have written memories under (so that no merge takes one twice).

Each entry holds the operation's events as `MemoryStore.recording` collected them (every
note's text before and after each write, every move) and the ids of the memories it created.
Only the last `KEEP` operations are kept.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmem.engine.upkeep_results import OperationSummary

KEEP = 50
_SCHEMA = """
CREATE TABLE IF NOT EXISTS operations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
    at TEXT NOT NULL, events TEXT NOT NULL, created TEXT NOT NULL, undone_at TEXT
);
CREATE TABLE IF NOT EXISTS spent_ids (id TEXT PRIMARY KEY, day TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Operation:
    id: str
    kind: str
    at: str
    events: list[dict[str, str]]
    created: list[str]  # ids of the memories the operation created
    undone_at: str | None

    def summary(self) -> OperationSummary:
        moves = sum(1 for e in self.events if "move" in e)
        return OperationSummary(id=self.id, kind=self.kind, at=self.at, moves=moves,
                                created=len(self.created), undone_at=self.undone_at)


class OperationLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add(self, kind: str, at: datetime, events: list[dict[str, str]],
            created: list[str]) -> str:
        op_id = f"op-{uuid.uuid4().hex[:12]}"
        with self._lock:
            self._db.execute(
                "INSERT INTO operations(id, kind, at, events, created) VALUES (?, ?, ?, ?, ?)",
                (op_id, kind, at.isoformat(timespec="seconds"), json.dumps(events),
                 json.dumps(created)))
            self._db.execute(
                "DELETE FROM operations WHERE seq NOT IN "
                "(SELECT seq FROM operations ORDER BY seq DESC LIMIT ?)", (KEEP,))
        return op_id

    def get(self, op_id: str) -> Operation | None:
        return self._one("SELECT id, kind, at, events, created, undone_at FROM operations "
                         "WHERE id = ?", (op_id,))

    def last_open(self) -> Operation | None:
        """The newest operation not undone yet."""
        return self._one("SELECT id, kind, at, events, created, undone_at FROM operations "
                         "WHERE undone_at IS NULL ORDER BY seq DESC LIMIT 1", ())

    def recent(self, limit: int = 10) -> list[Operation]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, kind, at, events, created, undone_at FROM operations "
                "ORDER BY seq DESC LIMIT ?", (limit,)).fetchall()
        return [_operation(row) for row in rows]

    def spend(self, memory_id: str, day: date) -> None:
        """Remember that a merge of `day` wrote a memory `memory_id` (before it writes the
        note: neither a failed merge nor a crash forgets it). The ids name their day, so only
        the last two days' are kept."""
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO spent_ids(id, day) VALUES (?, ?)",
                             (memory_id, day.isoformat()))
            self._db.execute("DELETE FROM spent_ids WHERE day < ?",
                             ((day - timedelta(days=1)).isoformat(),))

    def spent(self, memory_id: str) -> bool:
        """Whether `spend` was told of `memory_id` (in the last two days)."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM spent_ids WHERE id = ?",
                                   (memory_id,)).fetchone()
        return row is not None

    def mark_undone(self, op_id: str, at: datetime) -> None:
        with self._lock:
            self._db.execute("UPDATE operations SET undone_at = ? WHERE id = ?",
                             (at.isoformat(timespec="seconds"), op_id))

    def _one(self, sql: str, args: tuple[Any, ...]) -> Operation | None:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return _operation(row) if row else None


def _operation(row: tuple[Any, ...]) -> Operation:
    return Operation(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]), row[5])
