"""The operations table (`vaultmem/api/operations.py`): what the edges may ask for, and what
takes the write lane and is recorded for `undo`, said in one place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_server import REFERENCE, digest, sample_app
from vaultmem.api.operations import OPERATIONS, always, never
from vaultmem.api.ops import Api
from vaultmem.api.schemas import REQUESTS, ROUTES
from vaultmem.app import App
from vaultmem.errors import InvalidInput

WIRE = [op for op, row in OPERATIONS.items() if not row.scheduled]


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    with sample_app(tmp_path) as app:
        yield app


def test_every_operation_the_edges_reach_has_a_route_and_a_schema() -> None:
    assert tuple(WIRE) == Api.OPERATIONS
    assert set(WIRE) == set(REQUESTS) <= {route.op for route in ROUTES}
    assert [op for op, row in OPERATIONS.items() if row.scheduled] == ["consolidation"]


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_what_is_recorded_for_undo_also_runs_in_the_write_lane(op: str) -> None:
    row = OPERATIONS[op]
    body: dict[str, Any] = {"dry_run": False, "apply": True, "list": False}
    if row.recorded(body):
        assert row.writes(body)


def test_reads_and_uses_stay_out_of_the_lane() -> None:
    outside = {op for op, row in OPERATIONS.items() if row.writes is never}
    assert outside == {"health", "status", "search", "related", "get", "touch", "observe",
                       "review", "clusters", "feedback", "pin", "list"}
    assert OPERATIONS["undo"].writes({"list": False})
    assert not OPERATIONS["undo"].writes({"list": True})
    assert OPERATIONS["merge_cluster"].recorded is always


@pytest.mark.timeout(60)
def test_a_scheduled_only_operation_is_refused_at_the_edges(app: App) -> None:
    before = digest(app.root)
    api = app.api(clock=lambda: REFERENCE)
    with pytest.raises(InvalidInput, match="unknown operation 'consolidation'"):
        api.call("consolidation", {})
    assert digest(app.root) == before


@pytest.mark.timeout(60)
def test_a_request_waits_in_the_lane_under_its_own_name(app: App) -> None:
    api = app.api(clock=lambda: REFERENCE)
    seen: list[str | None] = []
    sweep = app.lifecycle.sweep

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(app.lane.holder)
        return sweep(*args, **kwargs)

    app.lifecycle.sweep = watched  # type: ignore[method-assign]
    api.call("sweep", {"dry_run": True})
    api.run_job("sweep", {"dry_run": False})
    assert seen == ["sweep", "sweep"] and app.lane.holder is None
