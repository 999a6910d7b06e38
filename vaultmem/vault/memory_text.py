"""Editing a memory note's own words on request: its remembered text, its `# Title` line and its
`tags` property, each spliced into the note's text with every other byte kept.

A memory note reads: frontmatter, an optional `# Title` line, the remembered text, then the
sections vaultmem keeps (Related, conflicting copies, the merge explanation), each between
`<!-- vaultmem:… -->` markers, and whatever the user wrote after them. `replace_text` changes
only the remembered text; `set_title` only the title line; `set_tags` only the frontmatter's
top-level `tags` key (its lines, or a new first line). Each proves the rest unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from vaultmem.errors import FrontmatterError, InvalidInput
from vaultmem.vault.frontmatter import (
    _line_end,
    _span_end,
    _split_lines,
    load_yaml,
    locate,
    render_scalar,
)
from vaultmem.vault.notes import Note, parse_note
from vaultmem.vault.writes import guarded_write

MARKER = "<!-- vaultmem:"
_MARKER_LINE = re.compile(r"^[ \t]*<!-- /?vaultmem:[a-z-]+ -->[ \t]*\r?$", re.M)
_TAGS_LINE = re.compile(r"^tags[ \t]*:(?:[ \t]|\r?\n|$)")


def _newline(text: str) -> str:
    index = text.find("\n")
    return "\r\n" if index > 0 and text[index - 1] == "\r" else "\n"


def _body_start(text: str) -> int:
    block = locate(text)
    if block is None:
        raise FrontmatterError("the note has no frontmatter: not a memory note")
    return block.end


def _title_span(text: str) -> tuple[int, int] | None:
    """[start, end) of the `# Title` line (its newline included): the body's first line that
    is not blank, when it is a level-1 heading."""
    pos = _body_start(text)
    while pos < len(text):
        content_end, next_pos = _line_end(text, pos)
        line = text[pos:content_end]
        if line.strip():
            return (pos, next_pos) if line.startswith("# ") else None
        pos = next_pos
    return None


def text_span(text: str) -> tuple[int, int]:
    """[start, end) of the remembered text: after the title line (or the frontmatter), up to
    the first vaultmem section marker (or the end of the note)."""
    title = _title_span(text)
    start = title[1] if title is not None else _body_start(text)
    marker = _MARKER_LINE.search(text, start)
    return start, marker.start() if marker else len(text)


def _clean_lines(value: str, what: str) -> list[str]:
    lines = value.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
    if any(_MARKER_LINE.match(line) for line in lines):
        raise InvalidInput(f"the {what} may not contain vaultmem's section markers "
                           f"({MARKER}…)")
    return lines


def replace_text(text: str, content: str) -> str:
    """The note with its remembered text replaced by `content` (in the note's newlines; one
    blank line after the title and before a following section)."""
    nl = _newline(text)
    start, end = text_span(text)
    lines = _clean_lines(content, "text")
    region = nl + nl.join(lines) + nl + (nl if end < len(text) else "")
    result = text[:start] + region + text[end:]
    if result[:start] != text[:start] or result[start + len(region):] != text[end:]:
        raise FrontmatterError("internal check failed: the edit would change more than the text")
    return result


def set_title(text: str, title: str) -> str:
    """The note with its `# Title` line set to `title` (added after the frontmatter when the
    note has none)."""
    clean = " ".join(title.split())
    if not clean or MARKER in clean:
        raise InvalidInput("the title must be some words (and no vaultmem markers)")
    nl = _newline(text)
    span = _title_span(text)
    if span is None:
        start = _body_start(text)
        return text[:start] + f"# {clean}{nl}" + text[start:]
    line_end = _line_end(text, span[0])[0]
    return text[:span[0]] + f"# {clean}" + text[line_end:]


def set_tags(text: str, tags: Sequence[str]) -> str:
    """The note with its top-level `tags` property set to `tags` as a block list (removed when
    `tags` is empty); every other frontmatter line is kept, and the result is re-parsed to
    prove that only `tags` changed."""
    block = locate(text)
    if block is None:
        raise FrontmatterError("the note has no frontmatter: not a memory note")
    nl = block.newline
    lines = _split_lines(block.yaml_text)
    found = [i for i, line in enumerate(lines) if _TAGS_LINE.match(line)]
    if len(found) > 1:
        raise FrontmatterError("the frontmatter has the key 'tags' twice; not edited")
    new = [f"tags:{nl}", *(f"  - {render_scalar(tag)}{nl}" for tag in tags)] if tags else []
    if found:
        first, end = found[0], _span_end(lines, found[0])
        lines[first:end] = new
    else:
        before = load_yaml(block.yaml_text)
        if "tags" in before:
            raise FrontmatterError("'tags' is not on a line of its own; not edited")
        lines[0:0] = new
    yaml_start = _line_end(text, block.start)[1]
    result = text[:yaml_start] + "".join(lines) + text[yaml_start + len(block.yaml_text):]
    _verify_tags(text, result, list(tags))
    return result


def _verify_tags(old: str, new: str, tags: list[str]) -> None:
    old_block, new_block = locate(old), locate(new)
    if old_block is None or new_block is None or old[old_block.end:] != new[new_block.end:]:
        raise FrontmatterError("internal check failed: the tag edit would change the note body")
    before, after = load_yaml(old_block.yaml_text), load_yaml(new_block.yaml_text)
    before.pop("tags", None)
    got = after.pop("tags", None)
    if repr(before) != repr(after) or (got or []) != tags:
        raise FrontmatterError("internal check failed: the tag edit would change other "
                               "properties")


def write_memory_text(root: Path, path: str, new_text: str, file_hash: str) -> tuple[Note, str]:
    """Write `new_text` over the note at `path` in one guarded, atomic write: ConcurrentEdit
    when the file no longer hashes to `file_hash` (the user changed it since it was read)."""
    data = new_text.encode("utf-8")
    written = guarded_write(root / path, data, file_hash)
    return parse_note(path, data, mtime_ns=written.st_mtime_ns), new_text
