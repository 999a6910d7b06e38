"""Watch the vault for note changes and hand them over in debounced, bounded batches.

One watchdog observer watches the vault root recursively. Its events become vault-relative
POSIX paths of notes (`*.md`, any case) that the ignore rules let through; a worker thread
collects them and calls `on_batch` once the vault has been quiet for `debounce_s`, or once
`max_wait_s` has passed since the oldest queued path (a `debounce.Burst`), in chunks of at
most `max_batch` paths. The consumer re-stats every path it gets: a delivered path may have
been created, changed, deleted or moved away.

When the watcher cannot know which notes changed (a folder was deleted or moved out of the
vault, the kernel dropped events, the vault root itself went away) it calls `on_rescan`
instead, on the same worker thread, so the consumer can sync everything.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from types import TracebackType
from typing import Self

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
    FileSystemMovedEvent,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from vaultmem.daemon.debounce import Burst, wait_due
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.writes import is_temp_name

log = logging.getLogger(__name__)

BatchCallback = Callable[[set[str]], None]
RescanCallback = Callable[[], None]

# watchdog recovers from a kernel queue overflow by itself but only says so in its log; these
# are the loggers (and the words) through which the watcher learns that events were lost.
_OVERFLOW_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")
_OVERFLOW_WORD = "overflow"
# watchdog (and `_walk_files`) walk folders with os.walk, which recurses once per level; a vault
# nested about 1000 folders deep would exceed Python's default limit and stop the watcher.
# Absolute paths (PATH_MAX 4096) cap the depth near 2048 levels.
_WALK_RECURSION_LIMIT = 6_000

# Only changes. Opens, closes and attribute changes are left out: reading a note (as the
# indexer does after every batch) must not queue it again.
_WANTED_EVENTS: tuple[type[FileSystemEvent], ...] = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
)


class VaultWatcher:
    """Turns file-system events below `root` into batches of changed note paths."""

    def __init__(
        self,
        root: Path,
        rules: IgnoreRules,
        on_batch: BatchCallback,
        *,
        on_rescan: RescanCallback | None = None,
        debounce_s: float,
        max_batch: int = 500,
        max_wait_s: float = 2.0,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.root = Path(os.path.abspath(root))
        self._root_str = str(self.root)
        self._rules = rules
        self._on_batch = on_batch
        self._on_rescan = on_rescan
        self._burst = Burst(debounce_s, max_wait_s)  # raises ValueError when negative
        self._max_batch = max_batch
        self._cond = threading.Condition()
        self._queue: dict[str, None] = {}  # insertion-ordered set of pending paths
        self._rescan_wanted = False
        self._delivering_since: float | None = None  # monotonic: a batch is being delivered
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._worker: threading.Thread | None = None
        self._overflow_hook = _OverflowHook(self._request_rescan)

    # lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching. Raises OSError when the vault cannot be watched."""
        if self._worker is not None:
            raise RuntimeError("the watcher was already started")
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _WALK_RECURSION_LIMIT))
        self._worker = threading.Thread(target=self._run, name="vaultmem-watch", daemon=True)
        self._worker.start()
        for name in _OVERFLOW_LOGGERS:
            logging.getLogger(name).addHandler(self._overflow_hook)
        try:
            observer = Observer()
            observer.name = "vaultmem-watch-observer"
            observer.schedule(
                _Handler(self), self._root_str, recursive=True, event_filter=list(_WANTED_EVENTS)
            )
            self._observer = observer
            observer.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop watching and join the threads; undelivered paths are dropped. Idempotent."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for name in _OVERFLOW_LOGGERS:
            logging.getLogger(name).removeHandler(self._overflow_hook)
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            if observer.is_alive():
                observer.join()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread() and worker.is_alive():
            worker.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # state --------------------------------------------------------------------------------

    def pending(self) -> int:
        """How many paths are queued and not yet handed to `on_batch`."""
        with self._cond:
            return len(self._queue)

    def busy(self, quiet_s: float = 2.0) -> bool:
        """True while notes changed within `quiet_s`, a batch is queued, or one has been
        delivered for less than `quiet_s`: a longer delivery is indexing (a large note
        embedded for minutes), not notes changing, and must not hold scheduled writes back."""
        now = time.monotonic()
        with self._cond:
            if self._queue or self._rescan_wanted:
                return True
            since = self._delivering_since
            last = self._burst.last_at
        return ((since is not None and now - since < quiet_s)
                or (last is not None and now - last < quiet_s))

    def take_due(self, exclude: frozenset[str] = frozenset()) -> set[str]:
        """Queued paths, not in `exclude`, of a burst that is due, taken out of the queue now
        (at most `max_batch`): for a consumer that, busy with a long batch, takes the next
        changes in between its own work instead of after it. Empty when nothing is due or a
        rescan is wanted (the worker does that)."""
        with self._cond:
            due = self._burst.due_in(time.monotonic())
            if self._rescan_wanted or due is None or due > 0:
                return set()
            taken = [path for path in self._queue if path not in exclude][: self._max_batch]
            for path in taken:
                del self._queue[path]
            if not self._queue:
                self._burst.end()
            return set(taken)

    # events (observer thread) -------------------------------------------------------------

    def _handle(self, event: FileSystemEvent) -> None:
        if not isinstance(event, _WANTED_EVENTS):
            return
        if self._folder_vanished(event):
            log.info("folder deleted or moved out of the vault: %s", event.src_path)
            self._request_rescan()
            return
        self._queue_paths(set(self._note_paths(event)))

    def _folder_vanished(self, event: FileSystemEvent) -> bool:
        """A folder left the vault: which notes were in it is no longer knowable."""
        if isinstance(event, DirDeletedEvent):
            return self._relative(event.src_path) is not None or self._is_root(event.src_path)
        if isinstance(event, DirMovedEvent):
            return self._relative(event.dest_path) is None
        return False

    def _note_paths(self, event: FileSystemEvent) -> Iterator[str]:
        if isinstance(event, DirMovedEvent):
            yield from self._moved_folder_notes(event.src_path, event.dest_path)
        elif isinstance(event, DirCreatedEvent):
            yield from self._moved_folder_notes(None, event.src_path)
        elif not event.is_directory:
            yield from self._as_notes(event.src_path)
            if isinstance(event, FileSystemMovedEvent):
                yield from self._as_notes(event.dest_path)

    def _as_notes(self, raw: bytes | str) -> Iterator[str]:
        rel = self._relative(raw)
        if rel is not None and self._is_note(rel):
            yield rel

    def _moved_folder_notes(self, src: bytes | str | None, dest: bytes | str) -> Iterator[str]:
        """Notes now below `dest` and, derived from them, their former paths below `src`."""
        dest_rel = self._relative(dest)
        src_rel = self._relative(src) if src is not None else None
        if dest_rel is None or _ignored_both(self._rules, "", dest_rel, src_rel):
            return
        if os.path.islink(self.root / dest_rel):
            return  # a symlinked folder: never walked (it may lead out of the vault, or loop)
        for rel_in_folder in _walk_files(self.root / dest_rel, self._rules, dest_rel, src_rel):
            for base in (dest_rel, src_rel):
                if base is not None and self._is_note(f"{base}/{rel_in_folder}"):
                    yield f"{base}/{rel_in_folder}"

    def _relative(self, raw: bytes | str) -> str | None:
        path = os.fsdecode(raw)
        prefix = self._root_str.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return None
        return PurePath(path[len(prefix) :]).as_posix()

    def _is_root(self, raw: bytes | str) -> bool:
        return os.fsdecode(raw).rstrip(os.sep) == self._root_str.rstrip(os.sep)

    def _is_note(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if not name.lower().endswith(".md") or is_temp_name(name):
            return False
        return self._rules.reason(rel) is None

    def _queue_paths(self, paths: set[str]) -> None:
        if not paths:
            return
        with self._cond:
            self._burst.add()
            self._queue.update(dict.fromkeys(paths))
            self._cond.notify_all()

    def _request_rescan(self) -> None:
        with self._cond:
            self._burst.add()
            self._rescan_wanted = True
            self._cond.notify_all()

    # delivery (worker thread) -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                work = self._next_work()
                if work is None:
                    return
                self._delivering_since = time.monotonic()
            try:
                self._deliver(work)
            finally:
                with self._cond:
                    self._delivering_since = None

    def _next_work(self) -> set[str] | None:
        """Wait (holding the condition) until something is due; None once stopping."""
        if not wait_due(self._cond, self._burst, lambda: self._stopping):
            return None
        return self._take_due()

    def _take_due(self) -> set[str]:
        """The next chunk to deliver; an empty set stands for a rescan."""
        if self._rescan_wanted and self._on_rescan is not None:
            self._rescan_wanted = False
            self._queue.clear()  # a full sync covers them
            self._burst.end()
            return set()
        if self._rescan_wanted:
            log.warning("changes below %s may have been missed (no rescan handler)", self.root)
            self._rescan_wanted = False
        chunk = list(self._queue)[: self._max_batch]
        for path in chunk:
            del self._queue[path]
        if not self._queue:
            self._burst.end()
        return set(chunk)

    def _deliver(self, work: set[str]) -> None:
        try:
            if work:
                self._on_batch(work)
            elif self._on_rescan is not None:
                self._on_rescan()
        except Exception:
            what = f"a batch of {len(work)} paths" if work else "a rescan"
            log.exception("the watcher's consumer failed on %s", what)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: VaultWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        # An exception here would end watchdog's dispatch thread: never let one escape.
        try:
            self._watcher._handle(event)
        except Exception:
            log.exception("cannot handle %r; asking for a rescan", event)
            self._watcher._request_rescan()


class _OverflowHook(logging.Handler):
    """Calls `on_overflow` when watchdog logs that the kernel dropped events."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(level=logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if _OVERFLOW_WORD in record.getMessage().lower():
            self._on_overflow()


def _walk_files(
    folder: Path, rules: IgnoreRules, dest_rel: str, src_rel: str | None
) -> Iterator[str]:
    """Files below `folder` as POSIX paths relative to it, skipping folders ignored on both
    sides of the move (`dest_rel`, `src_rel` are the folder's vault-relative paths)."""
    for current, dirs, files in os.walk(folder):
        inner = PurePath(os.path.relpath(current, folder)).as_posix()
        inner = "" if inner == "." else inner + "/"
        dirs[:] = [d for d in dirs if not _ignored_both(rules, inner + d, dest_rel, src_rel)]
        for name in files:
            yield inner + name


def _ignored_both(rules: IgnoreRules, inner: str, dest_rel: str, src_rel: str | None) -> bool:
    for base in (dest_rel, src_rel):
        folder = f"{base}/{inner}".rstrip("/") if base is not None else None
        if folder is not None and rules.reason(folder, is_dir=True) is None:
            return False
    return True
