"""Keep a long-running daemon's native memory flat (glibc only; elsewhere these do nothing).

LanceDB and torch run many native threads. glibc gives threads their own malloc arenas (up to
8 per core) and seldom hands freed memory back, so the daemon's RSS kept creeping up with
every write although nothing leaked. Fewer arenas and an occasional trim keep it level.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import sys

log = logging.getLogger("vaultmem.native")

_M_ARENA_MAX = -8  # mallopt parameter, from glibc's malloc.h
DAEMON_ARENAS = 2


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_malloc_arenas(arenas: int = DAEMON_ARENAS) -> bool:
    """Cap glibc's malloc arenas for threads started from now on; True if it took effect."""
    libc = _libc()
    if libc is None:
        return False
    done = bool(libc.mallopt(_M_ARENA_MAX, arenas))
    log.debug("malloc arenas capped at %d: %s", arenas, done)
    return done


def trim_malloc() -> bool:
    """Return freed heap memory to the system; True if some was released."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))
