"""A rename that never replaces its target, in one system call where the system has one.

Linux's `renameat2(..., RENAME_NOREPLACE)` (glibc 2.28+, ext4, btrfs, xfs, tmpfs, ...) moves a
file to a name that must not exist, atomically: there is no moment when the note has two names
or none, so a user renaming the note at the same instant either renames it before the move
(the move finds no note) or after (they rename the moved note). `rename_noreplace` returns False
where that call is missing or the filesystem refuses the flag; the caller then falls back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from pathlib import Path

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
# the call is missing, or the filesystem does not take the flag (FUSE, network, some overlays)
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM}


def _load() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                     ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


_renameat2 = _load()


def rename_noreplace(src: Path, dst: Path) -> bool:
    """Rename `src` to `dst` atomically; FileExistsError when `dst` exists, FileNotFoundError
    when `src` does not (nothing done either way). False when this system cannot (nothing
    done: fall back)."""
    call = _renameat2
    if call is None:
        return False
    result = call(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst),  # type: ignore[operator]
                  _RENAME_NOREPLACE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(src), None, str(dst))
