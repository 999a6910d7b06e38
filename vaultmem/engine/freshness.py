"""Keeping one-shot (in-process) commands honest about the index.

Without a daemon nothing watches the vault, so notes written since the last index are unknown
to it. Before an in-process command, a stat scan (no note is read unless its size or mtime
changed) counts the notes added, changed or deleted since the index last saw them. Commands
that answer from the index (search, related, save's duplicate check, clusters, sweeps) bring it
up to date first; the others read the notes themselves, and `status` reports the count.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmem.engine.restore import Restorer
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_ports import SyncReport
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.ignore import IgnoreRules

# the operations whose answers come from the index, or that move notes after a plan and
# finish interrupted moves (sweep). `gc` only archives active memories, planned from the notes
# themselves, and stays free of the index and the model.
SYNC_FIRST = frozenset({"search", "related", "save", "clusters", "merge_cluster", "promote",
                        "sweep"})


def unindexed_changes(snapshot: Snapshot) -> int:
    """How many notes were added, changed or deleted since the index last saw them (from the
    snapshot's catalog rows and vault scan: `status` shares them with its other parts)."""
    records, scan = snapshot.records, snapshot.scan
    skipped = {path for path, _ in scan.skipped}
    changed = 0
    for path, st in scan.files.items():
        record = records.get(path)
        if record is None or (record.mtime_ns, record.size) != (st.mtime_ns, st.size):
            changed += 1
    gone = sum(1 for path in records if path not in scan.files and path not in skipped)
    added_skips = sum(1 for path in skipped if path not in records)
    return changed + gone + added_skips


class Freshness:
    """The in-process commands' view of how far the index is behind the vault."""

    def __init__(self, *, root: Path, rules: IgnoreRules, catalog: Catalog, sync: IndexSync,
                 restorer: Restorer) -> None:
        self._root = root
        self._rules = rules
        self._catalog = catalog
        self._sync = sync
        self._restorer = restorer

    def unindexed_changes(self, snapshot: Snapshot | None = None) -> int:
        """`snapshot`: the caller's, when it reads the catalog and the vault too."""
        return unindexed_changes(snapshot or Snapshot(self._catalog, self._root, self._rules))

    def bring_up_to_date(self, op: str, now: datetime) -> SyncReport | None:
        """Sync the index before `op` when it answers from the index and the vault changed;
        notes moved across the archive folder's edge are then settled (engine/restore.py)."""
        if op not in SYNC_FIRST or self.unindexed_changes() == 0:
            return None
        report = self._sync.reindex()
        self._restorer.settle_moves(report.moves, now)
        return report
