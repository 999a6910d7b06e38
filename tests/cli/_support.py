"""Helpers for CLI tests: temp vaults with memory notes, and a runner returning parsed JSON."""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from vaultmem.cli.main import cli

REFERENCE = datetime.fromisoformat("2026-11-20T12:00:00+00:00")


def memory_note(
    vault: Path, name: str, *, use_count: int, last_used: datetime, created: datetime | None = None,
    strength: float = 1.0, type: str | None = None, pinned: bool = False, body: str = "",
    tags: tuple[str, ...] = ("test",), memory_id: str | None = None,
) -> tuple[Path, str]:
    memory_id = memory_id or str(uuid.uuid4())
    created = created or last_used
    lines = ["---", f"tags: [{', '.join(tags)}]", f'stm_id: "{memory_id}"',
             f"stm_created: {created.isoformat()}", f"stm_last_used: {last_used.isoformat()}",
             f"stm_use_count: {use_count}", f"stm_strength: {strength}", "stm_status: active"]
    if type:
        lines.append(f"stm_type: {type}")
    if pinned:
        lines.append("stm_pinned: true")
    lines += ["---", f"# {name}", "", body or f"Remembered fact about {name}.", ""]
    path = vault / "memories" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, memory_id


def ago(**delta: float) -> datetime:
    return REFERENCE - timedelta(**delta)


def invoke(
    args: list[str], *, env: dict[str, str] | None = None, input: str | None = None
) -> Result:
    return CliRunner().invoke(cli, args, env=env, input=input, catch_exceptions=False)


def invoke_json(args: list[str], *, env: dict[str, str] | None = None) -> Any:
    result = invoke([*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def copy_vault(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


def small_vault_env(tmp_path: Path) -> dict[str, str]:
    """A one-note vault with the fake embedder and no config file: the CLI's environment."""
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Bikes.md").write_text("# Bikes\n\nSpare tubes in the garage.\n")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_CONFIG": str(tmp_path / "none.toml"), "VAULTMEM_EMBEDDING_MODEL": "fake"}
