"""What the Api's handlers are given: the use cases, wired by the composition root.

`App.api` fills `ApiParts` (vaultmem/app.py); every handler in `api/reads.py` and
`api/writes.py` takes it, the checked body and `now`. Nothing here is optional but the two
daemon callbacks: a process without a daemon answers `status` with how far the index is
behind the vault, and reindexes in process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vaultmem.engine.consolidator import Consolidator
from vaultmem.engine.freshness import Freshness
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.memory_admin import MemoryAdmin
from vaultmem.engine.memory_updates import Updates
from vaultmem.engine.reconcile import Reconciler
from vaultmem.engine.restore import Restorer
from vaultmem.engine.search import Search
from vaultmem.engine.status import Status
from vaultmem.engine.status_results import DaemonStatus
from vaultmem.engine.undo import Undoer
from vaultmem.engine.uses import Uses
from vaultmem.engine.views import Views
from vaultmem.pipeline.index_ports import Progress, ReindexResult
from vaultmem.pipeline.index_sync import IndexSync


@dataclass(frozen=True)
class ApiParts:
    vault_name: str
    memory_types: tuple[str, ...]  # sorted: the built-in types and those given a half-life
    search: Search
    views: Views
    uses: Uses
    status: Status
    sync: IndexSync
    freshness: Freshness
    lifecycle: Lifecycle
    reconciler: Reconciler
    restorer: Restorer
    updates: Updates
    admin: MemoryAdmin
    consolidator: Consolidator
    undoer: Undoer
    # the daemon's own status and reindex (which keeps its progress for `status`); None in a
    # process without a daemon
    daemon_status: Callable[[], DaemonStatus] | None = None
    reindex: Callable[[bool], ReindexResult] | None = None
    progress: Progress | None = None  # follows an in-process reindex
