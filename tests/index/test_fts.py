"""Full-text query sanitising: arbitrary user text never raises."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.index import full_text
from vaultmem.index.lance import LanceIndex
from vaultmem.index.tables import fts_terms
from vaultmem.index.vectors import VectorMatrix

from ._support import EMBEDDER, OPTIONS, all_notes, note


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanceIndex]:
    path: Path = tmp_path_factory.mktemp("fts") / "index"
    idx = LanceIndex(path, EMBEDDER.name, OPTIONS)
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


@pytest.mark.parametrize("k", [1, 2, 50])
@pytest.mark.parametrize("query", ["review memory decay", "kitten puppy", "deadline receipts"])
def test_broad_filters_find_what_the_prefilter_finds(
    index: LanceIndex, query: str, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.vector_search(EMBEDDER.embed_query(query), 1)  # the matrix counts the notes
    paths = sorted(all_note_paths())
    for allowed in ({paths[0]}, set(paths[:2]), set(paths[1:4]), set(paths)):
        monkeypatch.setattr("vaultmem.index.full_text.BROAD_FILTER", 0)  # always the prefilter
        prefiltered = index.text_search(query, k, paths=allowed)
        monkeypatch.setattr("vaultmem.index.full_text.BROAD_FILTER", 10**9)  # fetch more, keep
        kept = index.text_search(query, k, paths=allowed)
        assert [(h.chunk_id, h.text) for h in kept] == [
            (h.chunk_id, h.text) for h in prefiltered]
        assert all(hit.path in allowed and hit.text for hit in kept)


def all_note_paths() -> list[str]:
    return [record.path for record, _ in all_notes()]


def test_too_few_allowed_hits_fall_back_to_the_prefilter(
    index: LanceIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    terms = full_text.Terms(fts_terms("a the review memory kitten puppy deadline dogs cats"))
    calls: list[str | None] = []
    original = full_text.hits

    def spy(chunks: object, matrix: VectorMatrix | None, terms: full_text.Terms, k: int,
            where: str | None, *, indexed_text: bool = False) -> list:  # type: ignore[type-arg]
        calls.append(where)
        return original(chunks, matrix, terms, k, where, indexed_text=indexed_text)

    monkeypatch.setattr(full_text, "hits", spy)
    matrix = index._ensure_matrix()
    for path in all_note_paths():
        broad = full_text._broad(index._chunks, matrix, terms, 1, {path}, 1)  # 2 hits
        assert [h.chunk_id for h in broad] == [
            h.chunk_id for h in original(index._chunks, matrix, terms, 1, f"path IN ('{path}')")]
    assert any(where is not None for where in calls)  # some note ranked below the 2 fetched


def test_a_broad_walk_is_sized_for_the_hits_ranking_needs(
    index: LanceIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broad filter's full-text walk fetches what BROAD_TEXT_HITS allowed hits need, not the
    whole pool asked for, and does not fall back to the prefilter when it found them."""
    monkeypatch.setattr(full_text, "BROAD_TEXT_HITS", 1)
    terms = full_text.Terms(fts_terms("review memory decay kitten puppy deadline"))
    paths = set(all_note_paths())
    calls: list[tuple[int, str | None]] = []
    original = full_text.hits

    def spy(chunks: object, matrix: VectorMatrix | None, terms: full_text.Terms, k: int,
            where: str | None, *, indexed_text: bool = False) -> list:  # type: ignore[type-arg]
        calls.append((k, where))
        return original(chunks, matrix, terms, k, where, indexed_text=indexed_text)

    monkeypatch.setattr(full_text, "hits", spy)
    broad = full_text._broad(index._chunks, index._ensure_matrix(), terms, 50, paths, len(paths))
    assert calls == [(2, None)]  # one unfiltered fetch sized for 1 allowed hit, no prefilter
    prefiltered = original(index._chunks, index._ensure_matrix(), terms, 50, None)
    assert broad and [h.chunk_id for h in broad] == [h.chunk_id for h in prefiltered][: len(broad)]


SCRIPTS = {
    "ru.md": "Криптография изучает методы шифрования данных.",
    "ja.md": "日本語のテキストは東京で書かれました。暗号化の方法について。",
    "zh.md": "密码学是研究信息安全的学科。加密算法很重要。",
    "fr.md": "La cryptographie étudie le chiffrement des données.",
    "en.md": "The runner paints landscapes after running.",
}


@pytest.fixture(scope="module")
def scripts_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanceIndex]:
    idx = LanceIndex(tmp_path_factory.mktemp("scripts") / "index", EMBEDDER.name, OPTIONS)
    idx.apply(upserts=[note(path, body) for path, body in SCRIPTS.items()])
    yield idx
    idx.close()


@pytest.mark.parametrize(("query", "path"), [
    ("шифрования", "ru.md"),
    ("Криптография", "ru.md"),
    ("東京", "ja.md"),  # a word inside a sentence written without spaces
    ("暗号化", "ja.md"),
    ("加密", "zh.md"),
    ("密码学", "zh.md"),
    ("chiffrement", "fr.md"),
    ("donnees", "fr.md"),  # accents folded
    ("painted", "en.md"),  # English words are stemmed
])
def test_words_of_every_script_are_found(scripts_index: LanceIndex, query: str,
                                         path: str) -> None:
    hits = scripts_index.text_search(query, 5)
    assert [hit.path for hit in hits][:1] == [path]


def test_hits_read_from_the_matrix_equal_the_table_before_and_after_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hits whose rows the matrix knows come from it; a row written since the last optimise
    is looked up by its id and learnt (no second full-text query); after an optimise (every
    row gets a new id) the matrix knows them all again. The hits are the table's always."""
    idx = LanceIndex(tmp_path / "index", EMBEDDER.name, OPTIONS)
    try:
        idx.apply(upserts=all_notes())
        reads: list[bool] = []
        original = full_text._read

        def spy(chunks: object, terms: full_text.Terms, k: int, where: str | None) -> list:  # type: ignore[type-arg]
            reads.append(True)
            return original(chunks, terms, k, where)

        def check(query: str) -> list[str]:
            terms = full_text.Terms(fts_terms(query))
            found = idx.text_search(query, 20)
            table = original(idx._chunks, terms, 20, None)
            assert [(h.chunk_id, h.path, h.text, h.score) for h in found] == [
                (h.chunk_id, h.path, h.text, h.score) for h in table]
            return [h.path for h in found]

        monkeypatch.setattr(full_text, "_read", spy)
        assert check("kitten review deadline")
        assert not reads  # the matrix knew every row: nothing read from the table
        idx.apply(upserts=[note("animals/cats.md", "A kitten naps.\n\nKittens and review.")])
        matrix = idx._ensure_matrix()
        assert matrix is not None
        stored = idx._chunks.search().select(["path"]).with_row_id(True).to_arrow()
        written = [r for r, p in zip(stored.column("_rowid").to_pylist(),
                                     stored.column("path").to_pylist(), strict=True)
                   if p == "animals/cats.md"]
        assert matrix.unknown_row_ids(written) == written  # the rewritten note's rows
        assert "animals/cats.md" in check("kitten review deadline")
        assert not reads  # looked up by id, not by a second full-text query
        assert matrix.unknown_row_ids(written) == []  # and learnt
        idx.optimize()
        reads.clear()
        assert check("kitten review deadline") and check("taxes receipts")
        assert not reads
    finally:
        idx.close()
