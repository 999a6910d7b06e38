"""Read a note: title, aliases, tags, links, headings, body and hashes. Never raises for
malformed frontmatter (that is reported in `Note.frontmatter_error`)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from vaultmem.core.intake import tag_key
from vaultmem.core.memory import is_memory
from vaultmem.errors import FrontmatterError, NoteError, NotFound, PathOutsideVault
from vaultmem.vault.frontmatter import BOM, locate, parse
from vaultmem.vault.inline import Link, inline_tags, mask_inline, wikilinks
from vaultmem.vault.paths import opened_inside, resolve_in_vault

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line number in the file


INVALID_UTF8 = "invalid UTF-8 replaced"
READ_ONLY = "read-only: vaultmem leaves it alone (make it writable to let vaultmem update it)"


def read_only_mode(mode: int) -> bool:
    """A file its owner may not write: the user made it read-only. Decided by the mode bits,
    not by a write attempt, because root may write any file."""
    return not mode & stat.S_IWUSR


@dataclass(frozen=True)
class Note:
    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    links: tuple[Link, ...]
    headings: tuple[Heading, ...]
    fields: Mapping[str, object]
    frontmatter_error: str | None
    body: str
    body_hash: str
    file_hash: str
    mtime_ns: int
    size: int
    warnings: tuple[str, ...]

    @property
    def properties(self) -> tuple[str, ...]:
        """The short textual values of the note's own properties (`speaker: Melanie`,
        `author: Ann Lee`, `project: Crumb`): what the note is filed under, which a query may
        name as it names a title (see `property_values`)."""
        return property_values(self.fields)

    @property
    def first_heading(self) -> str:
        """The text of the first level-1 heading ("" when none): not the note's name (that is
        its file name or `title` property), but a name a query may use for it."""
        return next((h.text for h in self.headings if h.level == 1 and h.text), "")


_LIST_SPLIT = re.compile(r"[,\s]+")


@functools.cache
def _markdown() -> MarkdownIt:
    """The parser, made on first use: the daemon's first answers read no note."""
    from markdown_it import MarkdownIt

    # Only block structure is needed (inline content is scanned here), so inline parsing is off.
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def title_of(path: str) -> str:
    """The note's file name without its extension."""
    return PurePosixPath(path).stem


def read_note(root: Path, path: str) -> Note:
    """Read and parse the note at a vault path (NotFound / PathOutsideVault / NoteError)."""
    return _read_parsed(root, path)[0]


def read_note_text(root: Path, path: str) -> tuple[Note, str]:
    """`read_note`, with the file's text as read: what a guarded edit of the note splices into
    (so the edit does not read the note again)."""
    note, raw = _read_parsed(root, path)
    return note, raw.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class RawNote:
    """A note's bytes as read, not parsed yet (parsing a large note's Markdown takes ~0.7 ms
    per KB: a sync fingerprints it from these and parses it when its turn comes)."""

    path: str
    raw: bytes
    mtime_ns: int
    read_only: bool

    def body(self) -> str:
        """The text after the frontmatter, as the parsed note has it (NoteError: binary)."""
        return split_frontmatter(decoded_text(self.raw)[0])[1]

    def fingerprint(self) -> tuple[str, str]:
        """(body hash, file hash), as the parsed note has them (NoteError: binary)."""
        return sha256_hex(self.body()), hashlib.sha256(self.raw).hexdigest()

    def check(self) -> None:
        """NoteError when the bytes are binary, as `parse` would raise (nothing else read)."""
        decoded_text(self.raw)

    def parse(self) -> Note:
        return parse_note(self.path, self.raw, mtime_ns=self.mtime_ns, read_only=self.read_only)


def read_raw_note(root: Path, path: str) -> RawNote:
    """The note's bytes (NotFound / PathOutsideVault / NoteError as `read_note`)."""
    rel, absolute = resolve_in_vault(root, path)
    raw, info = _read_regular(absolute, rel)
    return RawNote(rel, raw, info.st_mtime_ns, read_only_mode(info.st_mode))


def read_listed_note(root: Path, rel: str, real_root: str) -> RawNote:
    """A note the vault's scan listed (`rel` as `scan_vault` gives it) as its bytes, as
    `read_raw_note` reads it, but checked to be inside the vault (`real_root`: its real path,
    resolved once by the caller) by the file opened (`opened_inside`), not by resolving each
    folder of its path again: ~0.1 ms a note, 1-3 s of a 10,000-note first index."""
    try:
        raw, info = _read_regular(os.path.join(os.path.abspath(root), rel), rel,
                                  inside=real_root)  # a str: ~40 µs a note less than a Path
    except FileNotFoundError:
        raise NotFound(f"no note {rel!r} in the vault") from None
    return RawNote(rel, raw, info.st_mtime_ns, read_only_mode(info.st_mode))


def _read_parsed(root: Path, path: str) -> tuple[Note, bytes]:
    raw = read_raw_note(root, path)
    return raw.parse(), raw.raw


def _read_regular(absolute: str | Path, rel: str,
                  inside: str | None = None) -> tuple[bytes, os.stat_result]:
    """`inside`: the vault's real path, the file opened is checked to be in (`opened_inside`)."""
    # Non-blocking open: a FIFO swapped in after the scan must not block the reader forever.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(absolute, flags)
    except IsADirectoryError:
        raise NoteError(f"{rel} is a folder, not a note") from None
    try:
        if inside is not None and not opened_inside(fd, absolute, inside):
            raise PathOutsideVault(f"{rel!r} resolves (through a symlink) outside the vault")
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NoteError(f"{rel} is a folder, not a note")
        if not stat.S_ISREG(info.st_mode):
            raise NoteError(f"{rel} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(), info
    finally:
        os.close(fd)


def parse_note(path: str, raw: bytes, *, mtime_ns: int = 0, read_only: bool = False) -> Note:
    """Parse a note's bytes. Raises NoteError only for binary content.

    NUL bytes after UTF-8 text (padding some sync tools and crashed editors leave) are not part
    of the note: its text is read and the padding reported; a NUL inside the text is binary."""
    text, decoding = decoded_text(raw)
    warnings = [*([READ_ONLY] if read_only else []), *decoding]
    fields, body, body_start, error = split_frontmatter(text)
    commented = [] if error else _commented_tags(text)
    if commented:
        shown = ", ".join(f"#{tag}" for tag in commented)
        warnings.append(f"{shown} in the tags line is a YAML comment, which Obsidian ignores: "
                        "vaultmem reads it as a tag; remove the # so Obsidian does too")
    tokens = _markdown().parse(body)
    first_line = text.count("\n", 0, body_start) + 1
    headings = tuple(_headings(tokens, first_line))
    inline = [mask_inline(t.content) for t in tokens if t.type == "inline"]
    return Note(
        path=path,
        title=note_title(fields, headings, path),
        aliases=tuple(frontmatter_aliases(fields)),
        tags=_dedupe_casefold([*frontmatter_tags(fields), *commented,
                               *inline_tags(inline)]),
        links=tuple(link for content in inline for link in wikilinks(content)),
        headings=headings,
        fields=fields,
        frontmatter_error=error,
        body=body,
        body_hash=sha256_hex(body),
        file_hash=hashlib.sha256(raw).hexdigest(),
        mtime_ns=mtime_ns,
        size=len(raw),
        warnings=tuple(warnings),
    )


def decoded_text(raw: bytes) -> tuple[str, list[str]]:
    """The note's text and what decoding it had to ignore (NoteError: binary)."""
    content = raw.rstrip(b"\x00")
    if b"\x00" in content or (len(content) < len(raw) and not _utf8(content)):
        raise NoteError("binary file, not a note")
    warnings = []
    if len(content) < len(raw):
        warnings.append(f"{len(raw) - len(content)} NUL bytes of padding after the text "
                        "ignored")
    try:
        return content.decode("utf-8"), warnings
    except UnicodeDecodeError:
        return content.decode("utf-8", errors="replace"), [*warnings, INVALID_UTF8]


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(data.strip())


def split_frontmatter(text: str) -> tuple[dict[str, object], str, int, str | None]:
    """(fields, body, offset of the body in text, frontmatter error)."""
    try:
        fields, body, block = parse(text)
    except FrontmatterError as exc:
        broken = locate(text)
        if broken is None:
            return {}, text.removeprefix(BOM), len(text) - len(text.removeprefix(BOM)), exc.message
        return {}, text[broken.end :], broken.end, exc.message
    return fields, body, (block.end if block else len(text) - len(body)), None


def _headings(tokens: list[Token], first_line: int) -> Iterator[Heading]:
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or index + 1 >= len(tokens):
            continue
        line = first_line + (token.map[0] if token.map else 0)
        yield Heading(int(token.tag[1:]), tokens[index + 1].content.strip(), line)


def note_title(fields: Mapping[str, object], headings: tuple[Heading, ...], path: str) -> str:
    """What Obsidian shows a note as: its `title` property when set, else its file name. A
    memory note is the exception: its first heading is the title vaultmem wrote for it (its file
    name is a dated slug of that title)."""
    title = fields.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    if is_memory(fields):
        for heading in headings:
            if heading.level == 1 and heading.text:
                return heading.text
    return title_of(path)


def _values(fields: Mapping[str, object], *keys: str) -> Iterator[str]:
    """Scalar values under `keys`, whether given as one value or as a list."""
    for key in keys:
        value = fields.get(key)
        items: Iterable[object] = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if item is not None and not isinstance(item, dict | list | tuple | set):
                yield str(item)


# Keys whose values are read apart (names, tags) or say how Obsidian shows or publishes a
# note, not what it is about; vaultmem's own state (`stm_*`) is left out too.
_NOT_SUBJECT = frozenset((
    "title", "aliases", "alias", "tags", "tag", "cssclasses", "cssclass", "publish",
    "permalink", "description",
))
# A longer value is prose (a summary, a quote), not a name the note is filed under.
_PROPERTY_WORDS = 5
_PROPERTY_CHARS = 60
# a link names another note and a URL is not typed; a template's `{{date}}` is not a value yet
_NOT_TEXT = re.compile(r"\[\[|://|\{\{")


def property_values(fields: Mapping[str, object]) -> tuple[str, ...]:
    """Short textual property values, each once: strings (alone or in a list) of at most
    _PROPERTY_WORDS words holding a word of letters. Dates, times, numbers and booleans are
    not text (YAML reads them as such), and neither are links, URLs, template placeholders
    nor `stm_*` state."""
    found: list[str] = []
    for key, value in fields.items():
        if not isinstance(key, str) or key.casefold() in _NOT_SUBJECT or key.startswith("stm_"):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(item, str):
                continue
            text = " ".join(item.split())
            if (text and len(text) <= _PROPERTY_CHARS and len(text.split()) <= _PROPERTY_WORDS
                    and _has_word(text) and not _NOT_TEXT.search(text)
                    and text not in found):
                found.append(text)
    return tuple(found)


def _has_word(text: str) -> bool:
    r"""Two letters in a row: `str.isalpha`, as a regular expression's `[^\W\d_]` also takes
    digits that are not decimal (superscripts, fractions: "¹¼" is no word)."""
    run = 0
    for ch in text:
        run = run + 1 if ch.isalpha() else 0
        if run >= 2:
            return True
    return False


def frontmatter_aliases(fields: Mapping[str, object]) -> list[str]:
    found: list[str] = []
    for value in _values(fields, "aliases", "alias"):
        for alias in value.split(",") if isinstance(value, str) else [value]:
            alias = alias.strip()
            if alias and alias not in found:
                found.append(alias)
    return found


def frontmatter_tags(fields: Mapping[str, object]) -> Iterator[str]:
    for value in _values(fields, "tags", "tag"):
        for word in _LIST_SPLIT.split(value):
            tag = word.lstrip("#")
            if tag and not tag.isdigit():
                yield tag


_TAGS_LINE_COMMENT = re.compile(r"^tags?[ \t]*:[^#\n]*?[ \t]#(?P<comment>[^\n]*)$", re.M)
_HASHTAGS = re.compile(r"[^\s#,\x00-\x2c.\x3a-\x40\x5b-\x5e`\x7b-\x7f]+"
                       r"(?:[ \t,]+#[^\s#,\x00-\x2c.\x3a-\x40\x5b-\x5e`\x7b-\x7f]+)*[ \t]*")


def _commented_tags(text: str) -> list[str]:
    """`tags: one, two #three`: YAML reads ` #three` as a comment, but the person who wrote it
    meant a tag. Only a comment made of hashtags alone on a flow `tags:` line counts."""
    block = locate(text)
    if block is None:
        return []
    found = []
    for match in _TAGS_LINE_COMMENT.finditer(block.yaml_text):
        comment = match.group("comment")
        if _HASHTAGS.fullmatch(comment):
            found += [tag for tag in re.split(r"[\s,#]+", comment) if tag and not tag.isdigit()]
    return found


def _dedupe_casefold(tags: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    result: list[str] = []
    for tag in tags:
        if tag_key(tag) not in seen:
            seen.add(tag_key(tag))
            result.append(tag)
    return tuple(result)


HEAD_BYTES = 65536  # a memory's stm_id is looked for this far into a note


def names_id(root: Path, path: str, memory_id: str) -> bool:
    """Whether the note at `path` has an `stm_id: <memory_id>` line near its start, read as
    bytes (for a note whose frontmatter does not parse: which memory it was)."""
    quoted = rb"[\"']?"
    line = re.compile(rb"^stm_id:[ \t]*" + quoted + re.escape(memory_id.encode()) + quoted
                      + rb"[ \t]*\r?$", re.MULTILINE)
    try:
        with open(root / path, "rb") as handle:
            return line.search(handle.read(HEAD_BYTES)) is not None
    except OSError:
        return False
