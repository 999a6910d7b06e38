"""One writer per vault on each machine: a lock file in the vault itself.

Whoever writes a vault (the daemon, or a command working in-process) holds an exclusive
`flock` on `<vault>/.vaultmem/writer-<machine>.lock` and writes who it is into the file (pid,
kind, data dir, port and address once serving, start time). Every other writer on the machine
sees it whatever its own data dir, and a command finds the serving daemon from the vault alone.

Why there: a dot-folder is ignored by Obsidian (it lists no hidden folder), by vaultmem's own
scan (vault/ignore.py) and, by default, by nothing else: a sync tool may carry the file to
another device, which is harmless, because the name is per machine (`machine_key`): each
device only ever reads and locks its own file, so two synced devices each run their one daemon
(the two-device design). `.obsidian/` was not used: it is Obsidian's settings folder, which
Obsidian Sync rewrites and which a vault may rename (`configDir`).

The file exists while its writer runs: a clean release removes it (and the folder when
empty), so commands leave no trace in the vault. A lock is never broken by hand. The kernel
releases a `flock` when its holder dies (kill -9, crash, reboot), so a dead holder's lock is
free at once; the file then still names it, and the next writer explains that (`Holder.stale`,
logged by the daemon) before taking it. A lock held by a live process is never taken. The
limits: `flock` is per machine (on a network filesystem shared by two machines at once each
machine runs its own writer, as two synced devices do), and a process that ignores the lock
(an older vaultmem) is not stopped by it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from vaultmem.errors import DaemonError

LOCK_FOLDER = ".vaultmem"
DAEMON = "daemon"
COMMAND = "command"
COMMAND_WAIT_S = 10.0  # a daemon starting, or a command, waits this long for a command
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}
_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def machine_key() -> str:
    """This machine's name in lock file names: its host name, and a short hash of its machine
    id where it has one (two machines with one host name stay apart)."""
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().split(".")[0].lower()).strip("-")
    for name in _MACHINE_ID_FILES:
        with contextlib.suppress(OSError):
            machine = Path(name).read_text(encoding="ascii").strip()
            if machine:
                return f"{host[:40] or 'host'}-{hashlib.sha256(machine.encode()).hexdigest()[:8]}"
    return host[:40] or "host"


def lock_path(root: Path) -> Path:
    return root / LOCK_FOLDER / f"writer-{machine_key()}.lock"


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a vault's lock on this machine, as its file says."""

    pid: int
    kind: str  # DAEMON or COMMAND
    data_dir: str
    host: str
    started: str
    port: int | None = None
    url: str | None = None

    def describe(self) -> str:
        what = "the vaultmem daemon" if self.kind == DAEMON else "a vaultmem command"
        where = f" at {self.url}" if self.url else ""
        return (f"{what} (pid {self.pid}{where}, port {self.port or 'not yet open'}, data dir "
                f"{self.data_dir}, started {self.started})")


class VaultBusy(DaemonError):
    """Another writer on this machine holds the vault's lock."""

    def __init__(self, message: str, holder: Holder | None) -> None:
        super().__init__(message)
        self.holder = holder


class VaultLock:
    """The writer lock of the vault at `root`, for a `kind` of writer using `data_dir`."""

    def __init__(self, root: Path, kind: str, data_dir: Path, *,
                 started: datetime | None = None) -> None:
        self.path = lock_path(root)
        self.root = root
        when = started.isoformat(timespec="seconds") if started is not None else ""
        self._me = Holder(pid=os.getpid(), kind=kind, data_dir=str(data_dir),
                          host=socket.gethostname(), started=when)
        self._fd: int | None = None
        self.stale: Holder | None = None  # the dead holder the file still named, if any
        self.unavailable: str | None = None  # why a read-only vault has no lock file

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_s: float = 0.0) -> None:
        """Take the lock; VaultBusy naming the holder when a daemon holds it, or a command for
        longer than `wait_s` (a command's hold is short: a daemon starting waits for it)."""
        deadline = time.monotonic() + wait_s
        while True:
            fd = self._open()
            if fd is None:
                return
            while not _try_lock(fd, fcntl.LOCK_EX):
                holder = read_holder(self.path)
                if time.monotonic() >= deadline or (holder and holder.kind == DAEMON):
                    os.close(fd)  # a daemon keeps it: no use waiting
                    raise VaultBusy(busy_message(self.root, self.path, holder), holder)
                time.sleep(0.05)
            if _same_file(fd, self.path):
                break
            os.close(fd)  # its holder removed that file as it released it: lock the new one
        self.stale = _read_fd(fd)
        self._fd = fd
        self._me = replace(self._me, pid=os.getpid())
        self._write()

    def _open(self) -> int | None:
        """The lock file, opened (made if missing); None in a vault no one can write."""
        while True:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except FileNotFoundError:
                continue  # the folder was removed by a writer releasing the lock just then
            except OSError as exc:
                if exc.errno not in _READ_ONLY:
                    raise
                self.unavailable = f"{self.path}: {exc.strerror}"  # no one can write here
                return None

    def serving(self, port: int, url: str) -> None:
        """The daemon's socket is open: the file says where (the CLI finds it from there)."""
        self._me = replace(self._me, port=port, url=url)
        if self._fd is not None:
            self._write()

    def release(self) -> None:
        if self._fd is None:
            return
        try:  # removed while still locked: a writer waiting on it then sees `_same_file` fail
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(OSError):  # nothing of vaultmem's is left in the vault
            self.path.parent.rmdir()

    @contextlib.contextmanager
    def held_while(self, wait_s: float = 0.0) -> Iterator[VaultLock]:
        self.acquire(wait_s)
        try:
            yield self
        finally:
            self.release()

    def _write(self) -> None:
        assert self._fd is not None
        data = (json.dumps(asdict(self._me), indent=2) + "\n").encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)


def busy_message(root: Path, path: Path, holder: Holder | None) -> str:
    who = holder.describe() if holder else "another process (its lock file names no one)"
    if holder is not None and not pid_alive(holder.pid):
        who += (f"; pid {holder.pid} is not running, yet the lock is held: a process it "
                "started keeps it open (stop that process)")
    return (f"the vault {root} already has a writer on this machine: {who}. One vaultmem "
            f"writer per vault per machine (lock {path}): stop it first, or use the CLI, "
            "which talks to the daemon. Another device syncing this vault runs its own "
            "daemon: the lock is per machine.")


def current_holder(root: Path) -> Holder | None:
    """The live holder of the vault's lock on this machine, or None when it is free."""
    path = lock_path(root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if _try_lock(fd, fcntl.LOCK_SH):
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        return _read_fd(fd) or Holder(pid=0, kind="", data_dir="", host="", started="")
    finally:
        os.close(fd)


def read_holder(path: Path) -> Holder | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def describe_stale(holder: Holder, path: Path) -> str:
    return (f"the last writer of this vault on this machine, {holder.describe()}, ended "
            f"without releasing its lock (killed, crashed or the machine stopped); the system "
            f"freed the lock when it died, so it is taken now ({path})")


def _read_fd(fd: int) -> Holder | None:
    """The holder a lock file names (None when empty or not ours)."""
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
        return None if not isinstance(data, dict) else Holder(**data)
    except (OSError, ValueError, TypeError):
        return None


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _try_lock(fd: int, kind: int, attempts: int = 5) -> bool:
    """A command checking `current_holder` takes a shared lock for microseconds: retry."""
    for attempt in range(attempts):
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < attempts:
                time.sleep(0.02)
    return False


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists on this machine (one owned by another user does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
