"""Memory notes: file names, creation, moves, wikilinks and the "Related" section.

One file-name scheme for every memory note vaultmem names: `YYYY-MM-DD <slug>.md` (SPEC,
"vault conventions"); a taken name gets `-2`, `-3`, … (`numbered_names`), whether the note is
created (save, merge) or moved (archive, promote, restore). Nothing is ever overwritten.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath

from vaultmem.core.intake import normalise_tags
from vaultmem.errors import FrontmatterError, NoteError
from vaultmem.vault.conflicts import add_copy_links
from vaultmem.vault.frontmatter import Scalar, load_yaml, parse, render_scalar, splice_stm
from vaultmem.vault.notes import Note, parse_note
from vaultmem.vault.paths import resolve_folder
from vaultmem.vault.writes import create_new, guarded_write, move_file

RELATED_START = "<!-- vaultmem:related -->"
RELATED_END = "<!-- /vaultmem:related -->"
MAX_COLLISIONS = 1000
# File systems cap names at 255 bytes; leave room for the date, a collision suffix and ".md".
_MAX_SLUG_BYTES = 200
SLUG_MAX = 60
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


def file_slug(title: str, *, max_len: int = SLUG_MAX) -> str:
    """A real slug for a file name: lower case, words joined by hyphens, accents dropped,
    cut at a word; passed through `slugify` so it is always a safe, non-empty name."""
    text = unicodedata.normalize("NFKD", title.replace("'", "").replace("\u2019", ""))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = unicodedata.normalize("NFC", text).casefold()
    slug = ""
    for word in re.findall(r"[^\W_]+", text):
        longer = f"{slug}-{word}" if slug else word[:max_len]
        if len(longer) > max_len:
            break
        slug = longer
    return slugify(slug, max_len=max_len)


def memory_filename(day: date, title: str) -> str:
    return f"{day.isoformat()} {file_slug(title)}.md"


def numbered_names(filename: str) -> Iterator[str]:
    """`filename`, then `<stem>-2.md`, `<stem>-3.md`, … (MAX_COLLISIONS names in all)."""
    stem = filename.removesuffix(".md")
    yield filename
    for number in range(2, MAX_COLLISIONS + 1):
        yield f"{stem}-{number}.md"


def place(folder: Path, filename: str, put: Callable[[Path], None]) -> str:
    """Put a file into `folder` under the first free name of `numbered_names(filename)`; `put`
    must raise FileExistsError when its target exists (never overwrite). Returns the name."""
    for name in numbered_names(filename):
        try:
            put(folder / name)
        except FileExistsError:
            continue
        return name
    raise NoteError(f"{MAX_COLLISIONS} notes named like {filename!r} exist in {folder}")


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
    clean_tags = normalise_tags(tags)
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
) -> tuple[str, str]:
    """Write a new memory note in `folder` as `YYYY-MM-DD <slug>.md` (the title stays human
    inside it); never overwrites. Returns its vault-relative path and its text."""
    text = render_memory_note(
        title=title, body=body, stm_fields=stm_fields, tags=tags, newline=newline
    )
    data = text.encode("utf-8")
    folder_rel, folder_abs = resolve_folder(root, folder)
    name = place(folder_abs, memory_filename(day, title), lambda target: create_new(target, data))
    return (f"{folder_rel}/{name}" if folder_rel else name), text


def move_note(root: Path, path: str, folder: str) -> str | None:
    """Move the note at `path` into `folder` under its own name (numbered when taken); returns
    its new vault-relative path, or None when no note is at `path` any more."""
    folder_rel, folder_abs = resolve_folder(root, folder)
    source = root / path
    try:
        name = place(folder_abs, PurePosixPath(path).name, lambda target: move_file(source, target))
    except FileNotFoundError:  # moved or deleted by its user meanwhile: nothing was done
        return None
    return f"{folder_rel}/{name}" if folder_rel else name


def rename_note(root: Path, path: str, name: str) -> str | None:
    """Give the note at `path` the file name `name` in its own folder; None (nothing done)
    when that name is taken or no note is at `path` any more. Never overwrites."""
    parent = PurePosixPath(path).parent
    target = (parent / name).as_posix() if str(parent) != "." else name
    try:
        move_file(root / path, root / target)
    except (FileExistsError, FileNotFoundError):
        return None
    return target


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


@dataclass(frozen=True)
class NoteEdit:
    """What vaultmem changes in a memory note: its stm_* keys (None removes one), and when
    given its Related section, its conflicting-copies section and one appended section (added
    only when its first line, a vaultmem marker, is not in the note yet)."""

    stm: Mapping[str, Scalar]
    related: Sequence[str] | None = None
    copy_links: Sequence[str] = ()
    section: str = ""


def edit_memory_note(
    root: Path, path: str, text: str, file_hash: str, edit: NoteEdit
) -> tuple[Note, str] | None:
    """Apply `edit` to the note's `text` (as read, hashing to `file_hash`) and write the result
    in one guarded write: ConcurrentEdit when the file changed since it was read. Returns the
    note as written and its text (nothing is read back), or None when nothing changes."""
    new_text = splice_stm(text, edit.stm)
    if edit.related is not None:
        new_text = set_related_section(new_text, edit.related)
    if edit.copy_links:
        new_text = add_copy_links(new_text, edit.copy_links)
    marker = edit.section.partition("\n")[0].strip()
    if edit.section and marker not in new_text:
        new_text = f"{new_text.rstrip()}\n\n{edit.section.strip()}\n"
    if new_text == text:
        return None
    data = new_text.encode("utf-8")
    written = guarded_write(root / path, data, file_hash)
    return parse_note(path, data, mtime_ns=written.st_mtime_ns), new_text
