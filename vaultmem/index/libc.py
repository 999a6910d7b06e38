"""glibc, for the few calls the model runtime and the daemon make into it (memory only).

Linux only: elsewhere `glibc()` is None and the callers leave memory as the platform keeps it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

_USED = ("mallopt", "malloc_trim", "madvise")


@functools.cache
def glibc() -> ctypes.CDLL | None:
    """The C library, if it is glibc with every function used here."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    if not all(hasattr(libc, name) for name in _USED):
        return None
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.madvise.restype = ctypes.c_int
    return libc


def trim_heap() -> bool:
    """Return freed heap memory to the system; True if some was released."""
    libc = glibc()
    return libc is not None and bool(libc.malloc_trim(0))
