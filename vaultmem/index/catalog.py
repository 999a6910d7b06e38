"""The note catalog: one SQLite row per note file, the one per-note record of the index (the
LanceDB chunk store beside it holds chunks only).

It answers the questions that must be quick and must not import LanceDB (1.5 s) or the model:
which notes are indexed with which content hashes and metadata, which were skipped or failed
and why, and where the memory with a given `stm_id` lives. Like the chunk store it is derived
from the vault and is rebuilt from it whenever the identity (schema, embedding model) changes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from vaultmem.index.base import SCHEMA_VERSION, NoteRecord, names_of
from vaultmem.index.folder_lists import FolderLists, Key, Listed

_COLUMNS = (
    "path", "file_hash", "body_hash", "title", "tags", "aliases", "links", "note_id",
    "status", "reason", "mtime_ns", "size", "chunk_count", "language",
)
_LIST_COLUMNS = {"tags", "aliases", "links"}
_PER_QUERY = 500  # paths bound in one IN (...): below SQLite's variable limit
_NAMES_KEPT = 100_000  # notes whose names stay in memory between searches
_FOLDERS_KEPT = 10_000  # folder listings (threads' notes) kept likewise
_RECORDS_KEPT = 20_000  # search candidates' rows kept likewise
_CHANGES_KEPT = 256  # the latest generations whose changed paths `changed_since` can tell

#: Told of every change this process makes: (upserted records, deleted paths), or
#: (None, ()) when every row was dropped.
Listener = Callable[[Sequence[NoteRecord] | None, Sequence[str]], None]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY, file_hash TEXT NOT NULL, body_hash TEXT NOT NULL,
    title TEXT NOT NULL, tags TEXT NOT NULL, aliases TEXT NOT NULL, links TEXT NOT NULL,
    note_id TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, chunk_count INTEGER NOT NULL,
    language TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS notes_by_id ON notes(note_id) WHERE note_id != '';
"""


class Catalog:
    """Thread-safe: one connection guarded by a lock (writes are short transactions)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        _drop_older_layout(self._db)
        self._db.executescript(_SCHEMA)
        self._listeners: list[Listener] = []
        # What every search asks for (its candidates' names, their folders' notes), kept until
        # a note changes: here (`apply`, `reset`) or in another process (`_check_memos`); the
        # folder listings follow this catalog's own writes (folder_lists.py).
        self._names: dict[str, tuple[str, ...]] = {}
        self._note_languages: dict[str, str] = {}  # filled with the names
        self._folders = FolderLists()  # kept across this catalog's writes (folder_lists.py)
        self._records: dict[str, NoteRecord] = {}  # search candidates' rows
        self._id_paths: dict[str, tuple[str, ...]] = {}  # paths_for_note_id's answers
        self._languages: frozenset[str] | None = None
        self._memo_version = -1
        self._generation = 0  # counts the times the memos were forgotten
        # (generation, the paths its change touched, or None: any note may have changed)
        self._changes: deque[tuple[int, frozenset[str] | None]] = deque(maxlen=_CHANGES_KEPT)

    def subscribe(self, listener: Listener) -> None:
        """Call `listener` after each committed change made through this catalog."""
        with self._lock:
            self._listeners.append(listener)

    def data_version(self) -> int:
        """Changes when another connection (another process) commits to the catalog."""
        rows = self._query("PRAGMA data_version")
        return int(rows[0][0])

    def _check_memos(self) -> None:
        """Under the lock: forget the memos if another connection committed since they were
        filled, or they grew too large."""
        version = self.data_version()
        if (version != self._memo_version or len(self._names) > _NAMES_KEPT
                or len(self._folders) > _FOLDERS_KEPT or len(self._records) > _RECORDS_KEPT
                or len(self._id_paths) > _NAMES_KEPT):  # ids asked for that no note has too
            self._forget_memos()
            self._memo_version = version

    def _forget_memos(self) -> None:
        self._names.clear()
        self._note_languages.clear()
        self._folders.clear()
        self._records.clear()
        self._id_paths.clear()
        self._languages = None
        self._generation += 1
        self._changes.append((self._generation, None))

    def generation(self) -> int:
        """A number that changes whenever a note may have changed since it was last read
        (here or in another process): what a caller derives from the catalog's answers may be
        kept while it stays the same."""
        with self._lock:
            self._check_memos()
            return self._generation

    def changed_since(self, generation: int) -> tuple[int, frozenset[str] | None]:
        """The generation now and the paths of the notes changed since `generation` (by this
        process's writes), or None for them when any note may have changed (another process
        wrote, every row was dropped, or that generation is too old to tell)."""
        with self._lock:
            self._check_memos()
            now = self._generation
            if generation == now:
                return now, frozenset()
            if not self._changes or self._changes[0][0] > generation + 1 or generation > now:
                return now, None
            changed: set[str] = set()
            for made, paths in self._changes:
                if made <= generation:
                    continue
                if paths is None:
                    return now, None
                changed.update(paths)
            return now, frozenset(changed)

    def _notify(self, upserts: Sequence[NoteRecord] | None, deletes: Sequence[str]) -> None:
        for listener in list(self._listeners):
            listener(upserts, deletes)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # identity -----------------------------------------------------------------------------

    def identity(self) -> tuple[int, str] | None:
        rows = dict(self._query("SELECT key, value FROM meta"))
        if "schema_version" not in rows:
            return None
        return int(rows["schema_version"]), rows.get("embedder", "")

    def matches(self, embedder_name: str) -> bool:
        return self.identity() == (SCHEMA_VERSION, embedder_name)

    def chunking(self) -> str | None:
        """The chunk sizes the stored chunks were cut with ("1000/200"), if recorded: catalogs
        made before they were recorded have none."""
        rows = self._query("SELECT value FROM meta WHERE key = 'chunking'")
        return str(rows[0][0]) if rows else None

    def record_chunking(self, chunking: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('chunking', ?)",
                             (chunking,))

    def reset(self, embedder_name: str, chunking: str | None = None) -> None:
        """Forget every note (the index is being rebuilt) and record the new identity."""
        identity = [("schema_version", str(SCHEMA_VERSION)), ("embedder", embedder_name)]
        if chunking is not None:
            identity.append(("chunking", chunking))
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM notes")
            self._db.execute("DELETE FROM meta")
            self._db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", identity)
            self._forget_memos()
        self._notify(None, ())

    # reads --------------------------------------------------------------------------------

    def records(self) -> dict[str, NoteRecord]:
        rows = self._query(f"SELECT {', '.join(_COLUMNS)} FROM notes")
        return {row[0]: _to_record(row) for row in rows}

    def records_for(self, paths: Iterable[str]) -> dict[str, NoteRecord]:
        """The rows of just these paths (a search's candidates, a sync's batch): one query
        per 500 paths."""
        wanted = sorted({p for p in paths if _storable(p)})
        found: dict[str, NoteRecord] = {}
        for start in range(0, len(wanted), _PER_QUERY):
            part = wanted[start : start + _PER_QUERY]
            marks = ", ".join("?" * len(part))
            rows = self._query(
                f"SELECT {', '.join(_COLUMNS)} FROM notes WHERE path IN ({marks})", tuple(part))
            found.update((row[0], _to_record(row)) for row in rows)
        return found

    def known_records_for(self, paths: Iterable[str]) -> dict[str, NoteRecord]:
        """`records_for`, answered from memory for notes unchanged since they were last asked
        for (a search's candidates: the rows recur across searches)."""
        wanted = list(dict.fromkeys(paths))
        with self._lock:
            self._check_memos()
            kept = self._records
            kept.update(self.records_for(p for p in wanted if p not in kept))
            return {p: kept[p] for p in wanted if p in kept}

    def note_names_for(self, paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Every name of each known path (`names_of`: file name, title, aliases), answered
        from memory for notes unchanged since they were last asked for."""
        wanted = list(dict.fromkeys(paths))
        with self._lock:
            self._check_memos()
            names = self._names
            missing = [p for p in wanted if p not in names and _storable(p)]
            for start in range(0, len(missing), _PER_QUERY):
                part = missing[start : start + _PER_QUERY]
                marks = ", ".join("?" * len(part))
                rows = self._query(
                    f"SELECT path, title, aliases, language FROM notes WHERE path IN ({marks})",
                    tuple(part))
                for path, title, aliases, language in rows:
                    names[path] = names_of(path, title, json.loads(aliases) if aliases else ())
                    self._note_languages[path] = language
            return {p: names[p] for p in wanted if p in names}

    def note_languages_for(self, paths: Iterable[str]) -> dict[str, str]:
        """The language of each known path, kept in memory like its names."""
        wanted = list(dict.fromkeys(paths))
        return self.note_names_and_languages_for(wanted)[1]

    def note_names_and_languages_for(
        self, paths: Iterable[str]
    ) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
        """`note_names_for` and `note_languages_for` at once."""
        wanted = list(dict.fromkeys(paths))
        with self._lock:
            names = self.note_names_for(wanted)
            languages = self._note_languages
            return names, {p: languages[p] for p in names if p in languages}

    def languages(self) -> frozenset[str]:
        """The languages of the indexed notes ("" for notes of unknown language): a query is
        analysed in each (index/analysis.py). Kept in memory until a note changes."""
        with self._lock:
            self._check_memos()
            if self._languages is None:
                rows = self._query(
                    "SELECT DISTINCT language FROM notes WHERE status = 'indexed'")
                self._languages = frozenset(row[0] for row in rows)
            return self._languages

    def paths_in_folder(self, folder: str, name_prefix: str = "", *,
                        max_chunks: int | None = None, memories: bool = True) -> list[str]:
        """Paths of the notes directly in `folder` ("" the vault's top) whose file names start
        with `name_prefix` (and that have at most `max_chunks` chunks; and, without `memories`,
        that carry no `stm_id`), in path order."""
        with self._lock:
            self._check_memos()
            rows = self._folders.get((folder, name_prefix), self._list_folder)
            return [row.path for row in rows if (max_chunks is None or row.chunks <= max_chunks)
                    and (memories or row.plain)]

    def _list_folder(self, key: Key) -> list[tuple[str, int, bool]]:
        """A range scan of the primary key: it reads every note under the folder, subfolders
        too (~1 ms a call in a real vault; a search asks for each of its candidates' threads)."""
        folder, name_prefix = key
        prefix = f"{folder}/{name_prefix}" if folder else name_prefix
        return [(path, chunks, bool(plain)) for path, chunks, plain in self._query(
            "SELECT path, chunk_count, note_id = '' FROM notes WHERE path >= ? AND path < ? "
            "AND instr(substr(path, ?), '/') = 0",
            (prefix, prefix + "\U0010ffff", len(folder) + 2 if folder else 1))]

    def paths_for_note_id(self, note_id: str) -> list[str]:
        """Every catalogued path carrying this `stm_id` (more than one after a sync conflict),
        kept in memory until a note changes."""
        with self._lock:
            self._check_memos()
            if note_id not in self._id_paths:
                rows = self._query("SELECT path FROM notes WHERE note_id = ? ORDER BY path",
                                   (note_id,))
                self._id_paths[note_id] = tuple(row[0] for row in rows)
            return list(self._id_paths[note_id])

    def duplicate_ids(self) -> dict[str, list[str]]:
        """{stm_id: paths} for every id that more than one note carries."""
        rows = self._query(
            "SELECT note_id, path FROM notes WHERE note_id IN (SELECT note_id FROM notes "
            "WHERE note_id != '' GROUP BY note_id HAVING COUNT(*) > 1) ORDER BY note_id, path"
        )
        groups: dict[str, list[str]] = {}
        for note_id, path in rows:
            groups.setdefault(note_id, []).append(path)
        return groups

    def all_memory_paths(self) -> list[str]:
        """The path of every catalogued memory note, copies that share an id included."""
        return [row[0] for row in self._query(
            "SELECT path FROM notes WHERE note_id != '' ORDER BY path")]

    def memory_fingerprint(self) -> str:
        """Changes whenever a memory note is added, removed, moved or rewritten."""
        rows = self._query(
            "SELECT note_id, path, file_hash FROM notes WHERE note_id != '' ORDER BY note_id, path"
        )
        return hashlib.sha1(repr(rows).encode()).hexdigest()

    def chunk_total(self) -> int:
        """Chunks the catalogued notes have (a whole-table sum: for opening, not per batch)."""
        rows = self._query("SELECT COALESCE(SUM(chunk_count), 0) FROM notes")
        return int(rows[0][0]) if rows else 0

    def indexed_totals(self) -> tuple[int, int]:
        """(notes indexed, their chunks): a whole-table count, for a log line."""
        rows = self._query("SELECT COUNT(*), COALESCE(SUM(chunk_count), 0) FROM notes "
                           "WHERE status = 'indexed'")
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    # writes -------------------------------------------------------------------------------

    def apply(self, upserts: Iterable[NoteRecord] = (), deletes: Sequence[str] = ()) -> None:
        """Upserts and deletes in one transaction."""
        placeholders = ", ".join("?" for _ in _COLUMNS)
        records = list(upserts)
        with self._lock:
            with self._transaction():
                self._db.executemany("DELETE FROM notes WHERE path = ?", [(p,) for p in deletes])
                self._db.executemany(
                    f"INSERT OR REPLACE INTO notes({', '.join(_COLUMNS)}) VALUES ({placeholders})",
                    [_to_row(record) for record in records])
            # the memos follow once it is committed (read under the lock: none reads between)
            for path in (*deletes, *(record.path for record in records)):
                self._names.pop(path, None)
                self._note_languages.pop(path, None)
                self._records.pop(path, None)
            if records or deletes:
                self._folders.write(  # each note into or out of its folder's listing
                    (Listed(r.path, r.chunk_count, r.note_id == "") for r in records), deletes)
                self._id_paths.clear()  # any note may carry an id
                self._languages = None
                self._generation += 1
                self._changes.append((self._generation, frozenset(
                    (*deletes, *(record.path for record in records)))))
        self._notify(records, deletes)  # outside the lock: listeners may read the catalog

    # plumbing -----------------------------------------------------------------------------

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def _drop_older_layout(db: sqlite3.Connection) -> None:
    """A catalog written by an older version without every column: dropped, with its identity,
    so the index is rebuilt (as for any change of schema)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(notes)").fetchall()}
    if present and not set(_COLUMNS) <= present:
        db.executescript("DROP TABLE IF EXISTS notes; DROP TABLE IF EXISTS meta;")


def _storable(path: str) -> bool:
    """False for a path with undecodable bytes (a file name that is not UTF-8, as the watcher
    hands it over): the catalog never holds one (the scan records such a file under an escaped
    name), and SQLite cannot take it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _to_row(record: NoteRecord) -> tuple[object, ...]:
    values = []
    for column in _COLUMNS:
        value = getattr(record, column)
        values.append(json.dumps(list(value)) if column in _LIST_COLUMNS else value)
    return tuple(values)


def _to_record(row: Sequence[object]) -> NoteRecord:
    data = dict(zip(_COLUMNS, row, strict=True))
    for column in _LIST_COLUMNS:
        data[column] = tuple(json.loads(str(data[column])))
    return NoteRecord(**data)  # type: ignore[arg-type]
