"""A note's inline text (its paragraphs, list items, table cells) read for `#tags` and
`[[wikilinks]]`: code spans, escaped `#` and `[`, and %%comments%% hidden first, as Obsidian
ignores what they hold. Block structure is `notes.parse_note`'s (markdown-it); the inline
content is scanned here."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    target: str
    heading: str | None
    block: str | None
    alias: str | None
    embed: bool


_MASK = "\x01"  # stands in for code and escapes: neither whitespace nor a tag character
_TAG = re.compile(r"(?<!\S)#([^\s\x00-\x2c.\x3a-\x40\x5b-\x5e`\x7b-\x7f]+)")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_COMMENT = re.compile(r"%%.*?%%", re.S)


def wikilinks(content: str) -> Iterator[Link]:
    """The `[[wikilinks]]` and `![[embeds]]` of masked inline text (`mask_inline`)."""
    for match in _WIKILINK.finditer(content):
        link = _parse_link(match.group(2), embed=bool(match.group(1)))
        if link is not None:
            yield link


def _parse_link(inner: str, *, embed: bool) -> Link | None:
    destination, bar, alias = inner.partition("|")
    destination = destination.removesuffix("\\")  # `[[a\|b]]` inside a table
    target, hash_sign, anchor = destination.partition("#")
    heading: str | None = None
    block: str | None = None
    if hash_sign:
        heading_part, caret, block_part = anchor.partition("^")
        heading = heading_part.strip() or None
        block = (block_part.strip() or None) if caret else None
    target = target.strip()
    if not (target or heading or block):
        return None
    return Link(target, heading, block, (alias.strip() or None) if bar else None, embed)


def mask_inline(source: str) -> str:
    """Hide code spans, escaped `#`/`[` and %%comments%% from tag and link matching."""
    out = list(source)
    closers = _backtick_runs(source)
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            if source[index + 1] in "#[":
                out[index] = out[index + 1] = _MASK
            index += 2
        elif char == "`":
            index = _mask_code_span(source, index, out, closers)
        else:
            index += 1
    masked = "".join(out)
    return _COMMENT.sub(lambda m: _MASK * len(m.group(0)), masked)


def _backtick_runs(source: str) -> dict[int, list[int]]:
    """Run length -> start offsets of every maximal run of backticks (possible closers)."""
    runs: dict[int, list[int]] = {}
    for match in re.finditer(r"`+", source):
        runs.setdefault(match.end() - match.start(), []).append(match.start())
    return runs


def _mask_code_span(source: str, start: int, out: list[str], closers: dict[int, list[int]]) -> int:
    """Mask the code span opening at `start`; returns the index to continue from."""
    run_end = start
    while run_end < len(source) and source[run_end] == "`":
        run_end += 1
    starts = closers.get(run_end - start, [])
    position = bisect.bisect_left(starts, run_end)
    if position == len(starts):
        return run_end  # an unmatched backtick run is literal text
    span_end = starts[position] + run_end - start
    for offset in range(start, span_end):
        out[offset] = _MASK
    return span_end


def inline_tags(inline: list[str]) -> Iterator[str]:
    """The `#tags` of masked inline texts (not bare numbers: `#1` is no tag)."""
    for content in inline:
        for match in _TAG.finditer(content):
            tag = match.group(1)
            if not tag.isdigit():
                yield tag
