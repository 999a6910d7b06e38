"""A note's words analysed in its language (index/analysis.py): the `terms` column, the query's
terms for it, and the word keys ranking compares."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.words import english_keys
from vaultmem.index.analysis import (
    CJK,
    STEMMERS,
    analyse,
    cjk_terms,
    note_terms,
    query_terms,
    word_keys,
)


@pytest.mark.parametrize(("language", "forms"), [
    ("ru", ["заметки", "заметках", "Заметка", "заметку"]),
    ("de", ["Häuser", "Hauses", "Haus"]),
    ("fr", ["développement", "développements", "developpement"]),
    ("es", ["canciones", "canción", "cancion"]),
    ("pt", ["arquivos", "arquivo"]),
    ("it", ["cartelle", "cartella"]),
    ("nl", ["bestanden", "bestand"]),
    ("sv", ["filerna", "filer", "fil"]),
])
def test_inflected_forms_meet_at_one_term(language: str, forms: list[str]) -> None:
    terms = {tuple(analyse(form, language)) for form in forms}
    assert len(terms) == 1, terms


def test_a_stemmed_note_keeps_code_numbers_and_ids_whole() -> None:
    assert analyse("Запустить k3s_cluster на порту 8080", "ru") == [
        "запуст", "k3s_cluster", "на", "порт", "8080"]


def test_urls_and_mixed_scripts_are_words_like_any_other() -> None:
    terms = analyse("См. https://example.com/путь и docker-compose.yml, 東京で", "ru")
    assert {"https", "example", "com", "пут", "docker", "compose", "yml"} <= set(terms)
    assert {"東京", "京で"} <= set(terms)  # CJK runs in any note: bigrams


def test_english_and_unknown_notes_hold_only_their_cjk_bigrams() -> None:
    # their words are searched in `text`, with the English analysis it always had
    assert analyse("Painting notes about the 東京で trip", "en") == ["東京", "京で"]
    assert analyse("Painting notes", "") == []
    assert note_terms("東京で", "") == cjk_terms("東京で") == "東京 京で"


def test_korean_words_lose_their_particles() -> None:
    assert analyse("아카이브를 파일에서 추출", "ko") == ["~아카이브", "~파일", "~추출"]
    assert analyse("아카이브", "ko") == ["~아카이브"]
    assert analyse("를", "ko") == ["를"]  # a lone syllable stays itself
    assert analyse("東京で 아카이브를", "ko") == ["東京", "京で", "~아카이브"]  # kanji: bigrams


@pytest.mark.parametrize("language", sorted({*STEMMERS, "zh", "ja", "ko", "en", ""}))
@pytest.mark.parametrize("text", ["", "   ", "!!! ??? :::", "\x00", "🐈🐈", "a" * 100])
def test_edge_cases_give_no_or_plain_terms(language: str, text: str) -> None:
    terms = analyse(text, language)
    assert all(term and not any(ch.isspace() for ch in term) for term in terms)
    if not any(ch.isalnum() for ch in text) or len(text) > 40:
        assert terms == []


@given(st.text(max_size=200), st.sampled_from(sorted({*STEMMERS, "zh", "ja", "ko", "en", ""})))
def test_terms_never_hold_spaces(text: str, language: str) -> None:
    for term in analyse(text, language):
        assert term and term == term.strip() and " " not in term


def test_a_query_is_analysed_in_each_language_of_the_vault() -> None:
    assert query_terms("заметках", {"ru"}) == "заметк"
    assert query_terms("заметках", {"en", ""}) == ""  # no analysed words in those notes
    assert query_terms("Häusern notes", {"de", "en"}).split() == ["haus", "not"]
    assert query_terms("東京で", ()) == "東京 京で"


def test_word_keys_stem_in_the_vault_languages_of_the_word_script() -> None:
    assert word_keys(frozenset({"en", ""})) is english_keys
    keys = word_keys(frozenset({"en", "ru"}))
    assert keys("заметки") == ("заметки", "заметк")
    assert keys("painting") == english_keys("painting") == ("paint",)  # no Russian stem
    assert word_keys(frozenset({"de"}))("häuser") == ("hauser", "haus")


def test_cjk_pattern_covers_kana_hangul_and_han() -> None:
    assert all(CJK.fullmatch(ch) for ch in "あア한漢ｱ")


def test_stemmers_and_segmenters_load_only_when_used() -> None:
    code = ("import sys; from vaultmem.index import analysis, lance; "
            "analysis.note_terms('The 東京 notes', 'en'); "
            "print(sorted(m for m in ('Stemmer', 'rjieba', 'fugashi') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "[]"
