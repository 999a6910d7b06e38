"""Locate, read and surgically edit a note's YAML frontmatter.

Writes never re-dump YAML: `splice_stm` rewrites only vaultmem's own top-level ``stm_*`` lines
and leaves every other character of the note exactly as it was, then proves it by re-parsing.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

import yaml

from vaultmem.errors import FrontmatterError
from vaultmem.vault.yamlsafe import load_yaml

__all__ = [
    "BOM",
    "FrontmatterBlock",
    "Scalar",
    "load_yaml",
    "locate",
    "parse",
    "render_scalar",
    "splice_stm",
]

BOM = "\ufeff"
Scalar = str | int | float | bool | None

_STM_KEY = re.compile(r"stm_[A-Za-z0-9_]+")
_KEY_LINE = re.compile(r"^(stm_[A-Za-z0-9_]+)[ \t]*:(?:[ \t]|\r?\n|$)")
_PLAIN_UNSAFE_START = set("-?:,[]{}#&*!|>'\"%@`")
# Characters that must never appear raw in a spliced line: YAML line breaks (NEL, LS, PS),
# characters YAML forbids in a stream, and the BOM.
_ESCAPE_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_ANY_NUMBER = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"
    r"|^0o[0-7]+$|^0x[0-9a-fA-F]+$|^[-+]?\.(?:inf|nan)$",
    re.IGNORECASE,
)
_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


@dataclass(frozen=True)
class FrontmatterBlock:
    """Where the frontmatter sits in a note's text (offsets are str indices)."""

    start: int  # the opening `---` line, after a BOM if any
    end: int  # just past the closing fence line, including its newline
    yaml_text: str
    newline: str  # "\n" or "\r\n", from the opening fence line


def _line_end(text: str, pos: int) -> tuple[int, int]:
    """(end of the line's content, start of the next line) for the line starting at `pos`."""
    nl = text.find("\n", pos)
    if nl < 0:
        return len(text), len(text)
    content_end = nl - 1 if nl > pos and text[nl - 1] == "\r" else nl
    return content_end, nl + 1


def _is_fence(line: str, closing: bool) -> bool:
    stripped = line.rstrip(" \t")
    return stripped == "---" or (closing and stripped == "...")


def locate(text: str) -> FrontmatterBlock | None:
    """Find the frontmatter block by Obsidian's rule, or None when the note has none."""
    start = 1 if text.startswith(BOM) else 0
    content_end, pos = _line_end(text, start)
    if pos == content_end or not _is_fence(text[start:content_end], closing=False):
        return None  # no opening fence, or an opening fence with nothing after it
    newline = "\r\n" if text[content_end:pos] == "\r\n" else "\n"
    yaml_start = pos
    while pos < len(text):
        line_end, next_pos = _line_end(text, pos)
        if _is_fence(text[pos:line_end], closing=True):
            return FrontmatterBlock(start, next_pos, text[yaml_start:pos], newline)
        pos = next_pos
    return None


def _first_line_number(text: str, block: FrontmatterBlock) -> int:
    """Lines before the YAML text (the opening fence), for error messages."""
    return text.count("\n", 0, block.start) + 1


def parse(text: str) -> tuple[dict[str, object], str, FrontmatterBlock | None]:
    """(fields, body, block). The body never includes the BOM or the frontmatter."""
    block = locate(text)
    if block is None:
        return {}, text.removeprefix(BOM), None
    fields = load_yaml(block.yaml_text, line_offset=_first_line_number(text, block))
    return fields, text[block.end :], block


def render_scalar(value: Scalar) -> str:
    """YAML text for one scalar, safe to splice after ``key: ``.

    Strings stay plain when they load back as the same string, or when they are ISO dates or
    timestamps (those load back as date/datetime; callers compare by parsing the value, and
    Obsidian shows them as dates). Everything else is double-quoted with escapes.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _render_float(value)
    if isinstance(value, str):
        return _render_string(value)
    raise TypeError(f"cannot render {type(value).__name__} as a frontmatter scalar")


def _render_float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")  # same shortest digits, no exponent
    return text if "." in text else text + ".0"


#: A word YAML reads as the same string in 1.1 and 1.2 (letters first; no number, no null or
#: boolean word): plain without asking a loader. Anything else takes the loaders' verdict.
_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf"})
#: Per-device use counts as vaultmem writes them (`laptop-3f2a=4 desk.1=2`): never a number,
#: a boolean, null or a date, and nothing a plain scalar must not hold.
_USES_BY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*=[0-9]+( [A-Za-z0-9][A-Za-z0-9._\-]*=[0-9]+)*")
#: The timestamps vaultmem writes (ISO 8601, seconds, an offset): plain, as the loaders' path
#: decides for every valid one.
_ISO_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})")


def _plain_without_loading(value: str) -> bool:
    """True when `value` is known to render plain (the same answer `_render_string`'s loaders
    give; tests/vault/test_vault_frontmatter.py compares the two). A flush writes a few such
    values per note, and the loaders were most of its time."""
    if _PLAIN_WORD.fullmatch(value):
        return value.casefold() not in _YAML_WORDS
    if _USES_BY.fullmatch(value):
        return True
    if _ISO_TIMESTAMP.fullmatch(value):
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            return False
        return True
    return False


def _render_string(value: str) -> str:
    if _SURROGATE.search(value):
        raise ValueError("string contains lone surrogates; it cannot be written as UTF-8")
    if _plain_without_loading(value):
        return value
    return _render_string_by_loading(value)


def _render_string_by_loading(value: str) -> str:
    if not _plain_is_safe(value):
        return _double_quoted(value)
    try:
        loaded = load_yaml(f"k: {value}").get("k")
        loaded_1_1 = yaml.safe_load(f"k: {value}")["k"]
    except (FrontmatterError, yaml.YAMLError, ValueError):  # ValueError: e.g. month 13
        return _double_quoted(value)
    if isinstance(loaded, dt.date) and _looks_like_timestamp(value):
        return value
    # Stay a string for YAML 1.2 readers (Obsidian), YAML 1.1 readers and this loader alike.
    if loaded == value and loaded_1_1 == value and not _ANY_NUMBER.match(value):
        return value
    return _double_quoted(value)


def _looks_like_timestamp(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9:.+\-Zz ]+)?", value))


def _plain_is_safe(value: str) -> bool:
    if not value or value != value.strip(" \t") or _ESCAPE_CHARS.search(value):
        return False
    if value[0] in _PLAIN_UNSAFE_START or value in ("---", "..."):
        return False
    return not (": " in value or " #" in value or value.endswith(":"))


def _double_quoted(value: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        if char in _NAMED_ESCAPES:
            return _NAMED_ESCAPES[char]
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return '"' + re.sub(r'[\\"]|' + _ESCAPE_CHARS.pattern, escape, value) + '"'


def _detect_newline(text: str) -> str:
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _split_lines(text: str) -> list[str]:
    # str.splitlines also splits on \r, \x0b, \u2028…; only "\n" ends a line here.
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _is_continuation(line: str) -> bool:
    """True for lines that belong to the value of the key line above them."""
    if line[:1] in (" ", "\t"):
        return True
    body = line.rstrip("\r\n")
    return body == "-" or body.startswith("- ")


def _key_spans(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level stm_* key -> [first, last) line indices of its key line and continuations."""
    spans: dict[str, tuple[int, int]] = {}
    for index, line in enumerate(lines):
        match = _KEY_LINE.match(line)
        if not match:
            continue
        key = match.group(1)
        if key in spans:
            raise FrontmatterError(f"frontmatter has the key {key!r} twice; not edited")
        spans[key] = (index, _span_end(lines, index))
    return spans


def _span_end(lines: list[str], index: int) -> int:
    end = index + 1
    probe = end
    while probe < len(lines):
        if not lines[probe].strip():
            probe += 1  # blank lines belong to the value only if the value goes on after them
            continue
        if not _is_continuation(lines[probe]):
            break
        probe += 1
        end = probe
    return end


def _check_keys(updates: Mapping[str, Scalar]) -> None:
    for key in updates:
        if not isinstance(key, str) or not key.startswith("stm_"):
            raise ValueError(f"vaultmem only edits its own stm_* keys, not {key!r}")
        if not _STM_KEY.fullmatch(key):
            raise ValueError(f"invalid stm key {key!r}: use letters, digits and underscores")


def splice_stm(text: str, updates: Mapping[str, Scalar]) -> str:
    """Set (or, with None, remove) top-level stm_* keys, touching nothing else."""
    _check_keys(updates)
    block = locate(text)
    if block is None:
        return _with_new_block(text, updates)
    before = load_yaml(block.yaml_text, line_offset=_first_line_number(text, block))
    lines = _split_lines(block.yaml_text)
    spans = _key_spans(lines)
    for key in updates:
        if key in before and key not in spans:
            raise FrontmatterError(f"{key!r} is not on a line of its own; not edited")
    replaced: dict[int, tuple[int, list[str]]] = {}
    appended: list[str] = []
    for key, value in updates.items():
        if key in spans:
            first, end = spans[key]
            ending = "\r\n" if lines[first].endswith("\r\n") else "\n"
            new = [] if value is None else [f"{key}: {render_scalar(value)}{ending}"]
            replaced[first] = (end, new)
        elif value is not None:
            appended.append(f"{key}: {render_scalar(value)}{block.newline}")
    new_yaml = _rebuild(lines, replaced, appended)
    if new_yaml == block.yaml_text:
        return text
    yaml_start = _line_end(text, block.start)[1]
    yaml_end = yaml_start + len(block.yaml_text)
    result = text[:yaml_start] + new_yaml + text[yaml_end:]
    _verify(text, result, before, updates)
    return result


def _rebuild(lines: list[str], replaced: dict[int, tuple[int, list[str]]], tail: list[str]) -> str:
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replaced:
            end, new = replaced[index]
            out.extend(new)
            index = end
        else:
            out.append(lines[index])
            index += 1
    return "".join(out + tail)


def _with_new_block(text: str, updates: Mapping[str, Scalar]) -> str:
    newline = _detect_newline(text)
    lines = [f"{k}: {render_scalar(v)}{newline}" for k, v in updates.items() if v is not None]
    if not lines:
        return text
    bom = BOM if text.startswith(BOM) else ""
    block = f"---{newline}{''.join(lines)}---{newline}"
    result = bom + block + text[len(bom) :]
    _verify(text, result, {}, updates)
    return result


def _verify(
    old: str,
    new: str,
    before: dict[str, object],
    updates: Mapping[str, Scalar],
) -> None:
    """Re-parse the result and prove that only the requested stm_* values changed."""
    old_block = locate(old)
    block = locate(new)
    if block is None:
        raise FrontmatterError("internal check failed: the edited note has no frontmatter")
    old_body = old[old_block.end :] if old_block else old.removeprefix(BOM)
    if new[block.end :] != old_body or new[: block.start] != old[: block.start]:
        raise FrontmatterError("internal check failed: the edit would change the note body")
    try:
        after = load_yaml(block.yaml_text)
    except FrontmatterError as exc:
        raise FrontmatterError(f"internal check failed: the edit would break: {exc}") from None
    for key in (set(before) | set(after)) - set(updates):
        if not _same(before.get(key, _MISSING), after.get(key, _MISSING)):
            raise FrontmatterError(f"internal check failed: the edit would change {key!r}")
    for key, value in updates.items():
        _check_requested(key, value, after)
    if old_block is not None:
        _check_untouched_lines(old_block.yaml_text, block.yaml_text, set(updates))


def _check_requested(key: str, value: Scalar, after: dict[str, object]) -> None:
    if value is None:
        ok = key not in after
    else:
        ok = key in after and _same(after[key], _loaded_scalar(render_scalar(value)))
        if isinstance(value, str) and not isinstance(after.get(key), str | dt.date):
            ok = False
    if not ok:
        raise FrontmatterError(f"internal check failed: {key!r} did not get the requested value")


@functools.lru_cache(maxsize=1024)
def _loaded_scalar(rendered: str) -> object:
    """What a reader gets for `k: <rendered>` (scalars only: immutable, so shared safely)."""
    return load_yaml(f"k: {rendered}")["k"]


def _check_untouched_lines(old_yaml: str, new_yaml: str, keys: set[str]) -> None:
    if _lines_without(old_yaml, keys) != _lines_without(new_yaml, keys):
        raise FrontmatterError("internal check failed: the edit would change other lines")


def _lines_without(yaml_text: str, keys: set[str]) -> list[str]:
    lines = _split_lines(yaml_text)
    spans = _key_spans(lines)
    skip = {i for key in keys if key in spans for i in range(*spans[key])}
    return [line for i, line in enumerate(lines) if i not in skip]


class _Missing:
    pass


_MISSING = _Missing()


def _same(a: object, b: object) -> bool:
    """Structural equality where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b
