"""Keeping one-shot (in-process) commands honest about the index.

Without a daemon nothing watches the vault, so notes written since the last index are unknown
to it. Before an in-process command, a stat scan (no note is read unless its size or mtime
changed) counts the notes added, changed or deleted since the index last saw them. Commands
that answer from the index (search, related, save's duplicate check, clusters, sweeps) bring it
up to date first; the others read the notes themselves, and `status` reports the count.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from vaultmem.engine.indexer import SyncReport
from vaultmem.engine.snapshot import Snapshot

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


def bring_up_to_date(app: Any, op: str, now: datetime) -> SyncReport | None:
    """Sync the index before `op` when it answers from the index and the vault changed; notes
    moved across the archive folder's edge are then settled (see vaultmem.engine.restore)."""
    if op not in SYNC_FIRST:
        return None
    engine = app.engine
    if unindexed_changes(engine.memories.snapshot()) == 0:
        return None
    from vaultmem.engine.restore import Restorer

    report: SyncReport = engine.reindex()
    Restorer(app.lifecycle).settle_moves(report.moves, now)
    return report
