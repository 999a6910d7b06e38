"""Make a working copy of sample-vault/ whose memories are dated relative to today.

The sample vault's memory dates are written relative to a fixed reference time; the copy
shifts every stm_* timestamp by (now - reference) so the demo shows the same keep / forget /
promote decisions on any day. Only stm_* lines change (vaultmem's own surgical edit).

Usage: python scripts/demo_vault.py SOURCE TARGET
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from vaultmem.errors import FrontmatterError
from vaultmem.vault.frontmatter import parse, splice_stm

REFERENCE = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DATE_KEYS = ("stm_created", "stm_last_used", "stm_promoted_at")


def shift_note(path: Path, delta: object) -> bool:
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
            updates[key] = (when + delta).isoformat(timespec="seconds")  # type: ignore[operator]
    if updates:
        path.write_bytes(splice_stm(text, updates).encode("utf-8"))
    return bool(updates)


def main(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    delta = datetime.now(UTC).replace(microsecond=0) - REFERENCE
    shifted = sum(shift_note(p, delta) for p in sorted(target.rglob("*.md")))
    print(f"demo vault at {target} ({shifted} memories re-dated by {delta.days} days)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
