"""Moving a memory's note into a folder, shared by every use case that moves notes.

Lifecycle (archive, promote, finish interrupted moves), Restorer, Reconciler, Consolidator
and MemoryAdmin all move notes the same way: through the store (under its lock, never
overwriting), then the index follows.
"""

from __future__ import annotations

from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot


def inside(path: str, folder: str) -> bool:
    """Whether the vault-relative `path` lies in `folder` (at any depth)."""
    return path.startswith(folder.strip("/") + "/")


class Mover:
    def __init__(self, store: MemoryStore, sync: IndexSync, archive_folder: str) -> None:
        self._store = store
        self._sync = sync
        self.archive_folder = archive_folder

    def into(self, path: str, folder: str, snapshot: Snapshot | None = None) -> str | None:
        """Move a note into `folder`; None when its user moved or deleted it since its state
        was written (a later sweep's `finish_moves` moves it if it is still in the vault).
        A note already in `folder` stays where it is. The call's `snapshot` follows the note
        (its state was written just before)."""
        target = self._store.move_into(path, folder)
        if target is not None and target != path:
            self._sync.sync_paths([path, target])
        if snapshot is not None:
            self._store.follow(snapshot, {path, target or path})
        return target

    def to_archive(self, path: str, snapshot: Snapshot | None = None) -> str | None:
        """Move a note whose state already says archived into the archive folder (never
        overwriting; the index follows). Returns its new vault-relative path, or None when
        the note is no longer at `path`."""
        return self.into(path, self.archive_folder, snapshot)
