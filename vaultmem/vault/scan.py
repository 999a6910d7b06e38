"""Walk the vault and list its notes, never leaving it and never looping."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import NotFound
from vaultmem.vault.ignore import IgnoreRules

UNREADABLE = "unreadable"
SYMLINK_OUTSIDE = "symlink pointing outside the vault"
SYMLINK_LOOP = "symlink loop"
TOO_LARGE = "too large"
NOT_REGULAR = "not a regular file"
DUPLICATE_FOLDER = "symlink to a folder already scanned"
BAD_NAME = "name is not valid UTF-8"


@dataclass(frozen=True)
class FileStat:
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def is_note_name(name: str) -> bool:
    return name.lower().endswith(".md")


def has_bad_name(rel: str) -> bool:
    """True when a path holds bytes that are not UTF-8 (decoded as lone surrogates): it could
    be neither stored nor shown, so it is reported under `printable_path` instead."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def printable_path(rel: str) -> str:
    """`rel` with undecodable bytes shown as backslash escapes."""
    return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass
class _Walk:
    real_root: str
    rules: IgnoreRules
    result: ScanResult = field(default_factory=ScanResult)
    visited: set[tuple[int, int]] = field(default_factory=set)
    # Symlinked folders are walked after all real ones, so a folder is listed under its own
    # path rather than under a link that happens to sort first.
    linked: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, rel: str, reason: str) -> None:
        self.result.skipped.append((rel, reason))

    def folder(self, rel: str, path: str) -> list[tuple[str, str]]:
        """Note files recorded from one folder; returns its sub-folders to walk."""
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            self.skip(rel or ".", UNREADABLE)
            return []
        subfolders: list[tuple[str, str]] = []
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            sub = self.entry(child, entry)
            if sub is not None:
                subfolders.append((child, sub))
        return subfolders

    def entry(self, rel: str, entry: os.DirEntry[str]) -> str | None:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if self.rules.reason(rel, is_dir=is_dir) is not None:
            return None
        if not is_dir and not is_note_name(entry.name):
            return None  # not a note, not worth reporting
        if has_bad_name(entry.name):
            self.skip(printable_path(rel), BAD_NAME)
            return None
        is_link = entry.is_symlink()
        if is_link and not self.symlink_ok(rel, entry.path):
            return None
        if is_dir and is_link:
            self.linked.append((rel, entry.path))
            return None
        if is_dir:
            return entry.path if self.first_visit(rel, entry.path) else None
        self.note(rel, entry.path)
        return None

    def symlink_ok(self, rel: str, path: str) -> bool:
        try:
            os.stat(path)
        except OSError as exc:
            self.skip(rel, SYMLINK_LOOP if exc.errno == errno.ELOOP else UNREADABLE)
            return False
        if not _inside(os.path.realpath(path), self.real_root):
            self.skip(rel, SYMLINK_OUTSIDE)
            return False
        return True

    def first_visit(self, rel: str, path: str) -> bool:
        try:
            info = os.stat(path)
        except OSError:
            self.skip(rel, UNREADABLE)
            return False
        identity = (info.st_dev, info.st_ino)
        if identity in self.visited:
            real = os.path.realpath(path)
            ancestor = _inside(os.path.realpath(os.path.dirname(path)), real)
            self.skip(rel, SYMLINK_LOOP if ancestor else DUPLICATE_FOLDER)
            return False
        self.visited.add(identity)
        return True

    def note(self, rel: str, path: str) -> None:
        try:
            info = os.stat(path)
        except OSError:
            self.skip(rel, UNREADABLE)
            return
        if not stat.S_ISREG(info.st_mode):
            self.skip(rel, NOT_REGULAR)
        elif self.rules.max_note_bytes is not None and info.st_size > self.rules.max_note_bytes:
            self.skip(rel, TOO_LARGE)
        elif not os.access(path, os.R_OK):
            self.skip(rel, UNREADABLE)
        else:
            self.result.files[rel] = FileStat(info.st_mtime_ns, info.st_size)


def scan_vault(root: Path, rules: IgnoreRules) -> ScanResult:
    """Every note under `root` that `rules` do not ignore, with mtime and size (a file larger
    than the rules' `max_note_bytes` is reported as skipped)."""
    if not root.is_dir():
        raise NotFound(f"the vault folder {root} does not exist")
    real_root = os.path.realpath(root)
    walk = _Walk(real_root, rules)
    walk.visited.add((os.stat(real_root).st_dev, os.stat(real_root).st_ino))
    pending = [("", str(root))]
    while pending or walk.linked:
        if not pending:
            rel, path = walk.linked.pop(0)
            if walk.first_visit(rel, path):
                pending.append((rel, path))
            continue
        rel, path = pending.pop()
        pending.extend(reversed(walk.folder(rel, path)))
    return walk.result


def scan_one(root: Path, rel: str, rules: IgnoreRules) -> ScanResult:
    """One vault path as the full scan would list or report it (for the watcher's batches).
    Folders are left out: the scan walks them rather than listing them."""
    walk = _Walk(os.path.realpath(root), rules)
    path = os.path.join(root, rel)
    if rules.reason(rel) is not None or not is_note_name(rel) or not os.path.lexists(path):
        return walk.result
    real_parent = os.path.normpath(os.path.join(walk.real_root, os.path.dirname(rel)))
    if os.path.realpath(os.path.dirname(path)) != real_parent:
        return walk.result  # below a symlinked folder: the scan reports the link, not its content
    if has_bad_name(rel):
        walk.skip(printable_path(rel), BAD_NAME)
    elif os.path.islink(path) and not walk.symlink_ok(rel, path):
        return walk.result
    elif not os.path.isdir(path):
        walk.note(rel, path)
    return walk.result
