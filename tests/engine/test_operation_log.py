"""The operation log remembers which memories its kept operations created."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmem.engine.operation_log import KEEP, OperationLog

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_created_names_the_memories_of_kept_operations_undone_or_not(tmp_path: Path) -> None:
    log = OperationLog(tmp_path / "operations.sqlite3")
    try:
        op = log.add("merge_cluster", AT, [], ["m-1", "m-12"])
        log.add("sweep", AT, [], [])
        assert log.created("m-1") and log.created("m-12")
        assert not log.created("m-") and not log.created("m-2") and not log.created("1")
        log.mark_undone(op, AT)
        assert log.created("m-1")  # an undone merge spent its id all the same
        for _ in range(KEEP):
            log.add("sweep", AT, [], [])
        assert not log.created("m-1")  # only the kept operations are remembered
    finally:
        log.close()
