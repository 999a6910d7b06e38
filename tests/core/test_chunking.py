"""Heading-aware chunking of note bodies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.chunking import (
    Chunk,
    chunk_markdown,
    embedding_text,
    title_words,
    without_vaultmem_sections,
)


def squash(text: str) -> str:
    return "".join(text.split())


def paragraph(word: str, words: int) -> str:
    return " ".join(f"{word}{i}." if i % 12 == 11 else f"{word}{i}" for i in range(words))


def test_empty_and_blank_bodies() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("  \n\n\t\n") == []


def test_heading_paths() -> None:
    body = "\n".join(
        [
            "intro " + paragraph("i", 40),
            "# Setup",
            paragraph("s", 40),
            "## Linux",
            paragraph("l", 40),
            "## macOS",
            paragraph("m", 40),
            "# Usage #",
            paragraph("u", 40),
        ]
    )
    chunks = chunk_markdown(body, max_chars=1000, min_chars=100)
    assert [c.heading for c in chunks] == ["", "Setup", "Setup > Linux", "Setup > macOS", "Usage"]
    assert [c.index for c in chunks] == [0, 1, 2, 3, 4]
    assert chunks[2].text.startswith("## Linux\n")


def test_headings_inside_code_fences_are_ignored() -> None:
    body = "# Real\n\n```bash\n# not a heading\necho hi\n```\n\n~~~\n## also not\n~~~\nend"
    chunks = chunk_markdown(body, min_chars=0)
    assert [c.heading for c in chunks] == ["Real"]
    assert "# not a heading" in chunks[0].text


def test_obsidian_tags_are_not_headings() -> None:
    chunks = chunk_markdown("#project some text\n\n#idea more", min_chars=0)
    assert [c.heading for c in chunks] == [""]


def test_short_sections_merge_into_the_next() -> None:
    body = "# A\nshort\n# B\nalso short\n# C\n" + paragraph("c", 60)
    chunks = chunk_markdown(body, max_chars=1000, min_chars=200)
    assert len(chunks) == 1
    assert chunks[0].heading == "A; B; C"
    assert chunks[0].text.startswith("# A\nshort\n\n# B")


def test_short_last_section_joins_previous() -> None:
    body = "# A\n" + paragraph("a", 60) + "\n# B\ntail"
    chunks = chunk_markdown(body, max_chars=1000, min_chars=200)
    assert [c.heading for c in chunks] == ["A; B"]


def test_long_section_splits_at_paragraphs() -> None:
    paragraphs = [paragraph(w, 25) for w in "abcdef"]
    chunks = chunk_markdown("\n\n".join(paragraphs), max_chars=400, min_chars=0)
    assert len(chunks) > 1
    assert all(len(chunk.text) <= 400 for chunk in chunks)
    # Paragraphs stay whole: each chunk is a run of complete paragraphs.
    assert [p for c in chunks for p in c.text.split("\n\n")] == paragraphs


def test_long_paragraph_splits_at_sentences_then_words() -> None:
    long_sentences = paragraph("w", 300)
    chunks = chunk_markdown(long_sentences, max_chars=150, min_chars=0)
    assert all(len(c.text) <= 150 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks[:-1])
    unbroken = "x" * 500
    hard = chunk_markdown(unbroken, max_chars=120, min_chars=0)
    assert [len(c.text) for c in hard] == [120, 120, 120, 120, 20]


def test_embedding_text() -> None:
    chunk = Chunk(0, "Setup > Linux", "apt install")
    assert embedding_text("Install", chunk) == "Install — Setup > Linux\n\napt install"
    assert embedding_text("Install", Chunk(0, "", "x")) == "Install\n\nx"
    assert embedding_text("", Chunk(0, "", "x")) == "x"


def test_embedding_text_keeps_only_the_titles_words() -> None:
    chunk = Chunk(0, "", "I went to a support group.")
    assert (embedding_text("2023-05-08 s01 t003 Melanie", chunk)
            == "Melanie\n\nI went to a support group.")
    # a title of dates and ids leaves the heading, or the chunk text alone
    assert embedding_text("2024-01-05", Chunk(0, "Log", "x")) == "Log\n\nx"
    assert embedding_text("D1_3", Chunk(0, "", "x")) == "x"


@pytest.mark.parametrize(("title", "words"), [
    ("2023-05-08 s01 t003 Melanie", "Melanie"),
    ("2024-01-05", ""),
    ("D1_3", ""),
    ("Session 3 – turn 12", "Session 3 – turn 12"),
    ("Session 3 – 8 May 2023", "Session 3 – 8 May 2023"),
    ("2026-11-02 prefers-dark-mode", "prefers-dark-mode"),
    ("Standup 10:30 v2", "Standup"),
    ("COVID-19 notes", "COVID-19 notes"),
    ("Café 東京 2024", "Café 東京 2024"),
    ("  Install   guide ", "Install guide"),
])
def test_title_words(title: str, words: str) -> None:
    assert title_words(title) == words


TITLE_TOKENS = st.one_of(
    st.text(alphabet="abcXYZéж東", min_size=1, max_size=8),
    st.text(alphabet="0123456789-_:.", min_size=1, max_size=10),
    st.text(alphabet="sStD0123456789_", min_size=1, max_size=6),
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
            min_size=1, max_size=8),
)


@given(st.lists(TITLE_TOKENS, max_size=8))
def test_title_words_properties(tokens: list[str]) -> None:
    title = " ".join(tokens)
    words = title_words(title)
    kept = words.split()
    assert title_words(words) == words  # idempotent
    # an in-order subsequence of the title's tokens
    remaining = iter(title.split())
    assert all(token in remaining for token in kept)
    for token in title.split():
        digits = sum(char.isdigit() for char in token)
        letters = sum(char.isalpha() for char in token)
        if not digits or token.isdigit() or letters > 2:
            assert token in kept  # words, bare numbers and anything without a digit stay
        else:
            assert token not in kept  # dates, times, ids: digits with ≤ 2 letters


def test_invalid_sizes() -> None:
    with pytest.raises(ValueError):
        chunk_markdown("x", max_chars=0)


LINES = st.one_of(
    st.text(alphabet="abc .!?#`~\t", max_size=60),
    st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 7), st.text("ab .", max_size=20)),
    st.sampled_from(["```", "~~~", "```py", "", "   ", "## H", "# H #"]),
)
BODIES = st.lists(LINES, max_size=40).map("\n".join)


@settings(max_examples=300)
@given(
    body=BODIES,
    max_chars=st.integers(min_value=1, max_value=300),
    min_chars=st.integers(min_value=0, max_value=400),
)
def test_chunks_keep_all_text_in_order_and_respect_max(
    body: str, max_chars: int, min_chars: int
) -> None:
    chunks = chunk_markdown(body, max_chars=max_chars, min_chars=min_chars)
    assert "".join(squash(c.text) for c in chunks) == squash(body)
    assert all(0 < len(c.text) <= max_chars and c.text.strip() for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))


@given(body=st.text(max_size=400), max_chars=st.integers(min_value=1, max_value=100))
def test_arbitrary_text_is_preserved(body: str, max_chars: int) -> None:
    chunks = chunk_markdown(body, max_chars=max_chars, min_chars=50)
    assert "".join(squash(c.text) for c in chunks) == squash(body)
    assert all(len(c.text) <= max_chars for c in chunks)


def test_vaultmems_own_sections_are_left_out_and_the_rest_kept() -> None:
    body = ("# T\n\nBody text.\n\n<!-- vaultmem:merged -->\n> [!info] Merged by vaultmem\n"
            "<!-- /vaultmem:merged -->\n\nMore.\n<!-- vaultmem:related -->\n## Related\n\n"
            "- [[x]]\n<!-- /vaultmem:related -->\n")
    assert without_vaultmem_sections(body) == "# T\n\nBody text.\n\n\nMore.\n"
    unclosed = "Text\n<!-- vaultmem:related -->\n## Related\n"
    assert without_vaultmem_sections(unclosed) == unclosed  # a user's edit is not dropped


@given(st.text(max_size=400))
@settings(max_examples=200, deadline=None)
def test_a_note_without_vaultmem_sections_is_unchanged(text: str) -> None:
    if "<!-- /vaultmem:" not in text:
        assert without_vaultmem_sections(text) == text
