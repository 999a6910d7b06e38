"""The chunks' `terms` column: each chunk's words analysed in its note's language, kept through
every write path (upserts, moves, renames, edits reusing stored chunks), searched beside text
and title; English notes searched exactly as before."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import lancedb
import pytest

from vaultmem.index.lance import LanceIndex
from vaultmem.index.tables import TERMS_COLUMN

from ._support import EMBEDDER, OPTIONS, all_notes, note

RUSSIAN = "Мои заметки о поездке в горы.\n\nМы взяли палатку и спальные мешки."
CHINESE = "周末我们去爬山。\n\n晚上做了红烧肉和米饭。"


def _terms(path: Path, note_path: str) -> list[str]:
    table = lancedb.connect(str(path)).open_table("chunks")
    rows = table.search().where(f"path = '{note_path}'").select(["idx", TERMS_COLUMN]).to_arrow()
    return [terms for _, terms in sorted(zip(rows.column("idx").to_pylist(),
                                             rows.column(TERMS_COLUMN).to_pylist(), strict=True))]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LanceIndex]:
    idx = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    idx.apply(upserts=[*all_notes(), note("ru/trip.md", RUSSIAN, language="ru"),
                       note("zh/food.md", CHINESE, language="zh")])
    yield idx
    idx.close()


LANGUAGES = {"en", "ru", "zh"}


def test_each_chunk_holds_its_words_analysed_in_the_note_language(
        index: LanceIndex, tmp_path: Path) -> None:
    assert _terms(tmp_path / "index", "ru/trip.md")[0].split() == [
        "мо", "заметк", "о", "поездк", "в", "гор"]
    assert "红烧" in _terms(tmp_path / "index", "zh/food.md")[1].split()
    assert _terms(tmp_path / "index", "animals/cats.md") == ["", ""]  # English: as before


def test_an_inflected_query_finds_the_note_in_another_form(index: LanceIndex) -> None:
    hits = index.text_search("заметках поездках", 5, languages=LANGUAGES)
    assert hits[0].path == "ru/trip.md"
    assert index.text_search("заметках поездках", 5, languages={"en"}) == []
    assert index.text_search("红烧肉", 5, languages=LANGUAGES)[0].path == "zh/food.md"


@pytest.mark.parametrize("query", ["kitten yarn", "quarterly tax deadline", "memory review"])
def test_english_queries_score_as_before(index: LanceIndex, query: str) -> None:
    """A Latin query meets no analysed terms of a Russian or Chinese note: English notes get
    the same hits and BM25 scores whatever the vault's languages."""
    plain = index.text_search(query, 10, languages={"en"})
    assert plain and index.text_search(query, 10, languages=LANGUAGES) == plain
    assert index.text_search(query, 10) == plain


def test_terms_survive_moves_renames_and_edits(index: LanceIndex, tmp_path: Path) -> None:
    before = _terms(tmp_path / "index", "ru/trip.md")
    moved, _ = note("travel/trip.md", RUSSIAN, language="ru")
    index.apply(moves=[("ru/trip.md", moved)])
    assert _terms(tmp_path / "index", "travel/trip.md") == before
    index.apply(retitles=[replace(moved, title="Поездка", aliases=("горы",))])
    assert _terms(tmp_path / "index", "travel/trip.md") == before
    assert index.text_search("поездки", 5, languages=LANGUAGES)[0].path == "travel/trip.md"
    # an edit whose unchanged chunks keep their stored vectors: the rows are written again
    kept = index.stored_chunks(["travel/trip.md"])
    record, _ = note("travel/trip.md", RUSSIAN, language="ru")
    index.apply(upserts=[(record, kept)])
    assert _terms(tmp_path / "index", "travel/trip.md") == before
    index.optimize()
    assert index.text_search("палатки", 5, languages=LANGUAGES)[0].path == "travel/trip.md"


def test_a_note_whose_language_changes_is_analysed_anew(
        index: LanceIndex, tmp_path: Path) -> None:
    record, chunks = note("ru/trip.md", RUSSIAN, language="")
    index.apply(upserts=[(record, chunks)])
    assert _terms(tmp_path / "index", "ru/trip.md") == ["", ""]
