"""What a merge leaves behind: the merged note under its plain name (no `-2` when a member held
the name only until it was archived), per-device use counts (`stm_uses_by`) carried over, and a
promoted note whose Related links never point at archived originals."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._support import ago, memory_note
from tests.engine.test_consolidator import KETTLE, NOW, TAXES, _consolidator, apps, vault
from vaultmem.api.wire import to_wire
from vaultmem.app import App
from vaultmem.vault.frontmatter import parse

__all__ = ["apps", "vault"]  # fixtures
pytestmark = pytest.mark.timeout(120)
DAY = NOW.date().isoformat()


def _same_day_pair(vault: Path) -> tuple[str, str]:
    """Two kettle memories; the best one (more uses, used later) saved on the merge day under
    the name a merged note with its title gets."""
    path, first = memory_note(vault, "kettle-descaling", use_count=3, created=ago(hours=6),
                              last_used=ago(hours=1), body=KETTLE)
    path.rename(path.with_name(f"{DAY} kettle-descaling.md"))
    text = path.with_name(f"{DAY} kettle-descaling.md").read_text(encoding="utf-8")
    path.with_name(f"{DAY} kettle-descaling.md").write_text(
        text.replace("stm_use_count: 3", "stm_use_count: 3\nstm_uses_by: laptop=2"),
        encoding="utf-8")
    other, second = memory_note(vault, "kettle descaling", use_count=2, created=ago(days=6),
                                last_used=ago(days=2), body=KETTLE)
    text = other.read_text(encoding="utf-8")
    other.write_text(text.replace("stm_use_count: 2",
                                  "stm_use_count: 2\nstm_uses_by: desk=1 laptop=1"),
                     encoding="utf-8")
    return first, second


def test_the_merged_note_takes_its_plain_name_and_the_device_counts(
    vault: Path, apps: list[App]
) -> None:
    _same_day_pair(vault)
    _, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()
    merged = to_wire(consolidator.merge(cluster.id, NOW))["merged_into"]
    assert merged["path"] == f"memories/{DAY} kettle-descaling.md"
    assert not (vault / "memories" / f"{DAY} kettle-descaling-2.md").exists()
    fields, _, _ = parse((vault / merged["path"]).read_text(encoding="utf-8"))
    assert fields["stm_use_count"] == 5
    assert fields["stm_uses_by"] == "desk=1 laptop=3"
    assert fields["stm_status"] == "active"


def test_a_promoted_merged_note_links_no_archived_original(vault: Path, apps: list[App]) -> None:
    _same_day_pair(vault)
    memory_note(vault, "quarterly taxes", use_count=1, last_used=ago(days=1), body=TAXES)
    (vault / "Kitchen.md").write_text("# Kitchen\n\nThe kettle descales with citric acid.\n",
                                      encoding="utf-8")
    app, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()
    result = to_wire(consolidator.merge(cluster.id, NOW))
    merged = result["merged_into"]
    archived = {link_name(move["to"]) for move in result["archived"]}
    promoted = to_wire(app.lifecycle.promote(merged["id"], NOW))["promoted"]
    assert promoted and promoted[0]["links"]
    assert any("Kitchen" in link for link in promoted[0]["links"])
    for link in promoted[0]["links"]:
        target = link.removeprefix("[[").split("|")[0].split("]]")[0]
        assert target not in archived and "archive/" not in target, link
    text = (vault / promoted[0]["to"]).read_text(encoding="utf-8")
    related = text[text.index("<!-- vaultmem:related -->"):]
    assert all(f"[[{name}" not in related for name in archived)


def link_name(path: str) -> str:
    """A note's link target: its file name without `.md`."""
    return Path(path).name.removesuffix(".md")


def test_merged_from_links_still_reach_an_original_of_the_same_name(
    vault: Path, apps: list[App]
) -> None:
    _same_day_pair(vault)
    _, consolidator = _consolidator(apps, vault)
    [cluster] = consolidator.clusters()
    result = to_wire(consolidator.merge(cluster.id, NOW))
    text = (vault / result["merged_into"]["path"]).read_text(encoding="utf-8")
    same_name = next(m["to"] for m in result["archived"] if link_name(m["to"]).startswith(DAY))
    assert f"[[{same_name.removesuffix('.md')}|" in text  # by path: the bare name is the note's
