"""Note text for synced vaults: git conflict markers, and the section of links from a memory
to the conflict copies that were archived with a different text (so no words are dropped)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vaultmem.core.device_sync import has_git_markers
from vaultmem.vault.frontmatter import locate

COPIES_START = "<!-- vaultmem:conflict-copies -->"
COPIES_END = "<!-- /vaultmem:conflict-copies -->"
COPIES_HEADING = "## Conflicting copies"
COPIES_NOTE = ("A sync tool kept another version of this note; vaultmem merged its memory "
               "state here and archived it. Its text differs from this note's:")


def git_conflicted(root: Path, path: str) -> bool:
    """True when the note's frontmatter (or its first lines, when the markers broke the
    fences) holds git merge-conflict markers."""
    try:
        text = (root / path).read_bytes()[:65536].decode("utf-8", errors="replace")
    except OSError:
        return False
    block = locate(text)
    head = block.yaml_text if block is not None else "\n".join(text.splitlines()[:200])
    return has_git_markers(head)


def add_copy_links(text: str, links: Sequence[str]) -> str:
    """`text` with `links` (wikilinks) listed in its conflicting-copies section, added at the
    end when missing; links already listed stay, nothing outside the section changes."""
    newline = "\r\n" if "\r\n" in text else "\n"
    start, end = text.find(COPIES_START), text.find(COPIES_END)
    listed: list[str] = []
    if 0 <= start < end:
        inner = text[start + len(COPIES_START):end]
        listed = [line[2:].strip() for line in inner.splitlines() if line.startswith("- ")]
        before, after = text[:start], text[end + len(COPIES_END):]
    else:
        before, after = text, ""
        if before and not before.endswith("\n"):
            before += newline
        if before and not before.endswith(newline * 2):
            before += newline
    items = listed + [link for link in links if link not in listed]
    section = newline.join([COPIES_START, COPIES_HEADING, "", COPIES_NOTE, "",
                            *(f"- {item}" for item in items), COPIES_END])
    if not after:
        section += newline
    return before + section + after
