"""`vaultmem run`: the long-lived process that serves one vault.

It is given its parts, open (`App.daemon_parts()` of `app.build_app(settings, daemon=True)`:
the stores open, the usage journal included; opening them writes nothing). Start order:
lock → socket (answers at once); in the background, the index opens and the model loads →
the first searches are answered → watcher → scheduler → start-up reconciliation (the socket
reports its progress). Stop order is the reverse, with a last flush of pending usage writes,
then the parts are closed. All index writes go through the one index writer (`IndexSync`),
so the watcher, the scheduler and API calls never write concurrently; the scheduled sweep,
reconcile and consolidation are operations of the daemon's Api (`Api.run_job`; the jobs
and when each has work: daemon/jobs.py), which runs
them in the write lane the requests that move notes hold and records them for `undo`
(api/operations.py), so a job and a request never interleave. At stop, a sync under way (a
large note, the first index) ends at its next embedding piece, and the next start indexes
what it had not written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING, Any

from vaultmem import __version__
from vaultmem.api.auth import load_or_create_token
from vaultmem.api.server import ApiServer
from vaultmem.app import DaemonParams, DaemonParts
from vaultmem.daemon.debounce import AfterQuiet
from vaultmem.daemon.first_answers import FirstAnswers
from vaultmem.daemon.indexing_status import IndexingStatus, ProgressLog, finished_report
from vaultmem.daemon.lock import VaultLock
from vaultmem.daemon.native import Trimmer, resume_gc, tune_malloc
from vaultmem.daemon.stop_flag import StopFlag, signal_wakeups
from vaultmem.engine.status_results import DaemonStatus
from vaultmem.errors import Stopping
from vaultmem.index.libc import trim_heap
from vaultmem.index.upkeep import AFTER_SEARCH_S, QUIET_S, Occasion
from vaultmem.pipeline.index_ports import ReindexResult, SyncReport
from vaultmem.store.journal import FlushReport
from vaultmem.vault.writer_lock import COMMAND_WAIT_S, DAEMON, describe_stale
from vaultmem.vault.writer_lock import VaultLock as WriterLock
from vaultmem.vault.writes import remove_stale_temp_files

if TYPE_CHECKING:  # imported when the watcher starts, after the first answers (_start_watching)
    from vaultmem.daemon.scheduler import Job, Scheduler
    from vaultmem.daemon.watch import VaultWatcher

log = logging.getLogger("vaultmem.daemon.run")
DAEMON_FILE = "daemon.json"
# A thread waiting for the GIL gets it after at most this long (CPython's default: 5 ms). A
# request gives the GIL up at each file stat or catalog query and waits to get it back; beside
# pure-Python work (a large note's Markdown being parsed) a status call of 2 ms took ~900 ms
# at 5 ms and ~70 ms at 0.5 ms (docs/benchmarks.md, "A large note beside small edits"). Set
# once the index is open and the model loaded: before, the start's threads are long stretches of
# Python (imports) that handed the GIL back and forth 10x as often, for nothing (a slower start).
SWITCH_INTERVAL_S = 0.0005
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
TRIM_EVERY_S = 10.0  # freed heap goes back to the system at most this often after writes


class Daemon:
    """`params` are its values (`app.daemon_params`), `parts` what it uses, open
    (`App.daemon_parts`); the daemon closes them when it stops."""

    def __init__(self, params: DaemonParams, parts: DaemonParts) -> None:
        self.params = params
        self.parts = parts
        self.closed = False
        self.data_dir = params.data_dir
        self.lock = VaultLock(self.data_dir / "daemon.lock")
        self.writer = WriterLock(parts.root, DAEMON, self.data_dir,  # the vault's, per machine
                                 started=datetime.now(UTC))
        self.progress = IndexingStatus()
        self._parts_lock = threading.Lock()  # the watcher's and scheduler's start and stop
        self.started_at = datetime.now(UTC)
        self._stop = StopFlag()
        self._first_answers = FirstAnswers(parts, self._stop)  # daemon/first_answers.py
        self._signalled = 0  # the last SIGINT/SIGTERM received (stopped_by_signals)
        self._signal_wakeups: socket.socket | None = None  # their numbers, as they arrive
        self._threads: list[threading.Thread] = []
        self.failure: str | None = None  # why the daemon stopped itself (exit code 1)
        self._trimmer = Trimmer(TRIM_EVERY_S)
        # the requests' Api, which also runs the scheduled jobs that write (`Api.run_job`)
        self.api = parts.api(daemon_status=self.status, reindex=self.reindex)
        self.server: ApiServer | None = None
        self.watcher: VaultWatcher | None = None
        self.scheduler: Scheduler | None = None
        self._settled = AfterQuiet(QUIET_S, self._optimize_when_settled,
                                   name="vaultmem-settled")
        # a small pile of writes waits for a search, not a timer (index/upkeep.py)
        self._searched = AfterQuiet(AFTER_SEARCH_S, self._optimize_after_search,
                                    name="vaultmem-searched")
        parts.index.when_pile_searched(self._searched.poke)

    # lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        try:
            self.writer.acquire(wait_s=COMMAND_WAIT_S)  # a command's hold ends soon
            if self.writer.stale is not None:
                log.warning("%s", describe_stale(self.writer.stale, self.writer.path))
            self.lock.acquire()
        except BaseException:
            self.writer.release()
            self._close_app()
            raise
        tune_malloc()  # before the index's and the model's native threads start
        try:
            self._start_parts()
        except BaseException:
            self.stop()
            raise

    def _start_parts(self) -> None:
        params = self.params
        # from here the index opens and the model loads, beside the socket's start
        self._spawn("vaultmem-startup", self._startup)
        token = load_or_create_token(self.data_dir)
        self.server = ApiServer(self.api, token=token, host=params.host, port=params.port)
        self.server.start()
        self.writer.serving(self.server.port, self.server.url)
        self._write_daemon_file()
        self._settled.start()
        self._searched.start()
        log.info("serving %s at %s", self.parts.root, self.server.url)

    def _start_watching(self) -> bool:
        """Start the watcher, then the scheduler (on the start-up thread); False if the daemon
        stops first."""
        from vaultmem.daemon.scheduler import Scheduler
        from vaultmem.daemon.watch import VaultWatcher

        with self._parts_lock:
            parts, params = self.parts, self.params
            if self._stop.is_set():
                return False
            self.watcher = VaultWatcher(
                parts.root, parts.rules, self._on_batch, on_rescan=self._on_rescan,
                debounce_s=params.debounce_s,
            )
            self.watcher.start()
            # a long sync (a large note, the first index) takes the watcher's next batches
            # between its slices: the watcher's own thread may be the one running it
            parts.sync.let_in(self.watcher.take_due, self._after_batch)
            self.scheduler = Scheduler(self._jobs(), paused=self._writes_paused,
                                       max_pause_s=params.max_write_pause_s)
            self.scheduler.start()
        return True

    def stop(self) -> None:
        """Stop in reverse order; safe to call more than once and after a failed start."""
        self._stop.set()
        if not self.closed:  # first: the threads joined below may be running a sync
            self.parts.sync.stop()
        self._settled.stop()
        self._searched.stop()
        with self._parts_lock:
            if self.scheduler is not None:
                self.scheduler.stop()
                self.scheduler = None
            if self.watcher is not None:
                self.watcher.stop()
                self.watcher = None
        for thread in self._threads:
            thread.join(timeout=60)
        self._threads.clear()
        if not self.closed:
            self._flush_quietly()
        if self.server is not None:
            self.server.stop()
            self.server = None
        (self.data_dir / DAEMON_FILE).unlink(missing_ok=True)
        self._close_app()
        self.lock.release()
        self.writer.release()

    def _close_app(self) -> None:
        if not self.closed:
            self.parts.close()
            self.closed = True

    @contextlib.contextmanager
    def stopped_by_signals(self) -> Iterator[None]:
        """Within the block, SIGTERM and SIGINT stop the daemon (`serve_forever` returns).
        Entered before `start`: the socket answers before the start ends, and a service
        manager's stop sent then must stop the daemon, not kill it half started.

        The Python handler only records the signal. It runs in the main thread between two of
        its bytecodes, possibly while that thread holds a lock (the stop flag's in
        `StopFlag.wait`) or inside the handler of an earlier signal (Ctrl-C on `scripts/run |
        tee` sends SIGINT, and the script's trap SIGTERM, at once): a `StopFlag.set` or an
        `Event.set` there could wait forever for a lock held by the code it interrupted, and a
        log line for the logging lock. `serve_forever` acts on it, woken by the signal's
        number on `_signal_wakeups` (`stop_flag.signal_wakeups`)."""
        def on_signal(signum: int, frame: FrameType | None) -> None:
            self._signalled = signum

        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            with signal_wakeups() as self._signal_wakeups:
                yield
        finally:
            self._signal_wakeups = None
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def serve_forever(self) -> int:
        """Run until stopped (a signal, or a failure of the start-up thread), then stop; the
        process exit code. The main thread sleeps until then: a stop set by another thread
        wakes it, and so does a signal's number on `_signal_wakeups`, written by the
        interpreter's C-level handler (the Python one may wait until the thread wakes)."""
        try:
            while not self._signalled and not self._stop.is_set():
                self._signalled = (self._stop.wait(self._signal_wakeups, STOP_SIGNALS)
                                   or self._signalled)
            if self._signalled:
                log.info("signal %s: stopping", self._signalled)
        finally:
            self.stop()
        return 1 if self.failure else 0

    # work ---------------------------------------------------------------------------------

    def reindex(self, full: bool) -> ReindexResult:
        sync = self.parts.sync
        self.progress.running = True
        logged = ProgressLog(log, sync.state)  # progress lines, then the ready line

        def progress(done: int, total: int) -> None:
            logged(done, total)
            # each step frees what it wrote (the words pass's notes and rows, a batch's):
            # a first index runs for minutes without the watcher's batches that trim
            self._trimmer.maybe_trim()

        try:
            report = sync.reindex(full=full, progress=progress)
            logged.finished(report, self.parts.catalog.indexed_totals())
            self._settle_moves(report)
            # Rows written since the last optimise are missing from the full-text index and
            # searched by a scan; after a large indexing run that is up to half the vault.
            self._optimize(Occasion.INDEXED)
        finally:
            self.progress.running = False
        self.progress.last = finished = finished_report(report)
        return finished

    def flush(self) -> FlushReport:
        return self.parts.sync.flush_usage()

    def status(self) -> DaemonStatus:
        indexing = self.progress.view(self.parts.sync.indexing(),
                                      self.watcher.pending() if self.watcher else 0)
        return DaemonStatus(
            pid=os.getpid(), version=__version__,
            url=self.server.url if self.server else None, started=self.started_at,
            indexing=indexing, queue_depth=indexing.queued,
            pending_usage_writes=len(self.parts.journal),
            jobs=self.scheduler.status() if self.scheduler else [],
            model_loaded=bool(getattr(self.parts.embedder, "loaded", True)),
        )

    def _startup(self) -> None:
        """Open the index and load the model; let the searches that waited for them be
        answered; start the watcher and the scheduler; then remove temp files an interrupted
        write left behind, replay pending usage writes and reconcile the index with the vault
        (no change goes unseen: what changed before the watcher ran, the reconcile finds)."""
        first = self._first_answers
        self._spawn("vaultmem-model", first.load_model)
        if first.open_index():  # searchable now: the first search goes before the reconcile
            first.wait_for_model()
            first.let_go(self.server)
        # from here threads take turns often: a request is not held up behind a long sync
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        resume_gc()
        try:
            if not self._start_watching():
                return
        except Exception as exc:  # e.g. the system's limit of inotify watches is reached
            self.failure = self.progress.error = f"the watcher or the scheduler failed: {exc}"
            log.exception("%s; stopping", self.failure)
            self._stop.set()
            return
        try:
            for path in remove_stale_temp_files(self.parts.root, datetime.now(UTC)):
                log.info("removed %s, left by an interrupted write", path)
            self._flush_quietly()
            self.reindex(full=False)
        except Stopping as exc:
            log.info("start-up indexing ended early: %s", exc.message)
        except Exception as exc:
            log.exception("start-up indexing failed")
            self.progress.error = str(exc)

    def _on_batch(self, paths: set[str]) -> None:
        if not self._stop.is_set():
            with contextlib.suppress(Stopping):  # the next start's reconcile has these paths
                self._after_batch(self.parts.sync.sync_paths(paths))

    def _after_batch(self, report: SyncReport) -> None:
        self._settle_moves(report)
        self._trimmer.maybe_trim()  # every write, ours too, comes back here as a batch
        self._settled.poke()

    def _settle_moves(self, report: SyncReport) -> None:
        """Notes moved by hand out of (or into) the archive folder are restored (archived)."""
        if report.moves:
            for change in self.parts.restorer.settle_moves(report.moves, datetime.now(UTC)):
                log.info("%s moved by hand: now %s", change.path, change.status)

    def _on_rescan(self) -> None:
        if not self._stop.is_set():
            self.reindex(full=False)

    def _writes_paused(self) -> bool:
        """Scheduled note writes wait while a burst of external changes settles."""
        return self.watcher is not None and self.watcher.busy()

    def _jobs(self) -> list[Job]:
        from vaultmem.daemon.jobs import daemon_jobs

        return daemon_jobs(self.params, self.parts, self.api, flush=self.flush,
                           optimize=self._optimize)

    def _optimize_when_settled(self) -> None:
        if self.scheduler is not None and not self._stop.is_set():
            self.scheduler.run_now("optimize")  # shares the scheduled job's lock and status

    def _optimize_after_search(self) -> None:
        """Not during an indexing run: its own end optimises (its writes would wait)."""
        if not self._stop.is_set() and not self.progress.running:
            self._optimize(Occasion.SEARCHED)

    def _optimize(self, occasion: Occasion) -> str | None:
        """The index's upkeep policy decides; the reason it optimised, or None."""
        reason = self.parts.index().upkeep(occasion)
        if reason is not None:
            trim_heap()  # the compaction's buffers go back to the system
        return reason

    def _flush_quietly(self) -> None:
        try:
            report = self.flush()
            if report.retry:
                log.warning("usage writes kept for later: %s", report.retry)
        except Exception:
            log.exception("flush failed; pending usage writes are kept")

    def _spawn(self, name: str, target: Any) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _write_daemon_file(self) -> None:
        assert self.server is not None
        info = {"pid": os.getpid(), "host": self.params.host, "port": self.server.port,
                "url": self.server.url, "vault": str(self.parts.root),
                "started": self.started_at.isoformat(timespec="seconds")}
        tmp = self.data_dir / f"{DAEMON_FILE}.tmp"
        tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o600)
        tmp.replace(self.data_dir / DAEMON_FILE)

