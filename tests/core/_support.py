"""Shared helpers for the core tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from vaultmem.core.memory import MemoryState

NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
HOUR = 3600.0
DAY = 86_400.0


def ago(*, days: float = 0.0, hours: float = 0.0) -> datetime:
    return NOW - timedelta(days=days, hours=hours)


def memory(
    memory_id: str = "m1",
    *,
    idle_hours: float = 0.0,
    age_hours: float | None = None,
    **changes: object,
) -> MemoryState:
    """A memory last used `idle_hours` before NOW, created `age_hours` (default: same) ago."""
    last_used = ago(hours=idle_hours)
    created = ago(hours=idle_hours if age_hours is None else age_hours)
    base = MemoryState(id=memory_id, created=created, last_used=last_used)
    return replace(base, **changes)  # type: ignore[arg-type]
