"""One write lane: the daemon's scheduled jobs and the Api's requests that move notes take
turns. Each test holds one operation inside the lane (blocked on an event) and shows that the
other waits for the lane instead of running beside it; a job that bypassed the lane would run
at once and fail the test."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import REFERENCE, ago, memory_note
from vaultmem.api.ops import Api
from vaultmem.app import App, build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.core.consolidation import cluster_id
from vaultmem.daemon.run import Daemon
from vaultmem.daemon.scheduler import Scheduler
from vaultmem.engine.write_lane import WriteLane

pytestmark = pytest.mark.timeout(60)

KETTLE = ("The office kettle descales best with citric acid every second Friday morning before "
          "the team arrives, rinse it twice and boil plain water once.")
WAIT_S = 20.0


@dataclass
class Setup:
    app: App
    api: Api
    scheduler: Scheduler
    cluster: str


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    ids = [memory_note(vault, name, use_count=2, last_used=ago(days=1), body=KETTLE)[1]
           for name in ("kettle descaling", "kettle-descaling")]
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(data), "embedding_model": "fake"})
    data.mkdir()
    app = build_app(settings, daemon=True)
    try:
        app.sync.reindex()
        # never started: only its jobs are used
        daemon = Daemon(daemon_params(settings), app.daemon_parts())
        scheduler = Scheduler(daemon._jobs())  # the daemon's own jobs, never started here
        yield Setup(app, app.api(clock=lambda: REFERENCE), scheduler, cluster_id(ids))
    finally:
        app.close()


class Gate:
    """Wraps an operation: records when it starts and ends, and may hold it inside until
    released."""

    def __init__(self, name: str, order: list[str], *, hold: bool) -> None:
        self.name, self.order = name, order
        self.entered, self.release = threading.Event(), threading.Event()
        if not hold:
            self.release.set()

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.order.append(f"{self.name} starts")
            self.entered.set()
            assert self.release.wait(WAIT_S), f"{self.name} was never released"
            try:
                return run(*args, **kwargs)
            finally:
                self.order.append(f"{self.name} ends")
        return wrapped


def _in_thread(run: Callable[[], Any], results: dict[str, Any], key: str) -> threading.Thread:
    def target() -> None:
        try:
            results[key] = run()
        except BaseException as exc:  # surfaced by the test's assertions
            results[key] = exc
    thread = threading.Thread(target=target, name=f"test-{key}", daemon=True)
    thread.start()
    return thread


def _waits_in_lane(lane: WriteLane, operation: str, entered: threading.Event) -> bool:
    """True once `operation` waits for the lane; False when it got past the lane instead
    (its `entered` event set) or neither happened in WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if entered.is_set():
            return False
        if operation in lane.waiting():
            return True
        time.sleep(0.005)
    return False


def test_a_request_merge_waits_for_a_scheduled_sweep(setup: Setup) -> None:
    app, order, results = setup.app, [], {}
    sweep = Gate("sweep", order, hold=True)
    merge = Gate("merge", order, hold=False)
    app.lifecycle.sweep = sweep.wrap(app.lifecycle.sweep)  # type: ignore[method-assign]
    app.consolidator.merge = merge.wrap(app.consolidator.merge)  # type: ignore[method-assign]

    job = _in_thread(lambda: setup.scheduler.run_now("sweep"), results, "sweep")
    assert sweep.entered.wait(WAIT_S)
    assert app.lane.holder == "sweep"
    request = _in_thread(lambda: setup.api.call("merge_cluster", {"cluster_id": setup.cluster}),
                         results, "merge")
    waited = _waits_in_lane(app.lane, "merge_cluster", merge.entered)
    sweep.release.set()
    job.join(WAIT_S)
    request.join(WAIT_S)

    assert waited, f"the merge ran beside the scheduled sweep: {order}"
    assert order == ["sweep starts", "sweep ends", "merge starts", "merge ends"]
    assert not isinstance(results["sweep"], BaseException), results["sweep"]
    assert results["merge"]["cluster_id"] == setup.cluster
    assert app.lane.holder is None and app.lane.waiting() == []


def test_a_scheduled_sweep_waits_for_a_request_merge(setup: Setup) -> None:
    app, order, results = setup.app, [], {}
    sweep = Gate("sweep", order, hold=False)
    merge = Gate("merge", order, hold=True)
    app.lifecycle.sweep = sweep.wrap(app.lifecycle.sweep)  # type: ignore[method-assign]
    app.consolidator.merge = merge.wrap(app.consolidator.merge)  # type: ignore[method-assign]

    request = _in_thread(lambda: setup.api.call("merge_cluster", {"cluster_id": setup.cluster}),
                         results, "merge")
    assert merge.entered.wait(WAIT_S)
    job = _in_thread(lambda: setup.scheduler.run_now("sweep"), results, "sweep")
    waited = _waits_in_lane(app.lane, "sweep", sweep.entered)
    merge.release.set()
    request.join(WAIT_S)
    job.join(WAIT_S)

    assert waited, f"the scheduled sweep ran beside the merge: {order}"
    assert order == ["merge starts", "merge ends", "sweep starts", "sweep ends"]
    assert results["merge"]["cluster_id"] == setup.cluster
    assert not isinstance(results["sweep"], BaseException), results["sweep"]


@pytest.mark.parametrize("job", ["reconcile", "consolidate"])
def test_the_other_scheduled_writers_hold_the_lane(setup: Setup, job: str) -> None:
    """Reconcile and consolidation wait for a request in the lane as the sweep does."""
    app, results = setup.app, {}
    with app.lane.hold("save"):
        thread = _in_thread(lambda: setup.scheduler.run_now(job), results, job)
        waited = _waits_in_lane(app.lane, {"consolidate": "consolidation"}.get(job, job),
                                threading.Event())
    thread.join(WAIT_S)
    assert waited
    assert not isinstance(results[job], BaseException), results[job]


def test_the_lane_is_reentrant_and_names_who_waits() -> None:
    lane = WriteLane()
    with lane.hold("sweep"), lane.hold("promote"):
        assert lane.holder == "sweep"
    assert lane.holder is None


def test_a_scheduled_consolidation_is_recorded_and_undone_like_a_request(setup: Setup) -> None:
    """The job runs through the Api's one entry (`Api.run_job`): its merge is in the
    operation log under its own kind, and `undo` takes it back."""
    vault = setup.app.root
    before = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    setup.scheduler.run_now("consolidate")
    [recent] = setup.api.call("undo", {"list": True})["operations"][:1]
    assert recent["kind"] == "consolidation" and recent["undone_at"] is None
    undone = setup.api.call("undo", {})
    assert undone["kind"] == "consolidation" and len(undone["archived"]) == 1
    assert undone["skipped"] == []
    after = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    assert before <= after  # the merged memories are back where they were
