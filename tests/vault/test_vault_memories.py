"""Memory notes: slugs, creation without overwrites, wikilinks and Related sections."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import ConcurrentEdit, NoteError, PathOutsideVault
from vaultmem.vault.frontmatter import parse
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.memories import (
    RELATED_END,
    RELATED_START,
    NoteEdit,
    create_memory_note,
    edit_memory_note,
    memory_filename,
    move_note,
    set_related_section,
    slugify,
    wikilink,
)
from vaultmem.vault.notes import parse_note
from vaultmem.vault.writes import sha256_bytes

FORBIDDEN = set('*"\\/<>:|?#^[]')
DAY = date(2024, 5, 1)


class TestSlug:
    @pytest.mark.parametrize(
        ("text", "slug"),
        [
            ("Prefer pytest fixtures", "Prefer pytest fixtures"),
            ('a/b: c? [d] #e ^f |g| <h> *i* "j" \\k', "a b c d e f g h i j k"),
            ("  spaces \n\t collapse  ", "spaces collapse"),
            ("Ünïcödé 日本語 🎉", "Ünïcödé 日本語 🎉"),
            ("...hidden.", "hidden"),
            ("???", "memory"),
            ("", "memory"),
        ],
    )
    def test_examples(self, text: str, slug: str) -> None:
        assert slugify(text) == slug

    def test_truncates_at_a_word(self) -> None:
        assert slugify("word " * 30, max_len=22) == "word word word word"

    @given(st.text())
    @settings(max_examples=300, deadline=None)
    def test_always_a_safe_visible_file_name(self, text: str) -> None:
        slug = slugify(text)
        assert slug and not FORBIDDEN & set(slug)
        assert not slug.startswith(".") and slug == slug.strip()
        assert len(slug) <= 60 and len(memory_filename(DAY, text).encode()) < 255
        assert IgnoreRules().reason(f"memories/{memory_filename(DAY, text)}") is None


class TestCreate:
    def test_writes_a_parseable_note(self, tmp_path: Path) -> None:
        rel, text = create_memory_note(
            tmp_path,
            "memories",
            day=DAY,
            title="Use: fixtures",
            body="First line\r\nsecond #inline",
            stm_fields={"stm_id": "abc", "stm_use_count": 1, "stm_strength": 1.0},
            tags=["#python", "testing/pytest"],
        )
        assert rel == "memories/2024-05-01 use-fixtures.md"
        raw = (tmp_path / rel).read_bytes()
        assert raw.decode("utf-8") == text
        assert raw == (
            b"---\ntags:\n  - python\n  - testing/pytest\nstm_id: abc\nstm_use_count: 1\n"
            b"stm_strength: 1.0\n---\n# Use: fixtures\n\nFirst line\nsecond #inline\n"
        )
        note = parse_note(rel, raw)
        assert note.tags == ("python", "testing/pytest", "inline")
        assert note.title == "Use: fixtures"

    def test_crlf_and_collisions_never_overwrite(self, tmp_path: Path) -> None:
        paths = [
            create_memory_note(
                tmp_path,
                "m",
                day=DAY,
                title="Same",
                body=f"n{i}",
                stm_fields={"stm_id": str(i)},
                newline="\r\n",
            )[0]
            for i in range(3)
        ]
        assert paths == ["m/2024-05-01 same.md", "m/2024-05-01 same-2.md", "m/2024-05-01 same-3.md"]
        for i, rel in enumerate(paths):
            text = (tmp_path / rel).read_bytes().decode("utf-8")
            assert "\n" not in text.replace("\r\n", "")
            assert parse(text)[0] == {"stm_id": str(i)}

    def test_refusals(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError):
            create_memory_note(tmp_path, "m", day=DAY, title="t", body="b", stm_fields={"x": 1})
        with pytest.raises(PathOutsideVault):
            create_memory_note(tmp_path, "../out", day=DAY, title="t", body="b", stm_fields={})


class TestMove:
    def test_a_taken_name_gets_a_number_and_nothing_is_overwritten(self, tmp_path: Path) -> None:
        for folder in ("memories", "memories/archive"):
            (tmp_path / folder).mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / "2024-05-01 tea.md").write_text(folder, encoding="utf-8")
        moved = move_note(tmp_path, "memories/2024-05-01 tea.md", "memories/archive")
        assert moved == "memories/archive/2024-05-01 tea-2.md"
        assert (tmp_path / moved).read_text(encoding="utf-8") == "memories"
        assert (tmp_path / "memories/archive/2024-05-01 tea.md").read_text(
            encoding="utf-8") == "memories/archive"
        assert not (tmp_path / "memories/2024-05-01 tea.md").exists()

    def test_a_note_gone_meanwhile_is_no_move(self, tmp_path: Path) -> None:
        assert move_note(tmp_path, "memories/gone.md", "archive") is None
        assert not (tmp_path / "archive" / "gone.md").exists()


NOTE = "---\nstm_id: x\nstm_use_count: 1\n---\n# T\n\nBody.\n"


class TestEdit:
    def _note(self, tmp_path: Path, text: str = NOTE) -> tuple[Path, str]:
        path = tmp_path / "n.md"
        path.write_bytes(text.encode("utf-8"))
        return path, sha256_bytes(text.encode("utf-8"))

    def test_stm_and_sections_in_one_write_read_back_from_what_was_written(
        self, tmp_path: Path
    ) -> None:
        path, digest = self._note(tmp_path)
        edit = NoteEdit({"stm_use_count": 2}, related=["[[A]]"], copy_links=["[[n 2]]"],
                        section="<!-- vaultmem:merged -->\nmerged\n<!-- /vaultmem:merged -->")
        result = edit_memory_note(tmp_path, "n.md", NOTE, digest, edit)
        assert result is not None
        note, text = result
        assert path.read_text(encoding="utf-8") == text
        assert note.fields == {"stm_id": "x", "stm_use_count": 2} and note.path == "n.md"
        assert "[[A]]" in text and "[[n 2]]" in text and text.count("vaultmem:merged -->") == 2
        again = edit_memory_note(tmp_path, "n.md", text, note.file_hash,
                                 NoteEdit({}, section=edit.section))
        assert again is None  # the section is there already: nothing to write

    def test_a_note_changed_since_it_was_read_is_not_written(self, tmp_path: Path) -> None:
        path, digest = self._note(tmp_path)
        path.write_text(NOTE + "User line.\n", encoding="utf-8")
        with pytest.raises(ConcurrentEdit):
            edit_memory_note(tmp_path, "n.md", NOTE, digest, NoteEdit({"stm_use_count": 2}))
        assert path.read_text(encoding="utf-8") == NOTE + "User line.\n"


class TestWikilink:
    def test_shortest_unique_form(self) -> None:
        paths = ["a/Note.md", "b/note.md", "c/Unique.md", "d/Unique.png"]
        assert wikilink("c/Unique.md", paths) == "[[Unique]]"
        assert wikilink("a/Note.md", paths) == "[[a/Note]]"
        assert wikilink("c/Unique.md", paths, alias="Unique") == "[[Unique]]"
        assert wikilink("c/Unique.md", paths, alias="Shown | [x]") == "[[Unique|Shown x]]"

    def test_unlinkable_name(self) -> None:
        with pytest.raises(ValueError):
            wikilink("a/b#c.md", [])


class TestRelated:
    def test_append_then_replace_keeps_everything_else(self) -> None:
        text = "---\r\nstm_id: x\r\n---\r\n# T\r\n\r\nBody without final newline"
        first = set_related_section(text, ["[[A]]", "B"])
        assert first == (
            text
            + "\r\n\r\n"
            + RELATED_START
            + "\r\n## Related\r\n\r\n- [[A]]\r\n- [[B]]\r\n"
            + RELATED_END
            + "\r\n"
        )
        edited = first + "User text after the section.\r\n"
        second = set_related_section(edited, ["[[C|c]]"])
        assert second == (
            text
            + "\r\n\r\n"
            + RELATED_START
            + "\r\n## Related\r\n\r\n- [[C|c]]\r\n"
            + RELATED_END
            + "\r\nUser text after the section.\r\n"
        )
        assert set_related_section(second, ["[[C|c]]"]) == second
        assert set_related_section(second, []) == text + "\r\n\r\nUser text after the section.\r\n"

    def test_unbalanced_markers_are_refused(self) -> None:
        with pytest.raises(NoteError):
            set_related_section(f"body\n{RELATED_START}\nuser kept this\n", ["[[A]]"])
