"""Hypothesis strategies for random but valid Obsidian notes, and an independent stm stripper."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

WORDS = ["alpha", "Beta", "gamma δ", "日本語", "emoji 🎉", "x", "a b c", "ü", "#tag", "dash-y"]
STM_NAMES = ["stm_id", "stm_use_count", "stm_strength", "stm_last_used", "stm_status", "stm_type"]
_STM_START = re.compile(r"^stm_[A-Za-z0-9_]+[ \t]*:")


@dataclass(frozen=True)
class GeneratedNote:
    text: str
    newline: str
    stm_keys: tuple[str, ...]


plain_word = st.sampled_from(WORDS)
safe_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Cn", "Co"), blacklist_characters="\u2028\u2029\ufeff"
    ),
    max_size=12,
)


def _double_quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _single_quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


scalar_text = st.one_of(
    plain_word,
    safe_text.map(_double_quoted),
    safe_text.map(_single_quoted),
    st.integers(-(10**9), 10**9).map(str),
    st.sampled_from(
        ["1.5", "-0.25", "1e5", ".inf", "true", "False", "null", "~", "01234", "12:30"]
    ),
    st.sampled_from(["2024-01-02", "2023-11-05T10:20:30Z", "2024-02-30", "yes", "=", ""]),
)
trailing = st.sampled_from(["", " ", "\t", "  # trailing comment"])


@st.composite
def entry_lines(draw: st.DrawFn, key: str) -> list[str]:
    """The lines (without newlines) of one top-level key and its value."""
    kind = draw(st.sampled_from(["scalar", "flow", "block", "block0", "map", "literal"]))
    if kind == "scalar":
        return [f"{key}: {draw(scalar_text)}{draw(trailing)}"]
    words = plain_word.filter(lambda w: not w.startswith("#"))
    items = draw(st.lists(st.one_of(words, safe_text.map(_double_quoted)), max_size=3))
    if kind == "flow":
        return [f"{key}: [{', '.join(items)}]{draw(trailing)}"]
    if kind in ("block", "block0"):
        indent = "  " if kind == "block" else ""
        return [f"{key}:", *(f"{indent}- {item}" for item in items)]
    if kind == "map":
        return [f"{key}:", f"  sub: {draw(scalar_text)}", "  # nested comment", "  other: [1, 2]"]
    return [f"{key}: |", "  first line", "", "  after a blank line"]


@st.composite
def notes(draw: st.DrawFn) -> GeneratedNote:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    body = newline.join(draw(st.lists(body_line, max_size=6)))
    if draw(st.booleans()) and body:
        body += newline
    shape = draw(st.sampled_from(["block", "block", "block", "empty", "none", "unclosed"]))
    if shape == "none":
        return GeneratedNote(bom + body, newline, ())
    if shape == "unclosed":
        return GeneratedNote(f"{bom}---{newline}title: x{newline}", newline, ())
    lines, stm_keys = draw(yaml_lines()) if shape == "block" else ([], ())
    closing = draw(st.sampled_from(["---", "---", "...", "---  "]))
    yaml_text = "".join(line + newline for line in lines)
    text = f"{bom}---{newline}{yaml_text}{closing}{newline}{body}"
    return GeneratedNote(text, newline, stm_keys)


@st.composite
def yaml_lines(draw: st.DrawFn) -> tuple[list[str], tuple[str, ...]]:
    user_keys = draw(
        st.lists(
            st.sampled_from(["title", "tags", "aliases", "created", "n", "Ü", "x y"]),
            unique=True,
            max_size=5,
        )
    )
    stm_keys = draw(st.lists(st.sampled_from(STM_NAMES), unique=True, max_size=3))
    keys = draw(st.permutations(user_keys + stm_keys))
    lines: list[str] = []
    for key in keys:
        if draw(st.integers(0, 4)) == 0:
            # No whitespace-only lines: see test_removal_that_would_change_a_block_scalar.
            lines.append(draw(st.sampled_from(["# a comment", "", "#stm_id: 9"])))
        if key in stm_keys and draw(st.booleans()):
            lines.append(f"{key}: {draw(scalar_text)}")
        else:
            lines.extend(draw(entry_lines(key)))
    return lines, tuple(stm_keys)


body_line = st.one_of(
    st.sampled_from(["---", "...", "stm_id: in the body", "# Heading", "", "text #tag 🎉", "  "]),
    safe_text,
)
stm_value = st.one_of(
    st.none(),
    st.text(max_size=20),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.datetimes().map(lambda d: d.isoformat()),
    st.sampled_from(["true", "01234", "12:30", "- x", "a: b", "#c", " pad ", "[x]", "null"]),
)
new_stm_key = st.one_of(
    st.sampled_from(STM_NAMES), st.from_regex(r"stm_[a-z0-9_]{1,8}", fullmatch=True)
)
stm_updates = st.dictionaries(new_stm_key, stm_value, max_size=5)


def updates_for(note: GeneratedNote) -> st.SearchStrategy[dict[str, object]]:
    """Updates that hit the note's existing stm keys about half of the time."""
    keys = st.one_of(st.sampled_from(note.stm_keys), new_stm_key) if note.stm_keys else new_stm_key
    return st.dictionaries(keys, stm_value, max_size=5)


def strip_stm_lines(yaml_text: str) -> list[str]:
    """The block's lines minus top-level stm_* lines and their value lines (test's own rule)."""
    lines = yaml_text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        if not _STM_START.match(lines[index]):
            kept.append(lines[index])
            index += 1
            continue
        index += 1
        while index < len(lines) and _is_value_line(lines, index):
            index += 1
    return kept


def _is_value_line(lines: list[str], index: int) -> bool:
    line = lines[index].rstrip("\r")
    if (line.startswith((" ", "\t", "- ")) and line.strip()) or line == "-":
        return True
    if line.strip():
        return False
    rest = [candidate for candidate in lines[index + 1 :] if candidate.strip()]
    return bool(rest) and rest[0].startswith((" ", "\t", "- "))
