"""Periodic jobs (sweeps, flushes, consolidation, index optimisation) on an APScheduler thread.

Each job runs on its own interval (UTC). Runs missed while the machine slept are coalesced
into one run on wake-up; the same job never overlaps itself (scheduled runs and `run_now`
share a per-job lock), while different jobs may run side by side. A job that raises is logged
and recorded in `status()` and keeps its schedule.

While `paused()` says so (the daemon: notes are changing on disk), the jobs that write notes
wait. A pause that never ends (a sync tool or a user who never stops) must not starve them, so
a job deferred for `max_pause_s` runs anyway; its writes still refuse to overwrite an edit.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from vaultmem.engine.status_results import JobStatus

log = logging.getLogger(__name__)

# A coalesced run after a sleep is due at most one interval in the past; the margin covers the
# delay between APScheduler noticing it and a worker thread picking it up.
_GRACE_MARGIN_S = 30

OK = "ok"
SKIPPED_PAUSED = "skipped: paused"
SKIPPED_UNCHANGED = "skipped: nothing changed"


def _always() -> bool:
    return True


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Job:
    """`run` every `interval_s` seconds unless `should_run()` says there is nothing to do.

    The first run is `first_delay_s` after `Scheduler.start()`, or one interval when None.
    Only `pausable` jobs wait while the scheduler is paused.
    """

    name: str
    interval_s: float
    run: Callable[[], object]
    should_run: Callable[[], bool] = _always
    first_delay_s: float | None = None
    pausable: bool = True


@dataclass
class _JobState:
    job: Job
    last_run: datetime | None = None
    last_result: str | None = None
    last_duration_s: float | None = None  # of the last run that ran (a skip takes no time)
    runs: int = 0
    paused_since: float | None = None  # monotonic time of the first run deferred in a row


class Scheduler:
    """Runs `jobs` on their intervals on a background thread; `paused()` defers the pausable
    ones, for at most `max_pause_s` in a row."""

    def __init__(
        self, jobs: Sequence[Job], *, paused: Callable[[], bool] = _never,
        max_pause_s: float = math.inf,
    ) -> None:
        self._states: dict[str, _JobState] = {}
        self._running: dict[str, threading.Lock] = {}  # per job: one run at a time
        for job in jobs:
            if job.name in self._states:
                raise ValueError(f"two jobs are named {job.name!r}")
            if not job.interval_s > 0:
                raise ValueError(f"job {job.name!r}: interval_s must be positive")
            if job.first_delay_s is not None and job.first_delay_s < 0:
                raise ValueError(f"job {job.name!r}: first_delay_s must not be negative")
            self._states[job.name] = _JobState(job)
            self._running[job.name] = threading.Lock()
        if not max_pause_s > 0:
            raise ValueError("max_pause_s must be positive")
        self._paused = paused
        self._max_pause_s = max_pause_s
        self._started = False
        self._status_lock = threading.Lock()
        self._aps = BackgroundScheduler(
            timezone=UTC,
            executors={"default": ThreadPoolExecutor(max_workers=max(1, len(jobs)))},
            job_defaults={"coalesce": True, "max_instances": 1},
        )

    # lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        if self._started:
            raise RuntimeError("a scheduler can be started only once")
        self._started = True
        now = datetime.now(UTC)
        for state in self._states.values():
            job = state.job
            delay = job.interval_s if job.first_delay_s is None else job.first_delay_s
            first = now + timedelta(seconds=delay)
            self._aps.add_job(
                self._scheduled_run,
                trigger=IntervalTrigger(seconds=job.interval_s, start_date=first, timezone=UTC),
                args=(job.name,),
                id=job.name,
                name=job.name,
                next_run_time=first,
                misfire_grace_time=math.ceil(job.interval_s) + _GRACE_MARGIN_S,
                replace_existing=True,
            )
        self._aps.start()

    def stop(self, wait: bool = True) -> None:
        """Stop scheduling; with `wait`, also wait for running jobs. Idempotent."""
        if self._aps.running:
            self._aps.shutdown(wait=wait)

    # running ------------------------------------------------------------------------------

    def run_now(self, name: str) -> object:
        """Run job `name` now, in this thread, after any run of it in progress.

        An explicit request: `paused()` and `should_run()` are not consulted. Returns what the
        job returns and re-raises what it raises (both are recorded in `status()`).
        """
        state = self._state(name)
        with self._running[name]:
            started, t0 = datetime.now(UTC), time.perf_counter()
            try:
                result = state.job.run()
            except Exception as exc:
                self._record(state, started, t0, _error(exc), ran=True)
                raise
            self._record(state, started, t0, OK, ran=True)
            return result

    def _scheduled_run(self, name: str) -> None:
        state = self._states[name]
        with self._running[name]:
            started, t0 = datetime.now(UTC), time.perf_counter()
            try:
                if self._defer(state):
                    self._record(state, started, t0, SKIPPED_PAUSED, ran=False)
                    return
                state.paused_since = None
                if not state.job.should_run():
                    self._record(state, started, t0, SKIPPED_UNCHANGED, ran=False)
                    return
                state.job.run()
            except Exception as exc:
                log.exception("scheduled job %r failed", name)
                self._record(state, started, t0, _error(exc), ran=True)
                return
            self._record(state, started, t0, OK, ran=True)

    def _defer(self, state: _JobState) -> bool:
        """Whether this run waits for the pause to end (never beyond `max_pause_s`)."""
        if not state.job.pausable or not self._paused():
            return False
        now = time.monotonic()
        if state.paused_since is None:
            state.paused_since = now
        if now - state.paused_since < self._max_pause_s:
            return True
        log.info("job %r ran after waiting %.0f s for a pause to end",
                 state.job.name, now - state.paused_since)
        return False

    def _record(
        self, state: _JobState, started: datetime, t0: float, result: str, *, ran: bool
    ) -> None:
        with self._status_lock:
            state.last_run = started
            state.last_result = result
            if ran:
                state.last_duration_s = time.perf_counter() - t0
                state.runs += 1

    # status -------------------------------------------------------------------------------

    def status(self) -> list[JobStatus]:
        """One entry per job, in the order the jobs were given."""
        entries = []
        for name, state in self._states.items():
            with self._status_lock:
                last_run, result = state.last_run, state.last_result
                duration, runs = state.last_duration_s, state.runs
            entries.append(JobStatus(name=name, interval_s=state.job.interval_s,
                                     last_run=last_run, last_result=result,
                                     last_duration_s=duration,
                                     next_run=self._next_run(name), runs=runs))
        return entries

    def _next_run(self, name: str) -> datetime | None:
        if not self._aps.running:
            return None
        aps_job = self._aps.get_job(name)
        when = getattr(aps_job, "next_run_time", None)
        return when if isinstance(when, datetime) else None

    def _state(self, name: str) -> _JobState:
        try:
            return self._states[name]
        except KeyError:
            raise KeyError(f"no job named {name!r}") from None


def _error(exc: Exception) -> str:
    return f"error: {exc}" if str(exc) else f"error: {type(exc).__name__}"
