"""What the daemon says of its index runs: the last start-up (or on-demand) run's report or
error, beside the index writer's work in progress."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vaultmem.engine.index_ports import SyncReport


class IndexingStatus:
    """The last start-up (or on-demand) index run's report or error, and whether one runs; the
    work in progress itself is the index writer's (`IndexSync.indexing`)."""

    def __init__(self) -> None:
        self.running = False
        self.last: dict[str, Any] | None = None
        self.error: str | None = None

    def to_json(self, work: dict[str, Any], queued: int) -> dict[str, Any]:
        """`running`: an index run or any sync (a watcher batch too) is under way; `queued`:
        changed notes not yet handed to the index writer or waiting for it."""
        return {**work, "running": self.running or work["running"], "queued": queued,
                "last": self.last, "error": self.error}


def report_json(report: SyncReport) -> dict[str, Any]:
    """A finished index run's report, as `status` shows it."""
    data = report.to_json()
    data["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    return data

