"""Which vault paths are not notes: Obsidian's own ignore filters, .vaultmemignore and more."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.vault.writes import is_temp_name

if TYPE_CHECKING:
    import pathspec

IGNORE_FILE = ".vaultmemignore"
_TEMP_SUFFIXES = (".swp", ".swo", ".swx", "~", ".tmp", ".crdownload")
_ALWAYS_IGNORED_DIRS = {"node_modules": "node_modules"}


@dataclass(frozen=True)
class _UserFilter:
    raw: str
    regex: re.Pattern[str] | None  # None: a plain path prefix


@dataclass(frozen=True)
class IgnoreRules:
    """Decides whether a vault-relative POSIX path is ignored, and says why."""

    config_dir: str = ".obsidian"
    folders: tuple[str, ...] = ()
    user_filters: tuple[_UserFilter, ...] = ()
    spec: pathspec.GitIgnoreSpec | None = None
    problems: tuple[str, ...] = field(default=())
    #: Larger files are reported, not read (the `max_note_bytes` setting; None: no limit).
    max_note_bytes: int | None = None

    @classmethod
    def from_vault(
        cls, root: Path, *, extra_folders: Sequence[str] = (), config_dir: str = ".obsidian",
        max_note_bytes: int | None = None,
    ) -> IgnoreRules:
        problems: list[str] = []
        filters = _read_user_filters(root / config_dir / "app.json", problems)
        spec = _read_ignore_file(root / IGNORE_FILE, problems)
        folders = tuple(f.strip("/") for f in extra_folders if f.strip("/"))
        return cls(config_dir, folders, filters, spec, tuple(problems), max_note_bytes)

    def reason(self, path: str, *, is_dir: bool = False) -> str | None:
        """None when `path` is not ignored, else a short human-readable reason."""
        path = path.strip("/").removeprefix("./")
        if not path or path == ".":
            return None
        return (
            self._builtin_reason(path, is_dir)
            or self._folder_reason(path)
            or self._user_filter_reason(path, is_dir)
            or self._ignore_file_reason(path, is_dir)
        )

    def _builtin_reason(self, path: str, is_dir: bool) -> str | None:
        parts = path.split("/")
        folders, name = (parts, "") if is_dir else (parts[:-1], parts[-1])
        for part in folders:
            if part == self.config_dir:
                return "obsidian config"
            if part.startswith("."):
                return "dot-folder"
            if part in _ALWAYS_IGNORED_DIRS:
                return _ALWAYS_IGNORED_DIRS[part]
        if not name:
            return None
        if is_temp_name(name):
            return "vaultmem temp file"
        if name.endswith(_TEMP_SUFFIXES) or name.startswith(".#"):
            return "editor temp file"
        if name.startswith("."):
            return "dotfile"
        return None

    def _folder_reason(self, path: str) -> str | None:
        for folder in self.folders:
            if path == folder or path.startswith(folder + "/"):
                return f"configured folder: {folder}"
        return None

    def _user_filter_reason(self, path: str, is_dir: bool) -> str | None:
        probes = (path, path + "/") if is_dir else (path,)
        for rule in self.user_filters:
            for probe in probes:
                hit = rule.regex.search(probe) if rule.regex else probe.startswith(rule.raw)
                if hit:
                    return f"userIgnoreFilters: {rule.raw}"
        return None

    def _ignore_file_reason(self, path: str, is_dir: bool) -> str | None:
        if self.spec is None:
            return None
        result = self.spec.check_file(path + "/" if is_dir else path)
        if not result.include or result.index is None:
            return None
        pattern = self.spec.patterns[result.index]
        return f"{IGNORE_FILE}: {getattr(pattern, 'pattern', pattern)}"


def _read_user_filters(app_json: Path, problems: list[str]) -> tuple[_UserFilter, ...]:
    try:
        data = json.loads(app_json.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{app_json.name}: cannot read it ({exc}); its ignore filters are unused")
        return ()
    raw = data.get("userIgnoreFilters", []) if isinstance(data, dict) else None
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        problems.append(f"{app_json.name}: userIgnoreFilters is not a list; ignored")
        return ()
    filters: list[_UserFilter] = []
    for entry in raw:
        parsed = _parse_filter(entry, problems)
        if parsed is not None:
            filters.append(parsed)
    return tuple(filters)


def _parse_filter(entry: object, problems: list[str]) -> _UserFilter | None:
    if not isinstance(entry, str) or not entry:
        problems.append(f"userIgnoreFilters: {entry!r} is not a non-empty string; ignored")
        return None
    if len(entry) > 2 and entry.startswith("/") and entry.endswith("/"):
        try:
            return _UserFilter(entry, re.compile(entry[1:-1]))
        except re.error as exc:
            problems.append(f"userIgnoreFilters: bad regex {entry!r} ({exc}); ignored")
            return None
    return _UserFilter(entry, None)


def _read_ignore_file(path: Path, problems: list[str]) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{IGNORE_FILE}: cannot read it ({exc}); unused")
        return None
    import pathspec  # here: a vault without the file, and the daemon's start, never need it

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError) as exc:
        problems.append(f"{IGNORE_FILE}: {exc}; unused")
        return None
