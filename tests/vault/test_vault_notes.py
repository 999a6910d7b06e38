"""Reading notes: titles, aliases, tags, links, headings, hashes and malformed input."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultmem.errors import NoteError, NotFound, PathOutsideVault
from vaultmem.vault.inline import Link
from vaultmem.vault.names import note_names
from vaultmem.vault.notes import (
    Heading,
    RawNote,
    parse_note,
    property_values,
    read_note,
    title_of,
)
from vaultmem_testing.sample_vault import REPO

CORPORA = REPO.parent / "shared" / "corpora"


class TestTitle:
    def test_frontmatter_title_wins(self) -> None:
        note = parse_note("a/b.md", b"---\ntitle: From FM\n---\n# Heading\n")
        assert note.title == "From FM"

    @pytest.mark.parametrize(("path", "raw", "title"), [
        ("Adjusting Monitor Brightness in Linux.md", b"# Problem\n\nxrandr...\n",
         "Adjusting Monitor Brightness in Linux"),
        ("Cryptography.md", b"---\ntags: [crypto]\n---\n# FAQs\n", "Cryptography"),
        ("a/b.md", b"---\ntitle: 42\n---\n## Two\n# One\n# Other\n", "b"),
        ("Display Concepts.md", b"Table of Contents\n===\n", "Display Concepts"),
    ])
    def test_the_file_name_not_the_first_heading(self, path: str, raw: bytes,
                                                 title: str) -> None:
        """Obsidian shows, links and searches a note by its file name (or `title`)."""
        assert parse_note(path, raw).title == title

    def test_the_first_heading_stays_known(self) -> None:
        note = parse_note("a/b.md", b"---\ntitle: 42\n---\n## Two\n# One\n# Other\n")
        assert note.first_heading == "One"
        assert parse_note("a/b.md", b"Setext Title\n===\n").first_heading == "Setext Title"

    def test_a_memory_note_is_titled_by_the_heading_vaultmem_wrote(self) -> None:
        raw = b"---\nstm_id: 1b2c\n---\n# Sam prefers Restic over Borg\n\nSam prefers...\n"
        note = parse_note("memories/2026-11-06 sam-prefers-restic-over-borg.md", raw)
        assert note.title == "Sam prefers Restic over Borg"

    def test_file_stem_otherwise(self) -> None:
        assert parse_note("a/My Note.md", b"just text").title == "My Note"
        assert title_of("x/2024-01-01 a.b.md") == "2024-01-01 a.b"


class TestAliases:
    @pytest.mark.parametrize(
        ("yaml_text", "expected"),
        [
            ("aliases: [One, Two]", ("One", "Two")),
            ("aliases:\n  - One\n  - One\n  - 3", ("One", "3")),
            ("aliases: One, Two", ("One", "Two")),
            ("alias: Solo", ("Solo",)),
            ("aliases:", ()),
            ("aliases: {nested: map}", ()),
        ],
    )
    def test_forms(self, yaml_text: str, expected: tuple[str, ...]) -> None:
        note = parse_note("n.md", f"---\n{yaml_text}\n---\n".encode())
        assert note.aliases == expected


class TestProperties:
    """Short textual property values: what a note is filed under, a name a query may use."""

    @pytest.mark.parametrize(
        ("yaml_text", "expected"),
        [
            ("speaker: Melanie\nsession: 3\ndate: 2023-05-08T13:56", ("Melanie",)),
            ("people: [Ann Lee, Bob, Ann Lee]\ndone: true", ("Ann Lee", "Bob")),
            ("author:\n  - Ann   Lee\n  - 12", ("Ann Lee",)),
            ("status: active\nstm_status: active\nstm_type: preference", ("active",)),
            ("title: T\naliases: [A]\ntags: [x]\ncssclasses: [wide]", ()),
            ("source: https://example.com/a\nup: '[[Home]]'\ncreated: '{{date}}'", ()),
            ("summary: one two three four five six\nmood: tired but fine",
             ("tired but fine",)),
            ("code: X1\nnested: {a: b}\nempty:", ()),
        ],
    )
    def test_forms(self, yaml_text: str, expected: tuple[str, ...]) -> None:
        note = parse_note("n.md", f"---\n{yaml_text}\n---\nbody\n".encode())
        assert note.properties == expected

    def test_a_note_without_frontmatter_has_none(self) -> None:
        assert parse_note("n.md", b"speaker: Melanie\n").properties == ()

    @settings(max_examples=200, deadline=None)
    @given(st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=80),
                  st.lists(st.text(max_size=30), max_size=4)),
        max_size=6))
    @example({"0": "¹¼"})  # digits that are not decimal are no letters
    def test_only_short_text_of_other_keys(self, fields: dict[str, object]) -> None:
        found = property_values(fields)
        assert len(found) == len(set(found))
        given_texts = {
            " ".join(str(v).split()) for key, value in fields.items()
            if not key.startswith("stm_")
            for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)
        }
        for value in found:
            assert value in given_texts
            assert len(value) <= 60 and len(value.split()) <= 5
            assert any(ch.isalpha() for ch in value)


class TestTags:
    @pytest.mark.parametrize(
        ("yaml_text", "expected"),
        [
            ("tags: [a, '#b', nested/c]", ("a", "b", "nested/c")),
            ("tags:\n  - a\n  - '#b'", ("a", "b")),
            ("tags: a, b c", ("a", "b", "c")),
            ("tags: '#a #b'", ("a", "b")),
            ("tag: single", ("single",)),
            ("tags: [2024, x2024]", ("x2024",)),
            ("tags: [A, a, B]", ("A", "B")),
            ("tags: ~", ()),
        ],
    )
    def test_frontmatter_forms(self, yaml_text: str, expected: tuple[str, ...]) -> None:
        assert parse_note("n.md", f"---\n{yaml_text}\n---\n".encode()).tags == expected

    @pytest.mark.parametrize(
        ("yaml_text", "expected", "warned"),
        [
            ("tags: one, two #three", ("one", "two", "three"), "#three"),
            ("tags: [a, b] #c #d", ("a", "b", "c", "d"), "#c, #d"),
            ("tag: x #y", ("x", "y"), "#y"),
            ("tags: one # a comment, not a tag", ("one",), None),
            ("tags: one #todo later", ("one",), None),
            ("title: T #notatag\ntags: one", ("one",), None),
        ],
    )
    def test_a_hashtag_comment_on_the_tags_line(
        self, yaml_text: str, expected: tuple[str, ...], warned: str | None
    ) -> None:
        """YAML (and so Obsidian) reads ` #three` as a comment; the writer meant a tag."""
        note = parse_note("n.md", f"---\n{yaml_text}\n---\n".encode())
        assert note.tags == expected
        if warned is None:
            assert note.warnings == ()
        else:
            [warning] = note.warnings
            assert warning.startswith(f"{warned} in the tags line is a YAML comment")

    def test_inline_tags_and_what_is_not_a_tag(self) -> None:
        body = (
            "# Heading is not a tag\n\n"
            "Text #real and #nested/tag and #Real (duplicate) and #123 and #1a.\n"
            "`#inline_code` http://example.com/#fragment a#b \\#escaped [[Note#Heading]]\n"
            "%% #commented %%\n\n"
            "```\n#fenced\n```\n\n"
            "    #indented_code\n\n"
            "## Heading with #htag\n"
            "- list #listtag\n"
        )
        note = parse_note("n.md", f"---\ntags: [fm]\n---\n{body}".encode())
        assert note.tags == ("fm", "real", "nested/tag", "1a", "htag", "listtag")


class TestLinks:
    def test_wikilinks_and_embeds(self) -> None:
        body = (
            "See [[Target]] and [[Folder/Other#Section|shown]] and [[Doc#^block1]].\n"
            "Also [[Page#Head^blk|Alias]] ![[image.png]] ![[Embedded#Part]] [[#Local]].\n"
            "`[[in code]]` and\n\n```\n[[in fence]]\n```\n\n"
            "| a | b |\n|---|---|\n| [[Table\\|alias]] | x |\n"
        )
        assert parse_note("n.md", body.encode()).links == (
            Link("Target", None, None, None, False),
            Link("Folder/Other", "Section", None, "shown", False),
            Link("Doc", None, "block1", None, False),
            Link("Page", "Head", "blk", "Alias", False),
            Link("image.png", None, None, None, True),
            Link("Embedded", "Part", None, None, True),
            Link("", "Local", None, None, False),
            Link("Table", None, None, "alias", False),
        )


class TestStructure:
    def test_headings_have_file_line_numbers(self) -> None:
        note = parse_note("n.md", b"---\na: 1\n---\n# One\n\ntext\n\n## Two ##\n")
        assert note.headings == (Heading(1, "One", 4), Heading(2, "Two", 8))

    def test_hashes_size_and_body(self) -> None:
        raw = "\ufeff---\r\nstm_x: 1\r\n---\r\nbody ü\r\n".encode()
        note = parse_note("n.md", raw, mtime_ns=7)
        assert note.body == "body ü\r\n"
        assert note.body_hash == hashlib.sha256("body ü\r\n".encode()).hexdigest()
        assert note.file_hash == hashlib.sha256(raw).hexdigest()
        assert (note.size, note.mtime_ns, note.fields) == (len(raw), 7, {"stm_x": 1})

    def test_any_yaml_value_type_is_fine(self) -> None:
        raw = (
            b"---\ntitle: [not, a, string]\ntags: {a: 1}\naliases: 2024-01-01\n"
            b"created: 2024-01-01T10:00:00Z\nnothing:\nset: !!set {a, b}\nbin: !!binary aGk=\n---\n"
        )
        note = parse_note("n.md", raw)
        assert note.frontmatter_error is None
        assert note.title == "n" and note.tags == () and note.aliases == ("2024-01-01",)


class TestMalformed:
    @pytest.mark.parametrize(
        "raw",
        [
            b"---\ntitle: a\ntitle: b\n---\nthe body #tag\n",
            b"---\ntitle: 'unclosed\n---\nthe body #tag\n",
            b"---\n\tbad: tab\n---\nthe body #tag\n",
            b"---\n- a list\n---\nthe body #tag\n",
        ],
    )
    def test_malformed_frontmatter_is_reported_and_body_kept(self, raw: bytes) -> None:
        note = parse_note("n.md", raw)
        assert note.frontmatter_error
        assert note.fields == {}
        assert note.body == "the body #tag\n"
        assert note.tags == ("tag",)

    def test_invalid_utf8_is_replaced_with_a_warning(self) -> None:
        note = parse_note("n.md", b"caf\xe9 #t")
        assert note.body == "caf\ufffd #t"
        assert note.warnings == ("invalid UTF-8 replaced",)

    def test_binary_is_refused(self) -> None:
        with pytest.raises(NoteError, match="binary"):
            parse_note("n.md", b"\x89PNG\x00\x00")

    @pytest.mark.parametrize("raw", [b"# Title\n\nbefore\x00after\n", b"\x00" * 64,
                                     b"\xff\xfeh\x00i\x00\n\x00"])
    def test_a_nul_inside_or_only_nuls_is_binary(self, raw: bytes) -> None:
        with pytest.raises(NoteError, match="binary"):
            parse_note("n.md", raw)

    def test_nul_padding_after_the_text_is_ignored_and_reported(self) -> None:
        text = b"# Magic Numbers\n\nA magic number is a constant with #meaning.\n"
        raw = text + b"\x00" * 3836
        note = parse_note("Magic Numbers (in computer science).md", raw)
        assert note.body == text.decode() and note.tags == ("meaning",)
        assert note.size == len(raw) and note.file_hash == hashlib.sha256(raw).hexdigest()
        assert note.warnings == ("3836 NUL bytes of padding after the text ignored",)


@given(raw=st.binary(max_size=300).filter(lambda b: b"\x00" not in b))
@settings(max_examples=300, deadline=None)
def test_parse_note_never_raises_on_random_bytes(raw: bytes) -> None:
    note = parse_note("n.md", b"---\n" + raw if raw[:1] == b"a" else raw)
    assert note.size in (len(raw), len(raw) + 4)


@given(text=st.text(alphabet=st.sampled_from(list("ab #[]|^!`\n-:%\\/_1é")), max_size=200))
@settings(max_examples=300, deadline=None)
def test_parse_note_never_raises_on_markdown_noise(text: str) -> None:
    note = parse_note("n.md", text.encode())
    assert all(tag and not tag.isdigit() for tag in note.tags)


class TestReadNote:
    def test_reads_with_or_without_suffix(self, tmp_path: Path) -> None:
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "n.md").write_bytes(b"# Title\n")
        for user_path in ("sub/n.md", "sub/n", str(tmp_path / "sub" / "n.md")):
            note = read_note(tmp_path, user_path)
            assert (note.path, note.title, note.size) == ("sub/n.md", "n", 8)
            assert note.mtime_ns == (tmp_path / "sub" / "n.md").stat().st_mtime_ns

    def test_refusals(self, tmp_path: Path) -> None:
        (tmp_path / "folder.md").mkdir()
        with pytest.raises(NotFound):
            read_note(tmp_path, "missing")
        with pytest.raises(PathOutsideVault):
            read_note(tmp_path, "../outside.md")
        with pytest.raises(NoteError):
            read_note(tmp_path, "folder.md")


def _corpus_files() -> list[Path]:
    return sorted(CORPORA.rglob("*.md")) if CORPORA.is_dir() else []


@pytest.mark.corpus
@pytest.mark.skipif(not _corpus_files(), reason="no corpora in /work/shared/corpora")
def test_every_corpus_note_parses() -> None:
    parsed = 0
    for path in _corpus_files():
        if not path.is_file():
            continue
        try:
            note = parse_note(path.name, path.read_bytes())
        except NoteError as exc:
            assert "binary" in exc.message
            continue
        assert note.title
        parsed += 1
    assert parsed > 0


@pytest.mark.parametrize("text", [
    "# Heading\n\nBody #inline.\n",
    "---\ntitle: Own title\naliases: [One, two]\ntags: [a, b]\nspeaker: Melanie\n---\nBody.\n",
    "---\naliases: Solo\ntags: x y\n---\n# First\n",
    "---\nbroken: [\n---\nBody.\n",
])
def test_names_read_from_the_frontmatter_are_those_the_parsed_note_gives(text: str) -> None:
    raw = RawNote("folder/A note.md", text.encode("utf-8"), 7, False)
    note, names = raw.parse(), note_names(raw)
    assert (names.title, names.body_hash, names.size) == (note.title, note.body_hash, note.size)
    others = [n for n in (*note.aliases, *note.properties) if n != note.title]
    assert names.aliases == tuple(dict.fromkeys(others))
    assert set(names.tags) <= set(note.tags)


def test_a_binary_note_has_no_names() -> None:
    with pytest.raises(NoteError):
        note_names(RawNote("a.md", b"\x00\x01binary", 0, False))
    with pytest.raises(NoteError):
        RawNote("a.md", b"\x00\x01binary", 0, False).check()
