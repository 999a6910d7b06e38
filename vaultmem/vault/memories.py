"""Memory notes: file names, creation, wikilinks and the "Related" section."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from pathlib import Path, PurePosixPath

from vaultmem.errors import FrontmatterError, NoteError
from vaultmem.vault.frontmatter import load_yaml, parse, render_scalar
from vaultmem.vault.paths import resolve_folder
from vaultmem.vault.writes import create_new

RELATED_START = "<!-- vaultmem:related -->"
RELATED_END = "<!-- /vaultmem:related -->"
MAX_COLLISIONS = 1000
# File systems cap names at 255 bytes; leave room for the date, a collision suffix and ".md".
_MAX_SLUG_BYTES = 200
_FORBIDDEN = re.compile(r'[*"\\/<>:|?#^\[\]\x00-\x1f\x7f]')
_WIKILINK_UNSAFE = set("[]|#^")


def slugify(text: str, *, max_len: int = 60) -> str:
    """A file-name-safe version of `text` that Obsidian accepts; never empty."""
    slug = _FORBIDDEN.sub(" ", unicodedata.normalize("NFC", text))
    slug = " ".join(slug.split())
    slug = _truncate(slug, max_len).strip(" .")
    return slug or "memory"


def _truncate(slug: str, max_len: int) -> str:
    if len(slug) > max_len:
        cut = slug[:max_len]
        slug = cut.rsplit(" ", 1)[0] if " " in cut[max_len // 2 :] else cut
    while len(slug.encode("utf-8")) > _MAX_SLUG_BYTES:
        slug = slug[:-1]
    return slug


def memory_filename(day: date, title: str) -> str:
    return f"{day.isoformat()} {slugify(title)}.md"


def _with_suffix(filename: str, number: int) -> str:
    return filename if number == 1 else f"{filename.removesuffix('.md')} {number}.md"


def render_memory_note(
    *,
    title: str,
    body: str,
    stm_fields: Mapping[str, str | int | float | bool],
    tags: Sequence[str] = (),
    newline: str = "\n",
) -> str:
    """The full text of a new memory note, checked by parsing it back."""
    if newline not in ("\n", "\r\n"):
        raise ValueError("newline must be '\\n' or '\\r\\n'")
    for key in stm_fields:
        if not key.startswith("stm_"):
            raise ValueError(f"memory fields must be stm_* keys, not {key!r}")
    clean_tags = [t.strip().lstrip("#") for t in tags if t.strip().lstrip("#")]
    lines = ["---"]
    if clean_tags:
        lines.append("tags:")
        lines.extend(f"  - {render_scalar(tag)}" for tag in clean_tags)
    lines.extend(f"{key}: {render_scalar(value)}" for key, value in stm_fields.items())
    lines += ["---", f"# {' '.join(title.split()) or 'Memory'}"]
    content = body.replace("\r\n", "\n").strip("\n")
    if content:
        lines += ["", *content.split("\n")]
    text = newline.join(lines) + newline
    _check_rendered(text, stm_fields, clean_tags)
    return text


def _check_rendered(
    text: str, stm_fields: Mapping[str, str | int | float | bool], tags: list[str]
) -> None:
    fields, _, _ = parse(text)
    expected = {k: load_yaml(f"k: {render_scalar(v)}")["k"] for k, v in stm_fields.items()}
    if tags:
        expected = {"tags": tags, **expected}
    if repr(fields) != repr(expected):  # repr: NaN compares equal to itself
        raise FrontmatterError("internal check failed: the new memory note does not read back")


def create_memory_note(
    root: Path,
    folder: str,
    *,
    day: date,
    title: str,
    body: str,
    stm_fields: Mapping[str, str | int | float | bool],
    tags: Sequence[str] = (),
    newline: str = "\n",
) -> str:
    """Write a new memory note in `folder`; returns its vault-relative path. Never overwrites."""
    text = render_memory_note(
        title=title, body=body, stm_fields=stm_fields, tags=tags, newline=newline
    )
    folder_rel, folder_abs = resolve_folder(root, folder)
    filename = memory_filename(day, title)
    for number in range(1, MAX_COLLISIONS + 1):
        name = _with_suffix(filename, number)
        try:
            create_new(folder_abs / name, text.encode("utf-8"))
        except FileExistsError:
            continue
        return f"{folder_rel}/{name}" if folder_rel else name
    raise NoteError(f"{MAX_COLLISIONS} notes named like {filename!r} exist in {folder_rel}")


def _note_name(path: str) -> str:
    name = PurePosixPath(path).name
    return name[:-3] if name.lower().endswith(".md") else name


def _without_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def wikilink(target_path: str, all_paths: Collection[str], alias: str | None = None) -> str:
    """`[[Name|alias]]` in the shortest form Obsidian resolves to `target_path`."""
    name = _note_name(target_path)
    if _WIKILINK_UNSAFE & set(_without_md(target_path)):
        raise ValueError(f"{target_path!r} contains characters a wikilink cannot hold")
    notes = {p for p in all_paths if p.lower().endswith(".md")} | {target_path}
    same_name = [p for p in notes if _note_name(p).casefold() == name.casefold()]
    link = name if len(same_name) == 1 else _without_md(target_path)
    if alias is not None:
        alias = " ".join(re.sub(r"[\[\]|]", " ", alias).split())
    if not alias or alias == name:
        return f"[[{link}]]"
    return f"[[{link}|{alias}]]"


def _newline_of(text: str) -> str:
    index = text.find("\n")
    return "\r\n" if index > 0 and text[index - 1] == "\r" else "\n"


def _marker_lines(text: str) -> tuple[int, int] | None:
    """[start, end) offsets of the vaultmem Related section, markers included, or None."""
    start = _line_start_of(text, RELATED_START)
    end_marker = _line_start_of(text, RELATED_END)
    if start is None and end_marker is None:
        return None
    if start is None or end_marker is None or end_marker < start:
        raise NoteError("the vaultmem Related section markers are unbalanced; not edited")
    line_end = text.find("\n", end_marker)
    return start, len(text) if line_end < 0 else line_end + 1


def _line_start_of(text: str, marker: str) -> int | None:
    match = re.search(rf"^[ \t]*{re.escape(marker)}[ \t]*\r?$", text, re.M)
    return match.start() if match else None


def set_related_section(text: str, links: Sequence[str], *, heading: str = "Related") -> str:
    """Add or replace the vaultmem-managed Related section (bytes outside it are kept).

    `links` may be wikilinks (`[[Name|alias]]`, as `wikilink` returns) or bare targets, which
    are wrapped in `[[...]]`. An empty `links` removes a previously written section. When a
    section is appended to a note that does not end with a newline, one is added first.
    """
    newline = _newline_of(text)
    span = _marker_lines(text)
    section = _render_section(links, heading, newline) if links else ""
    if span is not None:
        return text[: span[0]] + section + text[span[1] :]
    if not section:
        return text
    if text and not text.endswith("\n"):
        text += newline
    if text and not text.endswith(newline * 2):
        text += newline
    return text + section


def _render_section(links: Sequence[str], heading: str, newline: str) -> str:
    items = [
        link if link.startswith("[[") and link.endswith("]]") else f"[[{link}]]" for link in links
    ]
    lines = [RELATED_START, f"## {heading}", "", *(f"- {item}" for item in items), RELATED_END]
    return newline.join(lines) + newline
