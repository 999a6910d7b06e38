"""Scheduler: intervals, skips, failures, coalesced catch-up, run_now serialisation, shutdown."""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta

import pytest

from vaultmem.api.wire_status import job_status_wire
from vaultmem.daemon.debounce import AfterQuiet
from vaultmem.daemon.scheduler import Job, Scheduler
from vaultmem.engine.status_results import JobStatus

WAIT = 10.0


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Counter:
    """A job body that records when it ran."""

    def __init__(self, result: object = "done") -> None:
        self.times: list[float] = []
        self.result = result

    def __call__(self) -> object:
        self.times.append(time.monotonic())
        return self.result

    @property
    def count(self) -> int:
        return len(self.times)


@pytest.fixture
def make_scheduler() -> Iterator[Callable[..., Scheduler]]:
    made: list[Scheduler] = []

    def make(
        jobs: Sequence[Job], paused: Callable[[], bool] = lambda: False,
        max_pause_s: float = math.inf,
    ) -> Scheduler:
        scheduler = Scheduler(jobs, paused=paused, max_pause_s=max_pause_s)
        scheduler.start()
        made.append(scheduler)
        return scheduler

    yield make
    for scheduler in made:
        scheduler.stop()


def status_of(scheduler: Scheduler, name: str) -> JobStatus:
    return next(entry for entry in scheduler.status() if entry.name == name)


@pytest.mark.timeout(30)
def test_a_job_runs_on_its_interval(make_scheduler: Callable[..., Scheduler]) -> None:
    body = Counter()
    make_scheduler([Job("tick", 0.1, body, first_delay_s=0.0)])
    wait_until(lambda: body.count >= 4)
    gaps = [b - a for a, b in itertools.pairwise(body.times)]
    assert all(gap > 0.05 for gap in gaps), gaps


@pytest.mark.timeout(30)
def test_should_run_false_skips_and_is_recorded(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    body, checks = Counter(), Counter(result=False)
    scheduler = make_scheduler(
        [Job("idle", 0.05, body, should_run=lambda: bool(checks()), first_delay_s=0.0)]
    )
    wait_until(lambda: checks.count >= 2)
    entry = status_of(scheduler, "idle")
    assert entry.last_result == "skipped: nothing changed"
    assert entry.runs == 0 and body.count == 0
    assert entry.last_duration_s is None  # a skip is no run: it has no duration


@pytest.mark.timeout(30)
def test_paused_skips_every_job(make_scheduler: Callable[..., Scheduler]) -> None:
    body, checks = Counter(), Counter(result=True)
    scheduler = make_scheduler(
        [Job("write", 0.05, body, first_delay_s=0.0)], paused=lambda: bool(checks())
    )
    wait_until(lambda: checks.count >= 2)
    assert status_of(scheduler, "write").last_result == "skipped: paused"
    assert body.count == 0


@pytest.mark.timeout(30)
def test_a_job_that_is_not_pausable_runs_while_paused(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    waits, index = Counter(), Counter()
    scheduler = make_scheduler(
        [Job("write", 0.05, waits, first_delay_s=0.0),
         Job("index", 0.05, index, first_delay_s=0.0, pausable=False)],
        paused=lambda: True,
    )
    wait_until(lambda: index.count >= 3)
    assert waits.count == 0
    assert status_of(scheduler, "write").last_result == "skipped: paused"
    assert status_of(scheduler, "index").last_result == "ok"


@pytest.mark.timeout(30)
def test_a_pause_that_never_ends_defers_a_job_only_max_pause_s(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    body, checks = Counter(), Counter(result=True)
    started = time.monotonic()
    make_scheduler([Job("flush", 0.05, body, first_delay_s=0.0)],
                   paused=lambda: bool(checks()), max_pause_s=0.5)
    wait_until(lambda: body.count >= 2)
    first_wait = body.times[0] - started
    second_wait = body.times[1] - body.times[0]
    assert checks.count > body.count  # most runs were deferred...
    assert 0.45 <= first_wait < 5 and 0.45 <= second_wait < 5  # ...each for about 0.5 s


def test_max_pause_s_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_pause_s"):
        Scheduler([Job("x", 1, lambda: None)], max_pause_s=0)


@pytest.mark.timeout(30)
def test_a_failing_job_is_recorded_and_keeps_its_schedule(
    make_scheduler: Callable[..., Scheduler], caplog: pytest.LogCaptureFixture
) -> None:
    calls = Counter()

    def boom() -> None:
        calls()
        raise ValueError("disk on fire")

    scheduler = make_scheduler([Job("flaky", 0.05, boom, first_delay_s=0.0)])
    wait_until(lambda: calls.count >= 3)
    entry = status_of(scheduler, "flaky")
    assert entry.last_result == "error: disk on fire"
    assert isinstance(entry.runs, int) and entry.runs >= 2
    assert "disk on fire" in caplog.text


@pytest.mark.timeout(30)
def test_runs_missed_while_asleep_happen_once(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    body = Counter()
    interval = 0.5
    scheduler = make_scheduler([Job("sweep", interval, body, first_delay_s=0.0)])
    wait_until(lambda: body.count == 1)
    first = body.times[0]
    # A laptop sleep: the scheduler's thread does not wake while five run times go by.
    scheduler._aps.pause()
    time.sleep(max(0.0, first + 5 * interval + 0.05 - time.monotonic()))
    scheduler._aps.resume()
    wait_until(lambda: body.count >= 2)
    catch_up = body.times[1]
    time.sleep(0.2)  # long enough for a burst of missed runs, short of the next run time
    burst = [t for t in body.times[1:] if t - catch_up < 0.2]
    assert len(burst) == 1, body.times


@pytest.mark.timeout(30)
def test_run_now_waits_for_the_scheduled_run_of_the_same_job(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    active, most, lock = [0], [0], threading.Lock()
    spans: list[tuple[float, float]] = []
    entered, release = threading.Event(), threading.Event()

    def slow() -> str:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        start = time.monotonic()
        entered.set()
        release.wait(WAIT)
        with lock:
            active[0] -= 1
        spans.append((start, time.monotonic()))
        return "swept"

    scheduler = make_scheduler([Job("slow", 0.05, slow, first_delay_s=0.0)])
    assert entered.wait(WAIT)
    results: list[object] = []
    caller = threading.Thread(target=lambda: results.append(scheduler.run_now("slow")))
    caller.start()
    caller.join(0.3)
    assert caller.is_alive(), "run_now did not wait for the scheduled run"
    release.set()
    caller.join(WAIT)
    assert results == ["swept"]
    assert most[0] == 1, "two runs of one job overlapped"
    spans.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


@pytest.mark.timeout(30)
def test_jobs_of_different_names_run_side_by_side(
    make_scheduler: Callable[..., Scheduler],
) -> None:
    both = threading.Barrier(2, timeout=WAIT)
    met = Counter()

    def meet() -> None:
        both.wait()
        met()

    make_scheduler([Job("a", 60, meet, first_delay_s=0.0), Job("b", 60, meet, first_delay_s=0.0)])
    wait_until(lambda: met.count == 2)


@pytest.mark.timeout(30)
def test_run_now_ignores_pause_and_reraises(make_scheduler: Callable[..., Scheduler]) -> None:
    def boom() -> None:
        raise KeyError("nope")

    body = Counter(result={"swept": 3})
    scheduler = make_scheduler([Job("ok", 60, body), Job("bad", 60, boom)], paused=lambda: True)
    assert scheduler.run_now("ok") == {"swept": 3}
    with pytest.raises(KeyError, match="nope"):
        scheduler.run_now("bad")
    assert status_of(scheduler, "bad").last_result == "error: 'nope'"
    with pytest.raises(KeyError, match="no job named"):
        scheduler.run_now("missing")


@pytest.mark.timeout(30)
def test_status_reports_every_field(make_scheduler: Callable[..., Scheduler]) -> None:
    body = Counter()
    idle = Scheduler([Job("later", 30, body)])
    assert idle.status() == [JobStatus("later", 30, None, None, None, None, 0)]
    assert [job_status_wire(j) for j in idle.status()] == [
        {"name": "later", "interval_s": 30, "last_run": None, "last_result": None,
         "last_duration_s": None, "next_run": None, "runs": 0}
    ]
    scheduler = make_scheduler([Job("tick", 30, body, first_delay_s=0.0), Job("later", 30, body)])
    wait_until(lambda: body.count == 1)
    wait_until(lambda: status_of(scheduler, "tick").runs == 1)
    tick_status, later_status = scheduler.status()
    tick, later = job_status_wire(tick_status), job_status_wire(later_status)
    assert set(tick) == {"name", "interval_s", "last_run", "last_result", "last_duration_s",
                         "next_run", "runs"}
    assert tick["last_result"] == "ok" and tick["interval_s"] == 30
    assert isinstance(tick["last_duration_s"], float) and tick["last_duration_s"] >= 0
    last_run = datetime.fromisoformat(str(tick["last_run"]))
    next_run = datetime.fromisoformat(str(tick["next_run"]))
    assert last_run.utcoffset() == timedelta(0) and next_run.utcoffset() == timedelta(0)
    assert 25 < (next_run - last_run).total_seconds() <= 31
    assert later["runs"] == 0 and later["last_run"] is None and later["next_run"] is not None


@pytest.mark.timeout(30)
def test_invalid_jobs_are_refused() -> None:
    with pytest.raises(ValueError, match="two jobs"):
        Scheduler([Job("x", 1, lambda: None), Job("x", 2, lambda: None)])
    with pytest.raises(ValueError, match="positive"):
        Scheduler([Job("x", 0, lambda: None)])


@pytest.mark.timeout(30)
def test_idle_scheduler_uses_no_cpu(make_scheduler: Callable[..., Scheduler]) -> None:
    make_scheduler([Job("rare", 3600, lambda: None)])
    before = time.process_time()
    time.sleep(1.0)
    assert time.process_time() - before < 0.05


@pytest.mark.timeout(30)
def test_stop_leaves_no_threads_and_is_idempotent() -> None:
    before = set(threading.enumerate())
    body = Counter()
    scheduler = Scheduler([Job("a", 0.05, body, first_delay_s=0.0), Job("b", 0.05, body)])
    scheduler.start()
    wait_until(lambda: body.count >= 3)
    scheduler.stop()
    scheduler.stop()
    assert set(threading.enumerate()) == before
    assert all(entry.next_run is None for entry in scheduler.status())


@pytest.mark.timeout(30)
def test_after_quiet_calls_once_when_a_burst_of_pokes_ends() -> None:
    calls = Counter()
    quiet = AfterQuiet(0.3, calls, name="test-quiet")
    quiet.start()
    try:
        first = time.monotonic()
        for _ in range(6):  # a burst lasting ~0.5 s, longer than the delay itself
            time.sleep(0.1)
            quiet.poke()
        last = time.monotonic()
        wait_until(lambda: calls.count == 1)
        time.sleep(0.5)
        assert calls.count == 1
        assert calls.times[0] - last >= 0.25 and calls.times[0] - first >= 0.8
        quiet.poke()  # a later burst: another call
        wait_until(lambda: calls.count == 2)
    finally:
        quiet.stop()


@pytest.mark.timeout(30)
def test_after_quiet_stop_cancels_a_pending_call_and_survives_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Counter()

    def boom() -> None:
        calls()
        raise ValueError("optimise failed")

    quiet = AfterQuiet(0.05, boom, name="test-quiet")
    quiet.start()
    quiet.poke()
    wait_until(lambda: calls.count == 1)
    quiet.poke()
    wait_until(lambda: calls.count == 2)  # the error did not end the thread
    assert "optimise failed" in caplog.text
    quiet.stop()
    slow = AfterQuiet(5.0, boom, name="test-quiet-slow")
    slow.start()
    slow.poke()
    slow.stop()
    assert not quiet._thread.is_alive() and not slow._thread.is_alive()
    assert calls.count == 2
