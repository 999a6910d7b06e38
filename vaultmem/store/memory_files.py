"""Memory notes as their files hold them, for the store (`MemoryStore`): one read by path and
the listing of every memory note, no pending use laid over them.

In the daemon (`daemon=True`) a note is parsed once per (mtime, size) and the notes the store
writes are remembered as written, so the next read needs no parse; memories are listed from
the catalog's memory paths, which the watcher keeps current. In process a read always parses
and memories are listed by scanning the vault (catalogued ones, and notes changed since the
last sync).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from vaultmem.store.memory_notes import MemoryNote, try_read_memory
from vaultmem.store.snapshot import Snapshot


class MemoryFiles:
    def __init__(self, root: Path, *, daemon: bool) -> None:
        self.root = root
        self._daemon = daemon
        self._cache: dict[str, tuple[tuple[int, int], MemoryNote | None]] = {}

    def read(self, path: str) -> MemoryNote | None:
        """The memory as its file holds it, or None when the path holds no memory. In the
        daemon a note is parsed once per (mtime, size)."""
        if not self._daemon:
            return try_read_memory(self.root, path)
        try:
            st = (self.root / path).stat()
        except OSError:
            self._cache.pop(path, None)
            return None
        key = (st.st_mtime_ns, st.st_size)
        hit = self._cache.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        memory = try_read_memory(self.root, path)
        self._cache[path] = (key, memory)
        return memory

    def remember(self, memory: MemoryNote) -> None:
        """`memory` as the store just wrote it (in the daemon, its next read needs no parse)."""
        if self._daemon:
            note = memory.note
            self._cache[memory.path] = ((note.mtime_ns, note.size), memory)

    def forget(self, path: str) -> None:
        """What was remembered of `path` is stale (a write failed, or changed its text)."""
        self._cache.pop(path, None)

    def listed(self, snapshot: Snapshot) -> list[MemoryNote]:
        """Every memory note as its file holds it, by path, read once per snapshot: in the
        daemon from the catalog's memory paths, otherwise by scanning the vault."""
        if snapshot.memory_files is None:
            if not self._daemon:
                snapshot.memory_files = list(self.scan(snapshot))
            else:
                snapshot.memory_files = [m for m in map(self.read, snapshot.memory_paths)
                                         if m is not None]
        return snapshot.memory_files

    def scan(self, snapshot: Snapshot) -> Iterator[MemoryNote]:
        """Every memory note as its file holds it: catalogued ones plus notes changed since the
        last sync, found by scanning the vault."""
        records, scan = snapshot.records, snapshot.scan
        for path, st in sorted(scan.files.items()):
            rec = records.get(path)
            unchanged = rec is not None and (rec.mtime_ns, rec.size) == (st.mtime_ns, st.size)
            if unchanged and rec is not None and not rec.note_id:
                continue  # a regular note that has not changed
            memory = try_read_memory(self.root, path)
            if memory is not None:
                yield memory
