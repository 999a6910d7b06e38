"""Examples for locating, loading, rendering and splicing frontmatter."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import FrontmatterError
from vaultmem.vault import frontmatter
from vaultmem.vault.frontmatter import (
    FrontmatterBlock,
    load_yaml,
    locate,
    parse,
    render_scalar,
    splice_stm,
)

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
)

MALFORMED = {
    "tab indentation": "title: x\n\tbad: 1\n",
    "unclosed quote": 'title: "never closed\n',
    "duplicate key": "title: a\ntitle: b\n",
    "billion laughs": BILLION_LAUGHS,
    "list at top": "- a\n- b\n",
    "scalar at top": "just text\n",
    "recursive alias": "a: &a [*a]\n",
    "python tag": "a: !!python/object:os.system [ls]\n",
    "deep nesting": "a: " + "[" * 300 + "]" * 300 + "\n",
}


class TestLocate:
    def test_basic_block(self) -> None:
        text = "---\ntitle: x\n---\nbody\n"
        assert locate(text) == FrontmatterBlock(0, 17, "title: x\n", "\n")

    def test_bom_crlf_and_trailing_spaces_on_fences(self) -> None:
        text = "\ufeff---  \r\na: 1\r\n---\t\r\nbody"
        block = locate(text)
        assert block is not None
        assert (block.start, block.yaml_text, block.newline) == (1, "a: 1\r\n", "\r\n")
        assert text[block.end :] == "body"

    def test_dots_close_the_block_and_last_line_may_lack_newline(self) -> None:
        block = locate("---\na: 1\n...")
        assert block is not None and block.yaml_text == "a: 1\n" and block.end == 12

    def test_empty_block(self) -> None:
        block = locate("---\n---\nbody")
        assert block is not None and block.yaml_text == "" and block.end == 8

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "body",
            "---",
            "---\n",
            "---\ntitle: x\n",
            " ---\na: 1\n---\n",
            "\n---\na: 1\n---\n",
            "----\na: 1\n---\n",
            "--- x\na: 1\n---\n",
        ],
    )
    def test_no_block(self, text: str) -> None:
        assert locate(text) is None

    def test_unclosed_block_is_body(self) -> None:
        fields, body, block = parse("---\ntitle: x\n")
        assert (fields, body, block) == ({}, "---\ntitle: x\n", None)


class TestLoadYaml:
    def test_obsidian_like_scalars(self) -> None:
        fields = load_yaml(
            "zip: 01234\ntime: 12:30\nyes: yes\nn: 12\nf: 1.5\ne: 1e3\nb: true\nnull: ~\n"
            "d: 2024-01-02\nts: 2024-01-02T03:04:05Z\nbad_date: 2023-02-30\nu: 1_000\n"
        )
        assert fields == {
            "zip": "01234",
            "time": "12:30",
            "yes": "yes",
            "n": 12,
            "f": 1.5,
            "e": 1000.0,
            "b": True,
            "null": None,
            "d": dt.date(2024, 1, 2),
            "ts": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
            "bad_date": "2023-02-30",
            "u": "1_000",
        }

    def test_empty_and_comment_only(self) -> None:
        assert load_yaml("") == {}
        assert load_yaml("# just a comment\n\n") == {}

    def test_anchors_and_merge_keys_work(self) -> None:
        fields = load_yaml("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\nlist: [*b]\n")
        assert fields["other"] == {"x": 1, "y": 2}
        assert fields["list"] == [{"x": 1}]

    def test_unknown_local_tag_reads_the_plain_value(self) -> None:
        assert load_yaml("a: !custom value\nb: !seq [1]\n") == {"a": "value", "b": [1]}

    @pytest.mark.parametrize("name", sorted(MALFORMED))
    def test_malformed_raises(self, name: str) -> None:
        with pytest.raises(FrontmatterError):
            load_yaml(MALFORMED[name])

    def test_billion_laughs_fails_fast(self) -> None:
        started = time.perf_counter()
        with pytest.raises(FrontmatterError, match="expands"):
            load_yaml(BILLION_LAUGHS)
        assert time.perf_counter() - started < 2.0

    def test_very_deep_nesting_does_not_crash_the_process(self) -> None:
        with pytest.raises(FrontmatterError):
            load_yaml("a: " + "[" * 60_000 + "]" * 60_000)

    def test_error_says_where(self) -> None:
        with pytest.raises(FrontmatterError, match="line 3"):
            parse("---\ntitle: x\ntitle: y\n---\n")


class TestRenderScalar:
    @pytest.mark.parametrize(
        ("value", "rendered"),
        [
            (None, "null"),
            (True, "true"),
            (False, "false"),
            (42, "42"),
            (1.0, "1.0"),
            (1.5e-7, "0.00000015"),
            (1e22, "10000000000000000000000.0"),
            (float("inf"), ".inf"),
            (float("-inf"), "-.inf"),
            (float("nan"), ".nan"),
            ("plain words", "plain words"),
            ("emoji 🎉 ü", "emoji 🎉 ü"),
            ("true", '"true"'),
            ("yes", '"yes"'),
            ("01234", '"01234"'),
            ("12:30", '"12:30"'),
            ("42", '"42"'),
            ("a: b", '"a: b"'),
            ("#c", '"#c"'),
            ("x #c", '"x #c"'),
            ("", '""'),
            (" pad", '" pad"'),
            ('say "hi"', 'say "hi"'),
            ('"q"', '"\\"q\\""'),
            ("line\nbreak", '"line\\nbreak"'),
            ("nel\x85", '"nel\\x85"'),
            ("ls\u2028", '"ls\\u2028"'),
            ("2024-01-02T03:04:05+00:00", "2024-01-02T03:04:05+00:00"),
        ],
    )
    def test_examples(self, value: str | int | float | bool | None, rendered: str) -> None:
        assert render_scalar(value) == rendered

    def test_lone_surrogate_is_refused(self) -> None:
        with pytest.raises(ValueError):
            render_scalar("\ud800")


class TestSplice:
    def test_replaces_in_place_and_appends_new_keys_in_order(self) -> None:
        text = "---\ntitle: 'Keep'  # c\nstm_use_count: 1\nother: x\n---\nbody\n"
        result = splice_stm(text, {"stm_use_count": 2, "stm_b": "x", "stm_a": True})
        assert result == (
            "---\ntitle: 'Keep'  # c\nstm_use_count: 2\nother: x\nstm_b: x\nstm_a: true\n"
            "---\nbody\n"
        )

    def test_removes_multiline_value_but_keeps_following_blank_line(self) -> None:
        text = "---\nstm_list:\n  - a\n\n  - b\n\nnext: 1\n---\n"
        assert splice_stm(text, {"stm_list": None}) == "---\n\nnext: 1\n---\n"

    def test_crlf_and_bom_are_kept(self) -> None:
        text = "\ufeff---\r\na: 1\r\n---\r\nbody\r\n"
        assert splice_stm(text, {"stm_x": 1}) == "\ufeff---\r\na: 1\r\nstm_x: 1\r\n---\r\nbody\r\n"

    def test_note_without_frontmatter_gets_a_block_in_its_newline_style(self) -> None:
        assert splice_stm("\ufeffline\r\nmore", {"stm_x": 1}) == (
            "\ufeff---\r\nstm_x: 1\r\n---\r\nline\r\nmore"
        )
        assert splice_stm("", {"stm_x": None}) == ""

    def test_empty_block_is_filled(self) -> None:
        assert splice_stm("---\n---\nbody", {"stm_x": "v"}) == "---\nstm_x: v\n---\nbody"

    def test_unclosed_block_gets_a_new_block_and_stays_body(self) -> None:
        text = "---\ntitle: x\n"
        result = splice_stm(text, {"stm_x": 1})
        assert result == "---\nstm_x: 1\n---\n---\ntitle: x\n"
        assert parse(result)[1] == text

    def test_nested_stm_key_is_not_top_level(self) -> None:
        text = "---\nmeta:\n  stm_x: 1\n---\n"
        result = splice_stm(text, {"stm_x": 2})
        assert result == "---\nmeta:\n  stm_x: 1\nstm_x: 2\n---\n"

    def test_no_change_returns_the_same_text(self) -> None:
        text = "---\nstm_x: 1\n---\n"
        assert splice_stm(text, {"stm_x": 1, "stm_gone": None}) is text

    @pytest.mark.parametrize("name", sorted(MALFORMED))
    def test_malformed_frontmatter_is_never_spliced(self, name: str) -> None:
        with pytest.raises(FrontmatterError):
            splice_stm(f"---\n{MALFORMED[name]}---\nbody\n", {"stm_x": 1})

    @pytest.mark.parametrize(
        "yaml_text",
        [
            '"stm_x": 1\n',  # quoted key: not a line vaultmem owns
            "{stm_x: 1}\n",  # flow mapping at the top
            "  title: x\n  stm_y: 1\n",  # an indented top-level mapping
        ],
    )
    def test_unusual_layouts_are_refused_not_mangled(self, yaml_text: str) -> None:
        with pytest.raises(FrontmatterError):
            splice_stm(f"---\n{yaml_text}---\n", {"stm_x": 2})

    def test_removal_that_would_change_a_block_scalar_is_refused(self) -> None:
        # Deleting stm_id would glue the spaces-only line to the literal above it, making it
        # part of `title`. Verification notices, and the note is left alone.
        text = "---\ntitle: |\n  a\nstm_id: 1\n   \nn: 1\n---\n"
        with pytest.raises(FrontmatterError, match="title"):
            splice_stm(text, {"stm_id": None})
        assert splice_stm(text, {"stm_id": 2}) == text.replace("stm_id: 1", "stm_id: 2")

    def test_only_stm_keys(self) -> None:
        with pytest.raises(ValueError):
            splice_stm("---\n---\n", {"title": "x"})
        for bad in ("stm_bad key", "stm_x\n", "stm_", "stm_é"):
            with pytest.raises(ValueError):
                splice_stm("---\n---\n", {bad: "x"})


# ---- the rendering fast path gives the loaders' answer ------------------------------------

_WORDS = st.text(alphabet="abcxyzABCXYZ019_-.:= ", min_size=1, max_size=12)
_USES = st.lists(st.tuples(st.text(alphabet="az09._-", min_size=1, max_size=8),
                           st.integers(0, 10**6)), min_size=1, max_size=3).map(
    lambda pairs: " ".join(f"{device}={count}" for device, count in pairs))
_TIMESTAMPS = st.builds(
    lambda y, mo, d, h, mi, s, frac, zone: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"
                                           f"{frac}{zone}",
    st.integers(0, 9999), st.integers(0, 19), st.integers(0, 39), st.integers(0, 29),
    st.integers(0, 69), st.integers(0, 69), st.sampled_from(["", ".5", ".123456"]),
    st.sampled_from(["Z", "+00:00", "-07:30", "+14:00"]),
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_WORDS, _USES, _TIMESTAMPS, st.sampled_from(
    ["active", "archived", "promoted", "yes", "No", "ON", "null", "Null", "inf", "nan", "y",
     "e5", "a-b", "x_1", "2026-11-24T20:07:49+00:00", "2026-02-30T00:00:00+00:00", "=",
     "a=1", "vm-08a9=1 desk=2", "-a=1", "1=2", "0x1=3"])))
def test_strings_rendered_without_a_loader_are_what_the_loaders_say(value: str) -> None:
    if frontmatter._plain_without_loading(value):
        assert frontmatter._render_string_by_loading(value) == value
    assert load_yaml(f"k: {render_scalar(value)}")["k"] in (value, _as_timestamp(value))


def _as_timestamp(value: str) -> object:
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def test_an_impossible_date_is_quoted_not_an_error() -> None:
    assert render_scalar("2026-13-24T20:07:49+00:00") == '"2026-13-24T20:07:49+00:00"'
