"""Atomic, guarded file writes: the only way vaultmem changes bytes in the vault.

Every write goes to a unique temp file in the target's folder (named with TEMP_PREFIX so the
scanner and the watcher ignore it), is flushed and fsynced, and only then takes the note's
place with `os.replace` (or `os.link` when the target must not exist yet).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from vaultmem.errors import ConcurrentEdit, NoteError
from vaultmem.vault.rename import rename_noreplace

TEMP_PREFIX = ".vaultmem-tmp-"
TEMP_SUFFIX = ".tmp"
_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_temp_name(name: str) -> bool:
    """True for the names of vaultmem's own temp files."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def remove_stale_temp_files(root: Path, now: datetime, *, min_age_s: float = 60.0) -> list[str]:
    """Delete vaultmem's own temp files that an interrupted write left in the vault (a crash
    between writing the temp file and renaming it); returns their vault-relative paths.

    Only names made by `_write_temp` are touched, and only files last modified more than
    `min_age_s` before `now` (the caller's clock): a write in progress holds its temp file for
    milliseconds. Dot-folders are never written.
    """
    removed: list[str] = []
    horizon = now.timestamp() - min_age_s
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            path = Path(folder, name)
            try:
                if is_temp_name(name) and path.lstat().st_mtime < horizon:
                    path.unlink()
                    removed.append(path.relative_to(root).as_posix())
            except FileNotFoundError:
                continue
    return removed


def _fsync_dir(folder: Path) -> None:
    # Makes the rename durable. Some filesystems refuse to fsync a directory; the new content is
    # already in place then, so this stays best-effort rather than failing a completed write.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(folder: Path, data: bytes, mode: int | None) -> Path:
    """Write `data` to a new, fsynced temp file in `folder` and return its path."""
    for _ in range(100):
        temp = folder / f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
        except BaseException:
            _remove_quietly(temp)
            raise
        return temp
    raise FileExistsError(f"could not create a unique temp file in {folder}")


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _permission_bits(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _real_target(path: Path) -> Path:
    # Replacing a symlinked note must update the file it points to, not replace the link.
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _replace(path: Path, data: bytes, check: Callable[[Path], None] | None) -> os.stat_result:
    """Returns the written file's stat (taken from the temp file just before the rename, which
    keeps it: a later stat that differs means someone else wrote since)."""
    target = _real_target(path)
    temp = _write_temp(target.parent, data, _permission_bits(target))
    try:
        if check is not None:
            check(target)
        written = os.stat(temp)
        os.replace(temp, target)
    except BaseException:
        _remove_quietly(temp)
        raise
    _fsync_dir(target.parent)
    return written


def atomic_write(path: Path, data: bytes) -> os.stat_result:
    """Replace `path` with `data` atomically, keeping its permission bits."""
    return _replace(path, data, None)


def guarded_write(path: Path, data: bytes, expected_hash: str) -> os.stat_result:
    """Like atomic_write, but only if the file still has `expected_hash` (else ConcurrentEdit).

    The temp file is fully written before the check, so the window in which an edit can slip in
    unseen is only the time between re-reading the note and `os.replace` (microseconds). POSIX
    offers no compare-and-swap rename, so that residual window cannot be closed: an edit saved
    inside it would be replaced. Keeping the window this short is the mitigation.
    """

    def still_unchanged(target: Path) -> None:
        try:
            current = target.read_bytes()
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            raise ConcurrentEdit(f"{path} was deleted or moved since it was read") from None
        if not mode & stat.S_IWUSR:  # made read-only since it was read (root could write it)
            raise NoteError(f"{path} is read-only: vaultmem leaves it alone (make it "
                            "writable to let vaultmem update it)")
        if sha256_bytes(current) != expected_hash:
            raise ConcurrentEdit(f"{path} changed since it was read; nothing was written")

    return _replace(path, data, still_unchanged)


def create_new(path: Path, data: bytes) -> None:
    """Create `path` with `data`; FileExistsError if anything exists there. Never overwrites."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _write_temp(path.parent, data, None)
    try:
        os.link(temp, path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        _create_exclusive(path, data)
    finally:
        _remove_quietly(temp)
    _fsync_dir(path.parent)


def _create_exclusive(path: Path, data: bytes) -> None:
    """Fallback for filesystems without hard links: O_EXCL create, then write in place."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        _remove_quietly(path)
        raise


def move_file(src: Path, dst: Path) -> None:
    """Move `src` to `dst`; FileExistsError if `dst` exists, FileNotFoundError if `src` does
    not (nothing done either way). Never overwrites, and the file never ends with two names:
    one atomic no-replace rename where the system has it (vault/rename.py); elsewhere a hard
    link then an unlink, undone when the source vanished in between (its user renamed or
    deleted it: their action wins)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if _is_case_only_rename(src, dst):
        os.rename(src, dst)
    elif not rename_noreplace(src, dst):
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            _rename_if_absent(src, dst)
        else:
            _unlink_source(src, dst)
    _fsync_dir(dst.parent)
    if src.parent != dst.parent:
        _fsync_dir(src.parent)


def _unlink_source(src: Path, dst: Path) -> None:
    """The second half of a link-then-unlink move. When `src` is gone already, its user moved
    or deleted the note between the two calls: the link just made is removed again (else the
    note would live on under two names, or come back after its deletion)."""
    try:
        os.unlink(src)
    except FileNotFoundError:
        os.unlink(dst)
        raise


def _is_case_only_rename(src: Path, dst: Path) -> bool:
    """`Note.md` -> `note.md` on a case-insensitive filesystem: the same file, a new name."""
    if src.name == dst.name or src.name.lower() != dst.name.lower():
        return False
    try:
        return os.path.samefile(src, dst)
    except OSError:
        return False


def _rename_if_absent(src: Path, dst: Path) -> None:
    # Check-then-rename leaves a small race on filesystems without hard links; it is the best
    # that portable POSIX calls offer there.
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, "destination exists", str(dst))
    os.rename(src, dst)
