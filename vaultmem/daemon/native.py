"""Keep a long-running daemon's native memory flat (glibc only; elsewhere these do nothing).

LanceDB and torch run many native threads. glibc gives threads their own malloc arenas (up to
8 per core) and seldom hands freed memory back, so the daemon's RSS kept creeping up with
every write although nothing leaked. Fewer arenas and a trim after the daemon's writes (at
most every few seconds: a trim walks every arena under its lock) keep it level.

glibc also raises its mmap threshold (up to 32 MiB) each time a large block is freed, after
which torch's multi-megabyte activations come from the heap, where small long-lived blocks
pin them: with the real model the daemon grew ~0.4 MB per edit. A fixed threshold keeps large
blocks in their own mappings, returned to the system when freed (+0.04 MB per edit).

And numpy's BLAS (OpenBLAS, in numpy's wheels) keeps its worker thread spinning for ~0.1 s
after each call it splits: after every search's vector scoring a whole core of the two kept
burning while the next query's full-text search and embedding needed it (48 ms of CPU in the
50 ms after a 10k-row scoring). The daemon runs it on the calling thread (`quiet_blas`).

Its threads carry their names in the kernel too (`name_os_threads`), so `top -H` and
/proc/<pid>/task/*/comm say which thread uses the CPU (bench/idle.py reads them).
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from vaultmem.index.libc import glibc, trim_heap

log = logging.getLogger("vaultmem.daemon.native")

_M_ARENA_MAX = -8  # mallopt parameters, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
DAEMON_ARENAS = 2
DAEMON_MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, kept fixed
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
_gc_paused = False  # whether pause_gc stopped the collector
_PR_SET_NAME = 15  # prctl option, from linux/prctl.h
_OS_NAME_BYTES = 15  # the kernel keeps 16 bytes, the last a NUL
_OUR_PREFIX = "vaultmem-"


def quiet_blas() -> None:
    """numpy's BLAS on the calling thread only (10k-row scoring ~1.3 ms, not ~0.6, and no
    thread spinning after it). OpenBLAS reads this when numpy is imported, so call it before;
    a value the user set is kept."""
    if "numpy" in sys.modules:
        log.debug("numpy is already imported: its BLAS threads are as they were")
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def pause_gc() -> None:
    """Stop the cyclic garbage collector while the daemon starts, until `resume_gc`.

    The start is mostly imports and the index's first load, which make ~130k objects that live
    as long as the process and hold no garbage: the collector walked them again and again for
    nothing (~8 % of the imports' time)."""
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Start the collector `pause_gc` stopped, with what the start made kept out of its walks
    for good (`gc.freeze`): a later full collection walks only what was made after it. Does
    nothing if `pause_gc` did not stop it."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


def tune_malloc(
    arenas: int = DAEMON_ARENAS, mmap_threshold: int = DAEMON_MMAP_THRESHOLD
) -> bool:
    """Cap glibc's malloc arenas (for threads started from now on) and fix its mmap
    threshold; True if both took effect."""
    libc = glibc()
    if libc is None:
        return False
    capped = bool(libc.mallopt(_M_ARENA_MAX, arenas))
    fixed = bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold))
    log.debug("malloc arenas capped at %d: %s; mmap threshold %d: %s",
              arenas, capped, mmap_threshold, fixed)
    return capped and fixed


class Trimmer:
    """`trim_heap` for callers that may ask after every small write: it trims at most once
    per `min_interval_s`, so a busy daemon trims a few times a minute, not per request."""

    def __init__(self, min_interval_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 trim: Callable[[], bool] = trim_heap) -> None:
        self.min_interval_s = min_interval_s
        self._clock = clock
        self._trim = trim
        self._lock = threading.Lock()
        self._last: float | None = None

    def maybe_trim(self) -> bool:
        """Trim unless the last trim was under `min_interval_s` ago; True if it trimmed."""
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last < self.min_interval_s:
                return False
            self._last = now
        self._trim()
        return True


def name_os_threads() -> bool:
    """Threads started from now on (ours, the watcher's, the scheduler's) give the kernel
    their Python name, without the "vaultmem-" prefix and cut to 15 bytes; False where that
    cannot be done (not glibc). Each new thread names itself on its first Python call, then
    removes the hook (`threading.setprofile`: nothing runs after that first call)."""
    libc = glibc()
    if libc is None:
        return False

    def name_this_thread(frame: object, event: str, arg: object) -> None:
        sys.setprofile(None)
        libc.prctl(_PR_SET_NAME, os_thread_name(threading.current_thread().name), 0, 0, 0)

    threading.setprofile(name_this_thread)
    return True


def os_thread_name(name: str) -> bytes:
    """The kernel's name for a thread named `name` (at most 15 bytes of UTF-8)."""
    short = name.removeprefix(_OUR_PREFIX).encode("utf-8")[:_OS_NAME_BYTES]
    return short.decode("utf-8", "ignore").encode("utf-8")
