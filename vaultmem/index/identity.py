"""What the stored chunk index was built with, readable without importing LanceDB: the
identity file beside the tables (schema version, embedding model), written when the index
opens, and the files an index creates, removed when it must be rebuilt."""

from __future__ import annotations

import json
import shutil
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


def write_identity(path: Path, embedder_name: str) -> None:
    """Record what the index at `path` is built with (written whole: a temp file renamed)."""
    meta = {"schema_version": SCHEMA_VERSION, "embedder_name": embedder_name}
    tmp = path / f"{META_FILE}.tmp"
    tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path / META_FILE)


def wipe_index(path: Path) -> None:
    """Remove only what an index creates at `path` (the tables of older schemas included,
    and its identity file), never other files in the directory."""
    for table_dir in (path / name for name in TABLE_DIRS):
        if not table_dir.exists():
            continue
        if table_dir.is_dir():
            shutil.rmtree(table_dir)
        else:
            table_dir.unlink()
    (path / META_FILE).unlink(missing_ok=True)


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
