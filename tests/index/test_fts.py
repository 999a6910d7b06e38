"""Full-text query sanitising: arbitrary user text never raises."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.index.lance import LanceIndex
from vaultmem.index.tables import fts_terms

from ._support import EMBEDDER, all_notes


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanceIndex]:
    path: Path = tmp_path_factory.mktemp("fts") / "index"
    idx = LanceIndex(path, EMBEDDER.name)
    idx.apply(upserts=all_notes())
    yield idx
    idx.close()


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "title:cats",
        "(kitten OR",
        "AND",
        "NOT dogs",
        "cats^2 ~1",
        "*",
        "\\",
        "naïve café",
        "日本語のテキスト",
        "emoji 🐈 cats",
        "a'b",
        "--",
        "''",
        "\x00",
    ],
)
def test_syntax_characters_do_not_raise(index: LanceIndex, query: str) -> None:
    hits = index.text_search(query, 5)
    assert all(hit.score > 0 for hit in hits)


def test_syntax_is_treated_as_words(index: LanceIndex) -> None:
    assert index.text_search('"kitten AND (yarn', 1)[0].path == "animals/cats.md"
    assert index.text_search("title:cats", 5)[0].path == "animals/cats.md"


@pytest.mark.parametrize("query", ["", "   ", "!!! ??? :::", "()", '""'])
def test_unsearchable_queries_return_nothing(index: LanceIndex, query: str) -> None:
    assert fts_terms(query) == ""
    assert index.text_search(query, 5) == []


@settings(max_examples=200, deadline=None)
@given(query=st.text(max_size=60), k=st.integers(0, 8))
def test_arbitrary_text_never_raises(index: LanceIndex, query: str, k: int) -> None:
    hits = index.text_search(query, k)
    assert len(hits) <= k


def test_fts_terms_are_plain_lowercase_words() -> None:
    assert fts_terms('Cats AND "Dogs" (OR) title:x') == "cats and dogs or title x"
    assert fts_terms("x" * 41 + " ok") == "ok"
