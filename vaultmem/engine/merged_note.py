"""The text of a merged memory note (engine/consolidator.py writes it): its members' contents
best first without repeats, the "Merged from" links to where the originals are archived, and
the explanation callout added once they are (between vaultmem's markers, left out of the
remembered text)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date
from pathlib import PurePosixPath

from vaultmem.store.memory_notes import MemoryNote, content_of, normalise_text
from vaultmem.vault.memories import wikilink

MERGED_START = "<!-- vaultmem:merged -->"
MERGED_END = "<!-- /vaultmem:merged -->"


def same_body(found: str, written: str) -> bool:
    """Whether a note's body is still its title heading and the `written` body, as a new
    memory note is rendered (line endings and surrounding blank lines aside)."""
    heading, _, rest = found.replace("\r\n", "\n").strip().partition("\n")
    return heading.startswith("# ") and rest.strip() == written.replace("\r\n", "\n").strip()


def merged_body(members: Sequence[MemoryNote], links: Sequence[str]) -> str:
    """The members' contents, best first, without repeats (compared as normalised text), then a
    "Merged from" line. The best member's content sits under the note's title (its title is the
    note's, so it gets no heading of its own); each further distinct content gets a section
    headed by its own title (none when that title is the note's too)."""
    parts: list[str] = []
    seen: set[str] = set()
    for memory in members:
        content = content_of(memory).strip()
        key = normalise_text(content)
        if key and key not in seen:
            seen.add(key)
            title = " ".join(memory.note.title.split())
            heading = bool(parts) and title.casefold() != members[0].note.title.strip().casefold()
            parts.append(f"## {title}\n\n{content}" if heading else content)
    parts.append(f"Merged from {', '.join(links)}.")
    return "\n\n".join(parts)


def merge_explanation(count: int, cohesion: float, day: date, archive_folder: str) -> str:
    """What a person opening the merged note needs to know: an Obsidian callout between
    vaultmem's markers (left out of the memory's remembered text, like the Related section)."""
    folder = archive_folder.strip("/")
    return "\n".join([
        MERGED_START,
        f"> [!info] Merged by vaultmem on {day.isoformat()}",
        f"> These {count} memories said the same thing (similarity {cohesion:.2f}), so they "
        "live on as this one note: their uses are summed, and its type and strength are at "
        "least their strongest.",
        f"> The originals are kept in `{folder}/` (never deleted) with `stm_merged_into` "
        "pointing here; `vaultmem restore <id>` brings one back.",
        "> Edit this note freely: vaultmem only changes its `stm_*` properties (and adds a "
        "Related section if it is promoted).",
        MERGED_END,
    ])


def merged_link(target: str, all_paths: Collection[str], title: str) -> str:
    """A wikilink to where the original will live once archived (its name, when unique)."""
    try:
        return wikilink(target, all_paths, alias=title)
    except ValueError:  # a file name a wikilink cannot hold: name it in plain text
        return PurePosixPath(target).stem
