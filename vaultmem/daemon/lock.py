"""One daemon per vault: an advisory lock on a file in the vault's data dir.

`flock` is released by the kernel when the holder dies, so a stale lock (kill -9, crash,
reboot) is taken over by the next start without any clean-up.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from vaultmem.errors import DaemonError


class VaultLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the data dir: private
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _try_lock(fd):
            os.close(fd)
            pid = read_pid(self.path)
            who = f"process {pid}" if pid else "another process"
            raise DaemonError(
                f"this vault is already served by {who} (lock {self.path}); "
                "stop it first, or use the CLI, which talks to it"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> VaultLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _try_lock(fd: int, attempts: int = 5) -> bool:
    """A CLI checking `is_held` takes a shared lock for microseconds: retry briefly."""
    for attempt in range(attempts):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < attempts:
                time.sleep(0.05)
    return False


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def is_held(path: Path) -> bool:
    """True when a live process holds the lock (checked without taking it for long)."""
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
