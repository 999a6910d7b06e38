"""The catalog's kept folder listings: the notes directly in a folder, as a search's thread
context asks for them (index/catalog.py's `paths_in_folder`), kept across writes.

A listing is read from SQLite once (a range scan of the primary key that reads every note
under the folder, subfolders too), then kept up to date by the catalog's own writes, which
put each written note in or out of the listings of its folder. A write that forgot them all
made every search after it list its candidates' folders again: during a first index, where
each write touches a thousand notes, 60-650 ms of a search (docs/benchmarks.md). Another
process's write (the catalog cannot tell which notes it changed) forgets them all.

Not locked: the catalog calls these holding its lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple


class Listed(NamedTuple):
    """A note in a folder's listing."""

    path: str
    chunks: int
    plain: bool  # it carries no `stm_id`: not a memory


Key = tuple[str, str]  # (folder, "" for the vault's top; a file name prefix)


class FolderLists:
    def __init__(self) -> None:
        self._lists: dict[Key, tuple[Listed, ...]] = {}

    def __len__(self) -> int:
        return len(self._lists)

    def clear(self) -> None:
        self._lists.clear()

    def get(self, key: Key, read: Callable[[Key], Iterable[tuple[str, int, bool]]]
            ) -> tuple[Listed, ...]:
        """The listing of `key`, read (in path order) if it is not kept."""
        found = self._lists.get(key)
        if found is None:
            found = self._lists[key] = tuple(Listed(*row) for row in read(key))
        return found

    def write(self, written: Iterable[Listed], deleted: Iterable[str]) -> None:
        """Notes written (their new rows) and deleted: in or out of the kept listings of their
        folders, which stay in path order (SQLite's: UTF-8 bytes, as code points sort)."""
        changed: dict[str, Listed | None] = {path: None for path in deleted}
        changed.update((row.path, row) for row in written)
        if not self._lists or not changed:
            return
        by_folder: dict[str, list[str]] = {}
        for path in changed:
            by_folder.setdefault(path.rpartition("/")[0], []).append(path)
        for key, rows in list(self._lists.items()):
            folder, prefix = key
            paths = [path for path in by_folder.get(folder, ())
                     if path.rpartition("/")[2].startswith(prefix)]
            if not paths:
                continue
            kept = {row.path: row for row in rows}
            for path in paths:
                row = changed[path]
                if row is None:
                    kept.pop(path, None)
                else:
                    kept[path] = row
            self._lists[key] = tuple(sorted(kept.values()))
