"""Turn user-supplied paths into vault-relative POSIX paths, refusing anything outside."""

from __future__ import annotations

import contextlib
import os
import posixpath
from pathlib import Path, PurePosixPath

from vaultmem.errors import InvalidInput, NotFound, PathOutsideVault


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _lexical_relative(root: Path, candidate: str) -> str | None:
    """`candidate` (absolute) relative to `root` without touching the filesystem, or None."""
    base = os.path.normpath(os.path.abspath(root))
    norm = os.path.normpath(candidate)
    if not _is_within(norm, base):
        return None
    return PurePosixPath(Path(os.path.relpath(norm, base))).as_posix()


def to_relative(root: Path, abs_path: Path) -> str:
    """The vault-relative POSIX path of `abs_path`; PathOutsideVault if it is not inside."""
    rel = _lexical_relative(root, os.path.abspath(abs_path))
    if rel is None:
        real_root = os.path.realpath(root)
        real = os.path.realpath(abs_path)
        if not _is_within(real, real_root):
            raise PathOutsideVault(f"{abs_path} is not inside the vault {root}")
        rel = PurePosixPath(Path(os.path.relpath(real, real_root))).as_posix()
    return rel


def _relative_from_user(root: Path, user_path: str) -> str:
    if not user_path or "\x00" in user_path:
        raise InvalidInput("a note path must be a non-empty string without NUL characters")
    if os.path.isabs(user_path):
        return to_relative(root, Path(user_path))
    rel = posixpath.normpath(user_path.replace(os.sep, "/"))
    if rel == ".." or rel.startswith("../") or rel.startswith("/"):
        raise PathOutsideVault(f"{user_path!r} points outside the vault")
    return rel


def resolve_folder(root: Path, user_path: str) -> tuple[str, Path]:
    """(vault-relative POSIX path, absolute path) of a folder that may not exist yet.

    The vault root itself is "" (empty string). Same refusals as resolve_in_vault.
    """
    rel = "." if user_path in ("", ".", "/") else _relative_from_user(root, user_path)
    absolute = Path(os.path.abspath(root)) / rel
    if not _is_within(os.path.realpath(absolute), os.path.realpath(root)):
        raise PathOutsideVault(f"{user_path!r} resolves (through a symlink) outside the vault")
    return ("" if rel == "." else rel), Path(os.path.normpath(absolute))


def _pick_existing(root: Path, rel: str) -> str | None:
    """`rel` itself if it is a file, else `rel.md` if that exists, else an existing `rel`."""
    candidates = [rel] if rel.lower().endswith(".md") else [rel, rel + ".md"]
    for candidate in candidates:
        with contextlib.suppress(OSError):  # e.g. a name longer than the file system allows
            if (root / candidate).is_file():
                return candidate
    for candidate in candidates:
        if os.path.lexists(root / candidate):
            return candidate
    return None


def resolve_in_vault(root: Path, user_path: str, *, must_exist: bool = True) -> tuple[str, Path]:
    """(vault-relative POSIX path, absolute path) for a path given by a user or a client.

    Accepts a vault-relative path (with or without `.md`) or an absolute path inside the vault.
    Refuses `..` escapes, absolute paths outside and symlinks (the file or any parent folder)
    that resolve outside the vault. With must_exist=False a missing path is returned as given
    (no `.md` is added), after the same checks.
    """
    rel = _relative_from_user(root, user_path)
    if rel == ".":
        raise InvalidInput("the vault root is not a note")
    found = _pick_existing(root, rel)
    if found is None and must_exist:
        raise NotFound(f"no note {user_path!r} in the vault")
    rel = found or rel
    absolute = Path(os.path.abspath(root)) / rel
    if not _is_within(os.path.realpath(absolute), os.path.realpath(root)):
        raise PathOutsideVault(f"{user_path!r} resolves (through a symlink) outside the vault")
    return rel, absolute


def opened_inside(fd: int, absolute: str | Path, real_root: str) -> bool:
    """Whether the file open as `fd` (opened at `absolute`) is inside the vault whose real path
    is `real_root`: by the real path of the file opened where the system gives it (Linux's
    /proc/self/fd: one call, and no file swapped in between a check and the open), else by
    resolving `absolute` (each folder of it, as `resolve_in_vault`)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = os.path.realpath(absolute)
    return _is_within(real, real_root)
