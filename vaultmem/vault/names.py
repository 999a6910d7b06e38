"""A note's names without parsing its Markdown: what the first index writes of every note
before its words (pipeline/words_first.py). Parsing a note's Markdown is most of the cost of
reading it (~60 % of the words pass on a 10k-note vault); its names are its file name and its
frontmatter's title, aliases and short property values, which need the frontmatter only.

The names given here are those `parse_note` gives, except what needs the body parsed: a
memory's title (its first heading) and the first heading as another name. The words pass
writes the note's full record after them.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.vault.notes import (
    RawNote,
    decoded_text,
    frontmatter_aliases,
    frontmatter_tags,
    note_title,
    property_values,
    sha256_hex,
    split_frontmatter,
)


@dataclass(frozen=True)
class NoteNames:
    path: str
    title: str
    aliases: tuple[str, ...]  # aliases, then short property values, each once, not the title
    tags: tuple[str, ...]  # the frontmatter's
    body_hash: str
    mtime_ns: int
    size: int


def note_names(raw: RawNote) -> NoteNames:
    """`raw`'s names read from its frontmatter (NoteError: binary, as `parse_note`)."""
    text, _ = decoded_text(raw.raw)
    fields, body, _, _ = split_frontmatter(text)
    title = note_title(fields, (), raw.path)
    others = dict.fromkeys(n for n in (*frontmatter_aliases(fields), *property_values(fields))
                           if n.strip() and n != title)
    return NoteNames(
        path=raw.path, title=title, aliases=tuple(others),
        tags=tuple(dict.fromkeys(frontmatter_tags(fields))), body_hash=sha256_hex(body),
        mtime_ns=raw.mtime_ns, size=len(raw.raw),
    )
