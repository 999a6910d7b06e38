"""Working copies of a demo vault (`sample-vault/`) whose memories are dated relative to `now`.

The sample vault's memory dates are written relative to a fixed reference time; a copy shifts
every stm_* timestamp by (now - reference), so that it shows the same keep / forget / promote
decisions on any day (and a daemon, which reads the real clock, sees them). Only stm_* lines
change (the surgical splice, one guarded write per memory note); any other note, and a note
whose frontmatter does not parse, is copied as it is. `scripts/run` makes its demo vault with
it (`scripts/demo_vault.py`); the tests' re-dated sample vaults are made the same way.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmem.errors import FrontmatterError
from vaultmem.vault.frontmatter import parse, splice_stm
from vaultmem.vault.writes import guarded_write, sha256_bytes

#: the time the sample vault's memory dates are written relative to
REFERENCE = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DATE_KEYS = ("stm_created", "stm_last_used", "stm_promoted_at")


def shift_note(path: Path, delta: timedelta) -> bool:
    """Move a memory note's stm_* dates by `delta`; False for any other note."""
    data = path.read_bytes()
    text = data.decode("utf-8")
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
        guarded_write(path, splice_stm(text, updates).encode("utf-8"), sha256_bytes(data))
    return bool(updates)


def redated_copy(source: Path, target: Path, now: datetime) -> tuple[int, timedelta]:
    """Copy `source` to `target` (symlinks as links) and shift its memories so that `now` is
    the reference time: (memories shifted, the shift)."""
    shutil.copytree(source, target, symlinks=True)
    delta = now.replace(microsecond=0) - REFERENCE
    return sum(shift_note(p, delta) for p in sorted(target.rglob("*.md"))), delta
