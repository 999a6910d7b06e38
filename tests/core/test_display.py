"""Snippets show what Obsidian shows: no repeated title, no raw block source, link text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.display import display_text, snippet


def test_a_memory_snippet_does_not_repeat_its_title() -> None:
    text = "# The NAS admin page is on port 5000\n\nThe NAS admin page is on port 5000\n"
    shown = snippet(display_text(text, "The NAS admin page is on port 5000"), "NAS port")
    assert shown == "The NAS admin page is on port 5000"


def test_a_heading_that_is_not_the_title_stays_without_its_marks() -> None:
    assert display_text("## Setup\n\nRun the installer.", "Notes") == "Setup\n\nRun the installer."


@pytest.mark.parametrize(("source", "shown"), [
    ("See [[Goblin Tactics|the goblin note]] first.", "See the goblin note first."),
    ("See [[Monsters/Goblin]] first.", "See Goblin first."),
    ("See [[Goblin#Tactics]] first.", "See Goblin > Tactics first."),
    ("See [the rules](https://example.org/rules) first.", "See the rules first."),
    ("An embed ![[map.png]] here.", "An embed map.png here."),
])
def test_links_show_the_text_obsidian_shows(source: str, shown: str) -> None:
    assert display_text(source) == shown


def test_a_code_block_beside_prose_shows_as_its_kind() -> None:
    text = ("The goblin boss leads the ambush at the bridge.\n\n```statblock\nname: Goblin Boss\n"
            "ac: 17\nhp: 21\n```\n")
    shown = " ".join(display_text(text, "Goblins").split())
    assert shown == "The goblin boss leads the ambush at the bridge. [statblock]"


def test_a_chunk_that_is_only_a_block_shows_its_lines_without_fences() -> None:
    shown = display_text("```statblock\nname: Goblin Boss\nac: 17\n```\n", "Goblin Boss")
    assert shown == "[statblock] name: Goblin Boss · ac: 17"
    assert "```" not in shown


@given(st.text(max_size=400))
def test_display_text_never_fails_and_never_grows_much(text: str) -> None:
    shown = display_text(text, "t")
    assert len(shown) <= len(text) + 20
