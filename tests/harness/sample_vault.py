"""Working copies of sample-vault/ whose memories are dated relative to today.

The sample vault's memory dates are written relative to a fixed reference time; a copy shifts
every stm_* timestamp by (now - reference), so that it shows the same keep / forget / promote
decisions on any day (and a daemon, which reads the real clock, sees them). Only stm_* lines
change (vaultmem's own surgical edit). scripts/demo_vault.py is the command line for it.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmem.errors import FrontmatterError
from vaultmem.vault.frontmatter import parse, splice_stm

REPO = Path(__file__).resolve().parents[2]
SAMPLE_VAULT = REPO / "sample-vault"
REFERENCE = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DATE_KEYS = ("stm_created", "stm_last_used", "stm_promoted_at")


def shift_note(path: Path, delta: timedelta) -> bool:
    """Move a memory note's stm_* dates by `delta`; False for any other note."""
    text = path.read_bytes().decode("utf-8")
    try:
        fields, _, block = parse(text)
    except FrontmatterError:
        return False  # malformed notes are left alone (templates with {{date}} placeholders)
    if block is None or "stm_id" not in fields:
        return False
    updates: dict[str, str | int | float | bool | None] = {}
    for key in DATE_KEYS:
        value = fields.get(key)
        if isinstance(value, str):
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if isinstance(value, datetime):
            when = value if value.tzinfo else value.replace(tzinfo=UTC)
            updates[key] = (when + delta).isoformat(timespec="seconds")
    if updates:
        path.write_bytes(splice_stm(text, updates).encode("utf-8"))
    return bool(updates)


def redated_copy(source: Path, target: Path) -> tuple[int, timedelta]:
    """Copy `source` to `target` (symlinks as links) and shift its memories so that today is the
    reference time: (memories shifted, the shift)."""
    shutil.copytree(source, target, symlinks=True)
    delta = datetime.now(UTC).replace(microsecond=0) - REFERENCE
    return sum(shift_note(p, delta) for p in sorted(target.rglob("*.md"))), delta


def redated_sample_vault(target: Path) -> Path:
    """A re-dated copy of sample-vault/ at `target`."""
    redated_copy(SAMPLE_VAULT, target)
    return target
