"""Property tests: splicing stm_* keys never changes anything else in a note."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from vault_strategies import GeneratedNote, notes, stm_updates, strip_stm_lines, updates_for

from vaultmem.errors import FrontmatterError
from vaultmem.vault.frontmatter import BOM, load_yaml, locate, parse, render_scalar, splice_stm

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
Value = str | int | float | bool | None


def _matches(loaded: object, wanted: Value) -> bool:
    if isinstance(wanted, bool) or wanted is None:
        return loaded is wanted
    if isinstance(wanted, float):
        if not isinstance(loaded, float):
            return False
        return (math.isnan(wanted) and math.isnan(loaded)) or loaded == wanted
    if isinstance(wanted, int):
        return type(loaded) is int and loaded == wanted
    if isinstance(loaded, dt.datetime):
        return loaded == dt.datetime.fromisoformat(wanted)
    if isinstance(loaded, dt.date):
        return loaded == dt.date.fromisoformat(wanted)
    return loaded == wanted


def _original_parses(text: str) -> bool:
    try:
        parse(text)
    except FrontmatterError:
        return False
    return True


def _same(a: object, b: object) -> bool:
    return repr(a) == repr(b)  # NaN-safe structural comparison for test purposes


@SETTINGS
@given(note=notes(), data=st.data())
def test_splice_changes_only_stm_lines(note: GeneratedNote, data: st.DataObject) -> None:
    _check_splice(note, data.draw(updates_for(note)))


@pytest.mark.parametrize(
    ("text", "updates"),
    [
        ("---\r\ntitle: x\r\nstm_id: |\r\n  a\r\n\r\n  b\r\n---\r\nbody", {"stm_id": "v"}),
        ("---\ntags:\n- a\nstm_id:\n- b\n- c\n\nn: 1\n---\n", {"stm_id": None}),
        ("---\nstm_id:\n- b\ntitle: x\n---\n", {"stm_id": 3, "stm_new": None}),
    ],
)
def test_splice_examples_with_multiline_values(text: str, updates: dict[str, Value]) -> None:
    _check_splice(GeneratedNote(text, "\r\n" if "\r" in text else "\n", ()), updates)


def _check_splice(note: GeneratedNote, updates: dict[str, Value]) -> None:
    text = note.text
    if not _original_parses(text):
        with pytest.raises(FrontmatterError):
            splice_stm(text, updates)
        return
    before, body_before, block_before = parse(text)
    result = splice_stm(text, updates)
    after, body_after, block_after = parse(result)

    # The body and everything before the block (the BOM) are untouched.
    expected_body = body_before if block_before else text.removeprefix(BOM)
    if block_after is None:
        assert result == text
        assert all(value is None for value in updates.values())
        return
    assert body_after == expected_body
    assert result.startswith(BOM) == text.startswith(BOM)
    assert result.count(BOM) == text.count(BOM)

    # Every non-stm key and every stm key not updated reads back identically.
    for key in set(before) | set(after):
        if key not in updates:
            assert _same(before.get(key), after.get(key)), key
    for key, wanted in updates.items():
        if wanted is None:
            assert key not in after
        else:
            assert _matches(after[key], wanted), (key, wanted, after[key])

    # Byte for byte, only stm lines differ inside the block.
    if block_before is not None:
        assert strip_stm_lines(block_before.yaml_text) == strip_stm_lines(block_after.yaml_text)
        assert result[: block_after.start] == text[: block_before.start]
    else:
        assert strip_stm_lines(block_after.yaml_text) == [""]
        nl = note.newline if "\n" in text else "\n"  # the file's own style, LF if none
        assert result.removeprefix(BOM).startswith("---" + nl)

    # Exactly one block: the old body follows the (only) block we wrote or kept.
    assert locate(result[: block_after.end]) == block_after

    # Idempotent.
    assert splice_stm(result, updates) == result


@SETTINGS
@given(note=notes(), updates=stm_updates)
@example(note=GeneratedNote("---\nstm_id: in the body\n---", "\n", ()), updates={"stm_id": None})
def test_removing_what_was_added_restores_the_block(
    note: GeneratedNote, updates: dict[str, Value]
) -> None:
    text = note.text
    if not _original_parses(text) or locate(text) is None:
        return
    # keys already in the block, as parsed: a body that starts with `---` is a block too
    present = set(parse(text)[0]) | set(note.stm_keys)
    fresh = {key: value for key, value in updates.items() if key not in present}
    added = splice_stm(text, fresh)
    restored = splice_stm(added, dict.fromkeys(fresh))
    assert restored == text


@given(value=st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none()))
@settings(max_examples=500, deadline=None)
def test_render_scalar_round_trips(value: Value) -> None:
    rendered = render_scalar(value)
    assert "\n" not in rendered and "\r" not in rendered
    loaded = load_yaml(f"k: {rendered}")["k"]
    if isinstance(value, str) and isinstance(loaded, dt.date):
        assert rendered == value  # ISO dates stay plain and read back as dates
    else:
        assert _matches(loaded, value)


@given(text=st.text(), key=st.text(min_size=1).filter(lambda k: not k.startswith("stm_")))
@settings(max_examples=100, deadline=None)
def test_non_stm_keys_are_refused(text: str, key: str) -> None:
    with pytest.raises(ValueError):
        splice_stm(text, {key: 1})
