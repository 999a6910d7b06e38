"""A question's function words, per language: they lend no evidence of a match."""

from __future__ import annotations

from vaultmem.core.function_words import ENGLISH, LANGUAGES, _fold, for_query, function_words
from vaultmem.core.language_id import CJK, LATIN
from vaultmem.core.relevance import evidence, word_evidence
from vaultmem.core.words import STOP_WORDS, content_keys, english_keys


def _content(query: str) -> list[str]:
    return sorted(key for group in content_keys(query, english_keys, for_query(query))
                  for key in group)


def test_every_language_the_notes_are_judged_in_has_a_list() -> None:
    for language in (*LATIN, *CJK, "ru", "uk", "el", "ar"):
        assert language in LANGUAGES
        own = function_words(language)
        assert ENGLISH.words <= own.words  # queries mix in English
        assert all(word == _fold(word) for word in own.words)  # compared folded


def test_english_keeps_the_list_ranking_always_used() -> None:
    assert ENGLISH.words == STOP_WORDS
    assert "how" in STOP_WORDS and "borscht" not in STOP_WORDS
    assert for_query("how do I unpack a tar file") == ENGLISH
    assert for_query("kubectl get pods") == ENGLISH  # no function word: English's


def test_the_question_language_is_told_by_script_then_by_its_function_words() -> None:
    assert for_query("как приготовить борщ").language == "ru"
    assert for_query("如何做红烧肉").language == "zh"
    assert for_query("ボルシチの作り方").language == "ja"
    assert for_query("보르시치 만드는 법").language == "ko"
    assert for_query("Wie repariere ich ein Fahrrad").language == "de"
    assert for_query("cómo hacer el nudo de una corbata").language == "es"
    # too few words to tell French from Spanish or Italian: the tied languages' words together
    tied = for_query("comment faire un nœud de cravate")
    assert "fr" in tied.language.split("+") and {"comment", "faire", "un", "de"} <= tied.words


def test_function_words_are_not_content_in_their_language() -> None:
    assert _content("как приготовить борщ") == ["борщ", "приготовить"]
    assert _content("Wie repariere ich ein Fahrrad") == ["fahrrad", "repariere"]
    assert _content("cómo hacer el nudo de una corbata") == ["corbata", "nudo"]
    # the same words in an English question stay words (`die` is not German there)
    assert _content("why does the server die") == ["die", "server"]


def test_cjk_runs_are_parted_at_function_words_before_their_bigrams() -> None:
    # no chance bigrams across `怎么` (`汤怎`, `么做`)
    assert _content("罗宋汤怎么做") == ["宋汤", "罗宋"]
    assert _content("如何做红烧肉") == ["烧肉", "红烧"]
    assert _content("ボルシチの作り方を知りたい") == _content("ボルシチの作り方を知りたい方法")
    # Korean: function words dropped, particles and endings cut (`파일을`: `파일`)
    assert _content("파일을 압축 해제하는 방법") == ["압축", "파일", "해제"]


def test_a_question_of_function_words_and_an_absent_subject_has_no_evidence() -> None:
    note = "Wie man ein Backup macht: ich nutze rsync, wie es in der Anleitung steht."
    query = "Wie repariere ich ein Fahrrad"
    assert word_evidence(query, note) == 0.6  # wie, ich, ein: English's list knows none
    assert word_evidence(query, note, function=for_query(query)) == 0.0
    assert evidence(None, query, note, function=for_query(query)) == 0.0
    # the subject still counts
    assert word_evidence("Wie repariere ich ein Fahrrad", "Fahrrad reparieren: Schlauch",
                         function=for_query(query)) == 1.0


def test_english_evidence_is_unchanged() -> None:
    for query, text in (("painting sunsets", "she paints a sunset"),
                        ("how do I unpack a tar file", "tar: archive utility; unpack a file")):
        assert word_evidence(query, text) == word_evidence(query, text,
                                                           function=for_query(query))
