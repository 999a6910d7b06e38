"""The demo vault (`vaultmem.vault.demo`): a copy of sample-vault/ whose memories are dated
relative to `now`; only their stm_* date lines change, every other byte is the sample's."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from tests.conftest import SAMPLE_VAULT
from vaultmem.vault.demo import DATE_KEYS, REFERENCE, redated_copy
from vaultmem.vault.frontmatter import parse


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def _dates(text: str) -> dict[str, datetime]:
    fields = parse(text)[0]
    return {key: datetime.fromisoformat(str(fields[key]).replace("Z", "+00:00"))
            for key in DATE_KEYS if key in fields}


def test_memories_are_shifted_by_now_minus_the_reference_and_nothing_else_changes(
        tmp_path: Path) -> None:
    shift = timedelta(days=10, hours=3)
    target = tmp_path / "demo"
    shifted, delta = redated_copy(SAMPLE_VAULT, target, REFERENCE + shift)
    assert delta == shift
    before, after = _files(SAMPLE_VAULT), _files(target)
    assert before.keys() == after.keys()
    changed = [path for path in before if before[path] != after[path]]
    assert len(changed) == shifted > 0
    for path in changed:
        old, new = before[path].decode("utf-8"), after[path].decode("utf-8")
        old_dates, new_dates = _dates(old), _dates(new)
        assert old_dates and old_dates.keys() == new_dates.keys()
        for key, when in old_dates.items():
            start = when if when.tzinfo else when.replace(tzinfo=REFERENCE.tzinfo)
            assert new_dates[key] == start + shift
        other = [(a, b) for a, b in zip(old.splitlines(), new.splitlines(), strict=True)
                 if a != b]
        assert all(a.split(":")[0] in DATE_KEYS and b.split(":")[0] in DATE_KEYS
                   for a, b in other), other


def test_a_copy_at_the_reference_time_is_the_sample_itself(tmp_path: Path) -> None:
    shifted, delta = redated_copy(SAMPLE_VAULT, tmp_path / "demo", REFERENCE)
    assert delta == timedelta(0)
    assert _files(tmp_path / "demo") == _files(SAMPLE_VAULT)
    assert shifted > 0  # every memory was visited, its dates written back unchanged
