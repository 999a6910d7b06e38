"""Editing a memory's own words keeps every other byte: property tests over generated memory
notes (any frontmatter shape, LF or CRLF, with or without a title line, a Related section and
text after it), plus the guarded write refusing a concurrent edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.vault.vault_strategies import safe_text, yaml_lines
from vaultmem.errors import ConcurrentEdit, FrontmatterError, InvalidInput
from vaultmem.vault.frontmatter import locate, parse
from vaultmem.vault.memories import set_related_section
from vaultmem.vault.memory_text import (
    replace_text,
    set_tags,
    set_title,
    text_span,
    write_memory_text,
)
from vaultmem.vault.writes import sha256_bytes

line = st.one_of(safe_text, st.sampled_from(["", "- item", "## Heading", "text #tag 🎉",
                                               "---", "stm_id: in the body", "  indented"]))
content = st.lists(line, min_size=1, max_size=6).map("\n".join).filter(lambda t: t.strip())
tag = st.from_regex(r"[a-z][a-z0-9_/-]{0,10}", fullmatch=True)


@st.composite
def memory_notes(draw: st.DrawFn) -> str:
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    lines, _ = draw(yaml_lines())
    lines = [ln for ln in lines if not ln.startswith("stm_id")] + ["stm_id: m-1"]
    head = f"---{nl}{''.join(ln + nl for ln in lines)}---{nl}"
    body = []
    if draw(st.booleans()):
        body += [f"# {draw(st.sampled_from(['Title', 'Sam prefers Restic', 'x y z']))}", ""]
    body += draw(st.lists(line, max_size=5))
    text = head + nl.join(body) + (nl if body else "")
    if draw(st.booleans()):
        text = set_related_section(text, ["[[Other note]]", "[[Second|alias]]"])
        if draw(st.booleans()):
            text += f"A line the user wrote after the section.{nl}"
    try:
        parse(text)
    except FrontmatterError:
        assume(False)
    return text


def _block_text(text: str) -> str:
    block = locate(text)
    assert block is not None
    return text[:block.end]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(memory_notes(), content)
def test_replacing_the_text_changes_only_the_text(note: str, new: str) -> None:
    start, end = text_span(note)
    edited = replace_text(note, new)
    new_start, new_end = text_span(edited)
    assert new_start == start and edited[:start] == note[:start]  # frontmatter and title
    assert edited[new_end:] == note[end:]  # vaultmem's sections and what follows them
    nl = "\r\n" if "\r\n" in _block_text(note) else "\n"
    region = edited[new_start:new_end]
    assert region.strip(nl).replace(nl, "\n").strip("\n") == new.strip("\n")
    assert parse(edited)[0] == parse(note)[0]
    assert replace_text(edited, new) == edited  # idempotent


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(memory_notes(), st.lists(tag, max_size=4, unique=True))
def test_setting_tags_changes_only_the_tags_property(note: str, tags: list[str]) -> None:
    edited = set_tags(note, tags)
    before, after = parse(note)[0], parse(edited)[0]
    assert after.get("tags", []) == tags
    before.pop("tags", None)
    after.pop("tags", None)
    assert after == before
    assert edited[locate(edited).end:] == note[locate(note).end:]  # type: ignore[union-attr]
    assert set_tags(edited, tags) == edited


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(memory_notes(), st.sampled_from(["New title", "Sam's NAS: scrub (monthly)"]))
def test_setting_the_title_changes_only_the_title_line(note: str, title: str) -> None:
    edited = set_title(note, title)
    assert parse(edited)[0] == parse(note)[0]
    assert f"# {title}" in edited.splitlines()
    start = text_span(note)[0]
    new_start = text_span(edited)[0]
    assert edited[new_start:] == note[start:]  # text, sections, everything after: unchanged


def test_text_with_a_vaultmem_marker_is_refused() -> None:
    note = "---\nstm_id: m\n---\n# T\n\nold\n"
    with pytest.raises(InvalidInput, match="section markers"):
        replace_text(note, "new\n<!-- vaultmem:related -->\nx")


def test_a_concurrent_edit_is_refused_and_nothing_written(tmp_path: Path) -> None:
    note = "---\nstm_id: m\n---\n# T\n\nold text\n"
    path = tmp_path / "m.md"
    path.write_text(note, encoding="utf-8")
    read_hash = sha256_bytes(note.encode())
    path.write_text(note + "the user's own line\n", encoding="utf-8")  # meanwhile, in Obsidian
    with pytest.raises(ConcurrentEdit):
        write_memory_text(tmp_path, "m.md", replace_text(note, "new text"), read_hash)
    assert path.read_text(encoding="utf-8") == note + "the user's own line\n"
