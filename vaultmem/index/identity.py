"""What the stored chunk index was built with, readable without importing LanceDB."""

from __future__ import annotations

import json
from pathlib import Path

from vaultmem.index.base import SCHEMA_VERSION

META_FILE = "vaultmem-index.json"
#: The table directories an index creates; `notes.lance` is schema v2's, removed by the rebuild.
TABLE_DIRS = ("chunks.lance", "notes.lance")


def identity_problem(path: Path, embedder_name: str) -> str | None:
    """Why the index at `path` must be rebuilt, or None if it is usable (or not created yet)."""
    meta_path = path / META_FILE
    if not meta_path.exists():
        has_tables = any((path / name).exists() for name in TABLE_DIRS)
        return "index metadata was missing" if has_tables else None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        version, name = int(meta["schema_version"]), str(meta["embedder_name"])
    except (OSError, ValueError, KeyError, TypeError):
        return "index metadata was unreadable"
    if version != SCHEMA_VERSION:
        return f"index schema changed from v{version} to v{SCHEMA_VERSION}"
    if name != embedder_name:
        return f"embedding model changed from {name} to {embedder_name}"
    return None


def index_exists(path: Path) -> bool:
    return (path / META_FILE).exists()


CHOICE_FILE = "vaultmem-model.json"


def recorded_choice(path: Path) -> dict[str, str] | None:
    """The model `auto` chose for the index at `path` and why ({"model", "reason"}), if any."""
    try:
        record = json.loads((path / CHOICE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    model, reason = record.get("model"), record.get("reason")
    if not isinstance(model, str) or not isinstance(reason, str):
        return None
    return {"model": model, "reason": reason}


def record_choice(path: Path, model: str, reason: str) -> None:
    """Keep `auto`'s choice beside the index (written whole: a temp file renamed over it)."""
    path.mkdir(parents=True, exist_ok=True)
    temp = path / f".{CHOICE_FILE}.tmp"
    temp.write_text(json.dumps({"model": model, "reason": reason}), encoding="utf-8")
    temp.replace(path / CHOICE_FILE)


def forget_choice(path: Path) -> None:
    (path / CHOICE_FILE).unlink(missing_ok=True)
