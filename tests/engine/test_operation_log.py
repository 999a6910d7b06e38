"""The operation log remembers the ids merges wrote memories under, for two days."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from vaultmem.engine.operation_log import OperationLog

DAY = date(2026, 11, 29)


def test_spent_ids_are_remembered_for_their_day_and_the_next(tmp_path: Path) -> None:
    log = OperationLog(tmp_path / "operations.sqlite3")
    try:
        log.spend("m-1", DAY)
        log.spend("m-1", DAY)  # spent twice: no error
        assert log.spent("m-1") and not log.spent("m-2") and not log.spent("m-")
        log.spend("m-2", DAY + timedelta(days=1))
        assert log.spent("m-1")  # yesterday's still kept
        log.spend("m-3", DAY + timedelta(days=2))
        assert not log.spent("m-1") and log.spent("m-2") and log.spent("m-3")
    finally:
        log.close()


def test_spent_ids_outlive_the_process(tmp_path: Path) -> None:
    OperationLog(tmp_path / "operations.sqlite3").spend("m-1", DAY)
    reopened = OperationLog(tmp_path / "operations.sqlite3")
    try:
        assert reopened.spent("m-1")
    finally:
        reopened.close()
