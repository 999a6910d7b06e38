"""`vaultmem run`: the long-lived process that serves one vault.

Start order: lock → journal → engine → socket (answers at once) → watcher → start-up
reconciliation in the background (the socket reports its progress) → scheduler. Stop order is
the reverse, with a last flush of pending usage writes. All index writes go through the
engine's sync lock, so the watcher, the scheduler and API calls never write concurrently.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from vaultmem import __version__
from vaultmem.api.auth import load_or_create_token
from vaultmem.api.ops import Api
from vaultmem.api.server import ApiServer
from vaultmem.app import App, build_app
from vaultmem.config import Settings
from vaultmem.daemon.lock import VaultLock
from vaultmem.daemon.native import Trimmer, trim_malloc, tune_malloc
from vaultmem.daemon.scheduler import AfterQuiet, Job, Scheduler
from vaultmem.daemon.watch import VaultWatcher
from vaultmem.engine.consolidation import Consolidator
from vaultmem.engine.indexer import SyncReport
from vaultmem.engine.journal import FlushReport, JournaledMemoryStore, UsageJournal
from vaultmem.engine.reconcile import Reconciler
from vaultmem.engine.restore import Restorer
from vaultmem.index.base import Embedder
from vaultmem.vault.writes import remove_stale_temp_files

log = logging.getLogger("vaultmem.daemon.run")
DAEMON_FILE = "daemon.json"
TRIM_EVERY_S = 10.0  # freed heap goes back to the system at most this often after writes
# Writes since the last optimise are searched without the full-text index (up to 1.7x slower
# after a burst of edits): optimise this long after a burst ends, not only every few minutes.
OPTIMIZE_AFTER_QUIET_S = 5.0


class Progress:
    """Start-up (and on-demand) indexing progress, for `status`."""

    def __init__(self) -> None:
        self.running = False
        self.done = 0
        self.total = 0
        self.last: dict[str, Any] | None = None
        self.error: str | None = None

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def to_json(self) -> dict[str, Any]:
        return {"running": self.running, "done": self.done, "total": self.total,
                "last": self.last, "error": self.error}


class Daemon:
    def __init__(self, settings: Settings, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.data_dir = settings.vault_data_dir()
        self._embedder = embedder
        self.lock = VaultLock(self.data_dir / "daemon.lock")
        self.progress = Progress()
        self.started_at = datetime.now(UTC)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._consolidated_at: str | None = None
        self._trimmer = Trimmer(TRIM_EVERY_S)
        self.app: App | None = None
        self.journal: UsageJournal | None = None
        self.server: ApiServer | None = None
        self.watcher: VaultWatcher | None = None
        self.scheduler: Scheduler | None = None
        self._settled = AfterQuiet(OPTIMIZE_AFTER_QUIET_S, self._optimize_when_settled,
                                   name="vaultmem-settled")

    # lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self.lock.acquire()
        tune_malloc()  # before the index's and the model's native threads start
        try:
            self._start_parts()
        except BaseException:
            self.stop()
            raise

    def _start_parts(self) -> None:
        self.journal = UsageJournal(self.data_dir / "usage.sqlite3")
        app = self.app = build_app(self.settings, embedder=self._embedder, journal=self.journal)
        consolidator = Consolidator(app.engine, app.lifecycle)
        api = Api(engine=app.engine, lifecycle=app.lifecycle, consolidator=consolidator,
                  daemon_status=self.status, reindex=self.reindex)
        token = load_or_create_token(self.data_dir)
        self.server = ApiServer(api, token=token, host=self.settings.host,
                                port=self.settings.port)
        self.server.start()
        self._write_daemon_file()
        self.watcher = VaultWatcher(
            app.root, app.engine.rules, self._on_batch, on_rescan=self._on_rescan,
            debounce_s=self.settings.debounce_ms / 1000,
        )
        self.watcher.start()
        self._spawn("vaultmem-startup", self._startup)
        self.scheduler = Scheduler(self._jobs(consolidator), paused=self._writes_paused,
                                   max_pause_s=self.settings.max_write_pause_seconds)
        self.scheduler.start()
        self._settled.start()
        log.info("serving %s at %s", app.root, self.server.url)

    def stop(self) -> None:
        """Stop in reverse order; safe to call more than once and after a failed start."""
        self._stop.set()
        self._settled.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
            self.scheduler = None
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        for thread in self._threads:
            thread.join(timeout=60)
        self._threads.clear()
        if self.app is not None:
            self._flush_quietly()
        if self.server is not None:
            self.server.stop()
            self.server = None
        (self.data_dir / DAEMON_FILE).unlink(missing_ok=True)
        if self.app is not None:
            self.app.close()
            self.app = None
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        self.lock.release()

    def serve_forever(self) -> int:
        """Run until SIGTERM/SIGINT; returns the process exit code."""
        def on_signal(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: stopping", signum)
            self._stop.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            while not self._stop.wait(timeout=3600):
                pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.stop()
        return 0

    # work ---------------------------------------------------------------------------------

    def reindex(self, full: bool) -> dict[str, Any]:
        assert self.app is not None
        self.progress.running = True
        try:
            report = self.app.engine.reindex(full=full, progress=self.progress.update)
            self._settle_moves(report)
            # Rows written since the last optimise are missing from the full-text index and
            # searched by a scan; after a large indexing run that is up to half the vault.
            self._optimize()
        finally:
            self.progress.running = False
        self.progress.last = _report_json(report)
        return self.progress.last

    def flush(self) -> FlushReport:
        assert self.app is not None
        store = self.app.engine.memories
        assert isinstance(store, JournaledMemoryStore)
        report = store.flush()
        if report.written:
            self.app.engine.sync_paths(report.written)  # our own write: metadata only
        return report

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "url": self.server.url if self.server else None,
            "started": self.started_at.isoformat(timespec="seconds"),
            "indexing": self.progress.to_json(),
            "queue_depth": self.watcher.pending() if self.watcher else 0,
            "pending_usage_writes": len(self.journal) if self.journal else 0,
            "jobs": self.scheduler.status() if self.scheduler else [],
            "model_loaded": bool(getattr(self.app.embedder, "loaded", True)) if self.app else False,
        }

    def _startup(self) -> None:
        """Remove temp files an interrupted write left behind, replay pending usage writes,
        reconcile the index with the vault, warm the model."""
        try:
            if self.app is not None:
                for path in remove_stale_temp_files(self.app.root):
                    log.info("removed %s, left by an interrupted write", path)
            self._flush_quietly()
            self.reindex(full=False)
            if not self._stop.is_set() and self.app is not None:
                _ = self.app.embedder.dim  # load the model now, not on the first search
        except Exception as exc:
            log.exception("start-up indexing failed")
            self.progress.error = str(exc)

    def _on_batch(self, paths: set[str]) -> None:
        if self.app is not None and not self._stop.is_set():
            self._settle_moves(self.app.engine.sync_paths(paths))
            self._trimmer.maybe_trim()  # every write, ours too, comes back here as a batch
            self._settled.poke()

    def _settle_moves(self, report: SyncReport) -> None:
        """Notes moved by hand out of (or into) the archive folder are restored (archived)."""
        if report.moves and self.app is not None:
            for change in Restorer(self.app.lifecycle).settle_moves(report.moves,
                                                                    datetime.now(UTC)):
                log.info("%s moved by hand: now %s", change["path"], change["status"])

    def _on_rescan(self) -> None:
        if self.app is not None and not self._stop.is_set():
            self.reindex(full=False)

    def _writes_paused(self) -> bool:
        """Scheduled note writes wait while a burst of external changes settles."""
        return self.watcher is not None and self.watcher.busy()

    def _jobs(self, consolidator: Consolidator) -> list[Job]:
        assert self.app is not None and self.journal is not None
        s, app, journal = self.settings, self.app, self.journal
        reconciler = Reconciler(app.engine, app.lifecycle.move_to_archive)  # sync conflicts
        return [
            Job("flush", s.flush_interval_seconds, self.flush, should_run=lambda: len(journal) > 0),
            Job("sweep", s.sweep_interval_minutes * 60,
                lambda: app.lifecycle.sweep(_now(), dry_run=False)),
            Job("reconcile", s.reconcile_interval_minutes * 60,
                lambda: reconciler.reconcile(_now(), apply=True),
                should_run=lambda: bool(app.catalog.duplicate_ids())),
            Job("consolidate", s.consolidate_interval_hours * 3600,
                lambda: self._consolidate(consolidator), should_run=self._memories_changed),
            Job("optimize", s.optimize_interval_minutes * 60, self._optimize,
                should_run=lambda: app.index.is_open, pausable=False),  # writes no note
        ]

    def _memories_changed(self) -> bool:
        """Consolidation only has new work when some memory changed since its last run."""
        assert self.app is not None
        return self.app.catalog.memory_fingerprint() != self._consolidated_at

    def _consolidate(self, consolidator: Consolidator) -> dict[str, Any]:
        assert self.app is not None
        result = consolidator.auto_merge(_now())
        self._consolidated_at = self.app.catalog.memory_fingerprint()
        return result

    def _optimize_when_settled(self) -> None:
        if self.scheduler is not None and not self._stop.is_set():
            self.scheduler.run_now("optimize")  # shares the scheduled job's lock and status

    def _optimize(self) -> None:
        assert self.app is not None
        index = self.app.index()
        if index.writes_since_optimize:  # the job runs every few minutes: skip when idle
            index.optimize()
            trim_malloc()  # the compaction's buffers go back to the system

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
        assert self.server is not None and self.app is not None
        info = {"pid": os.getpid(), "host": self.settings.host, "port": self.server.port,
                "url": self.server.url, "vault": str(self.app.root),
                "started": self.started_at.isoformat(timespec="seconds")}
        tmp = self.data_dir / f"{DAEMON_FILE}.tmp"
        tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o600)
        tmp.replace(self.data_dir / DAEMON_FILE)


def _now() -> datetime:
    """The scheduler is an edge: it reads the clock and hands `now` to the service."""
    return datetime.now(UTC)


def _report_json(report: SyncReport) -> dict[str, Any]:
    data = report.to_json()
    data["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    return data

