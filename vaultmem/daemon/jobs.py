"""The daemon's scheduled jobs: which it runs, how often, and when each has work.

Flush writes pending uses to their notes; sweep, reconcile and consolidation are operations of
the daemon's Api (`Api.run_job`: in the write lane, recorded for `undo`); optimize is the
index's upkeep and writes no note, so it does not wait while the vault is busy. Imported when
the scheduler starts (after the first answers), like the scheduler itself.
"""

from __future__ import annotations

from collections.abc import Callable

from vaultmem.api.ops import Api
from vaultmem.app import DaemonParams, DaemonParts
from vaultmem.daemon.scheduler import Job
from vaultmem.index.catalog import Catalog
from vaultmem.index.upkeep import Occasion
from vaultmem.store.journal import FlushReport


class Consolidation:
    """The consolidation job, which only has new work when some memory changed since its
    last run."""

    def __init__(self, catalog: Catalog, api: Api) -> None:
        self.catalog = catalog
        self.api = api
        self._consolidated_at: str | None = None

    def memories_changed(self) -> bool:
        return self.catalog.memory_fingerprint() != self._consolidated_at

    def run(self) -> object:
        """The memories' fingerprint is read before the run: a memory saved while it ran is
        consolidated at the next run (and after merges, the next run finds nothing to do)."""
        before = self.catalog.memory_fingerprint()
        result = self.api.run_job("consolidation")
        self._consolidated_at = before
        return result


def daemon_jobs(params: DaemonParams, parts: DaemonParts, api: Api, *,
                flush: Callable[[], FlushReport],
                optimize: Callable[[Occasion], str | None]) -> list[Job]:
    """The jobs of one daemon; `flush` and `optimize` are the daemon's own."""
    p, catalog, journal = params, parts.catalog, parts.journal
    consolidation = Consolidation(catalog, api)
    return [
        Job("flush", p.flush_every_s, flush, should_run=lambda: len(journal) > 0),
        Job("sweep", p.sweep_every_s, lambda: api.run_job("sweep", {"dry_run": False})),
        Job("reconcile", p.reconcile_every_s,
            lambda: api.run_job("reconcile", {"apply": True}),
            should_run=lambda: bool(catalog.duplicate_ids())),
        Job("consolidate", p.consolidate_every_s, consolidation.run,
            should_run=consolidation.memories_changed),
        Job("optimize", p.optimize_every_s, lambda: optimize(Occasion.SCHEDULED),
            should_run=lambda: parts.index.is_open, pausable=False),  # writes no note
    ]
