"""Split a note body into heading-aware chunks small enough for the embedding model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
# vaultmem's own sections in a note (Related links, a merge's banner, conflicting copies):
# between `<!-- vaultmem:NAME -->` and `<!-- /vaultmem:NAME -->` lines
_MANAGED = re.compile(r"^[ \t]*<!-- vaultmem:([a-z][a-z-]{0,40}) -->[ \t]*\r?$.*?"
                      r"^[ \t]*<!-- /vaultmem:\1 -->[ \t]*(?:\r?\n|$)", re.M | re.S)
HEADING_SEPARATOR = " > "
MERGED_HEADING_SEPARATOR = "; "
# a title code has digits and at most this many letters (`s01`, `t003`, `D1_3`)
_CODE_LETTERS = 2


@dataclass(frozen=True)
class Chunk:
    index: int
    heading: str
    text: str


@dataclass(frozen=True)
class _Section:
    heading: str
    text: str


def chunk_markdown(body: str, *, max_chars: int = 1000, min_chars: int = 200) -> list[Chunk]:
    """Chunks of at most `max_chars` characters that together keep every non-space character.

    Sections start at ATX headings (not inside fenced code); short sections are merged into the
    next one, long ones split at paragraphs, then sentences, then words or hard cuts.
    """
    if max_chars < 1 or min_chars < 0:
        raise ValueError(f"need max_chars >= 1 and min_chars >= 0, got {max_chars}, {min_chars}")
    sections = _merge_short(list(_sections(body)), max_chars, min_chars)
    texts = [
        (section.heading, piece)
        for section in sections
        for piece in _split(section.text, max_chars)
    ]
    return [Chunk(index, heading, text) for index, (heading, text) in enumerate(texts)]


def note_chunks(body: str, title: str, *, max_chars: int, min_chars: int) -> list[Chunk]:
    """A note's chunks as the index stores them: its own text (`without_vaultmem_sections`)
    chunked, or its title alone when the body has no text."""
    chunks = chunk_markdown(without_vaultmem_sections(body), max_chars=max_chars,
                            min_chars=min_chars)
    return chunks or [Chunk(index=0, heading="", text=title)]


def without_vaultmem_sections(body: str) -> str:
    """The note's own text: vaultmem's banners and managed sections are not what the note says,
    so they are neither searched nor shown as a snippet."""
    return _MANAGED.sub("", body) if "<!-- vaultmem:" in body else body


def embedding_text(title: str, chunk: Chunk) -> str:
    """The text to embed: "title words — heading", a blank line, then the chunk text."""
    context = " — ".join(part for part in (title_words(title), chunk.heading) if part)
    return f"{context}\n\n{chunk.text}" if context else chunk.text


def title_words(title: str) -> str:
    """The title for the embedded context, without its codes.

    File names often hold dates, times, counters and ids (`2023-05-08 s01 t003 Melanie`,
    `2024-01-05`, `D1_3`) that a sentence model cannot read as meaning; left in, they pull a
    short note's vector toward every note named alike. A code is a token with a digit that is
    neither a bare number nor a word: digits joined by separators (`2023-05-08`, `10:30`) or
    with at most two letters (`s01`, `t003`, `D1_3`, `v2`). Codes are dropped; every other
    token is kept, in order: words (`COVID-19`, `prefers-dark-mode`), and bare numbers, which
    the model reads in their phrase (`Session 3`, `turn 12`, `Chapter 7`). Only the embedded
    text uses this: the full-text title, the name match and what is shown keep the whole title.
    """
    return " ".join(token for token in title.split() if not _is_code(token))


def _is_code(token: str) -> bool:
    if token.isdigit() or not any(char.isdigit() for char in token):
        return False
    return sum(1 for char in token if char.isalpha()) <= _CODE_LETTERS


def _sections(body: str) -> Iterator[_Section]:
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        fence, in_code = _track_fence(line, fence)
        heading = None if in_code else _HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        yield from _section(path, lines)
        level = len(heading.group(1))
        path = [entry for entry in path if entry[0] < level]
        path.append((level, (heading.group(2) or "").strip()))
        lines = [line]
    yield from _section(path, lines)


def _track_fence(line: str, fence: str | None) -> tuple[str | None, bool]:
    """Returns the open fence after this line and whether the line is inside/part of code."""
    match = _FENCE.match(line)
    if fence is None:
        return (match.group(1), True) if match else (None, False)
    closes = (
        match is not None
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and line.strip() == match.group(1)
    )
    return (None if closes else fence), True


def _section(path: list[tuple[int, str]], lines: list[str]) -> Iterator[_Section]:
    text = "\n".join(lines).strip()
    if text:
        heading = HEADING_SEPARATOR.join(title for _, title in path if title)
        yield _Section(heading, text)


def _merge_short(sections: list[_Section], max_chars: int, min_chars: int) -> list[_Section]:
    merged: list[_Section] = []
    for section in sections:
        previous = merged[-1] if merged else None
        if previous and len(previous.text) < min_chars and _fits(previous, section, max_chars):
            merged[-1] = _join(previous, section)
        else:
            merged.append(section)
    # A short last section has no next one to join: it joins the previous one instead.
    if (
        len(merged) >= 2
        and len(merged[-1].text) < min_chars
        and _fits(merged[-2], merged[-1], max_chars)
    ):
        merged[-2:] = [_join(merged[-2], merged[-1])]
    return merged


def _fits(first: _Section, second: _Section, max_chars: int) -> bool:
    return len(first.text) + 2 + len(second.text) <= max_chars


def _join(first: _Section, second: _Section) -> _Section:
    headings = [h for h in first.heading.split(MERGED_HEADING_SEPARATOR) if h]
    if second.heading and second.heading not in headings:
        headings.append(second.heading)
    return _Section(MERGED_HEADING_SEPARATOR.join(headings), f"{first.text}\n\n{second.text}")


def _split(text: str, max_chars: int) -> list[str]:
    """Split at the coarsest boundary that works: paragraphs, sentences, words, characters."""
    if len(text) <= max_chars:
        return [text]
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    pieces = [piece for p in paragraphs for piece in _split_paragraph(p, max_chars)]
    return _pack(pieces, "\n\n", max_chars)


def _split_paragraph(paragraph: str, max_chars: int) -> list[str]:
    if len(paragraph) <= max_chars:
        return [paragraph]
    sentences = [s for s in _SENTENCE_END.split(paragraph) if s]
    pieces = [piece for s in sentences for piece in _split_words(s, max_chars)]
    return _pack(pieces, " ", max_chars)


def _split_words(sentence: str, max_chars: int) -> list[str]:
    if len(sentence) <= max_chars:
        return [sentence]
    pieces: list[str] = []
    rest = sentence
    while len(rest) > max_chars:
        cut = max(rest.rfind(space, 1, max_chars + 1) for space in " \t\n")
        if cut <= 0:
            cut = max_chars  # one word longer than a chunk: a hard cut
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return [piece for piece in pieces if piece]


def _pack(pieces: list[str], separator: str, max_chars: int) -> list[str]:
    """Greedily join consecutive pieces while the result stays within `max_chars`."""
    packed: list[str] = []
    for piece in pieces:
        if packed and len(packed[-1]) + len(separator) + len(piece) <= max_chars:
            packed[-1] = f"{packed[-1]}{separator}{piece}"
        else:
            packed.append(piece)
    return packed
