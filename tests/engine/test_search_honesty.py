""""Nothing relevant" in the vault's language (fake embedder: the words decide): a question made
of its language's function words and a subject the vault does not hold matches nothing, as an
English one does; a question whose subject is there still matches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from vaultmem.app import App
from vaultmem.core.function_words import ENGLISH
from vaultmem.core.ranking import MATCH_FLOOR, is_match, note_signals, rank_notes
from vaultmem.engine.search import TEXT_POOL, VECTOR_POOL
from vaultmem.engine.search_context import query_context
from vaultmem_testing.apps import notes_app

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 12, 1, tzinfo=UTC)
NOTES = {
    "Кухня/Кофе по-турецки.md":
        "# Кофе по-турецки\n\nКак приготовить его дома: сначала смолоть свежие зёрна средней "
        "степени обжарки, потом прогреть турку, налить холодную воду, добавить щепотку "
        "корицы и снять с огня, когда поднимется пенка. Подавать в маленьких чашках с "
        "печеньем, сахар по вкусу; остатки гущи пригодятся для удобрения цветов на балконе.\n",
    "Notizen/Datensicherung.md":
        "# Datensicherung\n\nWie ich es mache: jeden Freitag läuft rsync über das Heimnetz auf "
        "ein externes Laufwerk im Keller; danach prüft das Skript die Prüfsummen, schreibt "
        "das Protokoll und schickt eine kurze Nachricht aufs Telefon, falls etwas fehlt. "
        "Alte Stände werden nach drei Monaten gelöscht, damit genug Platz bleibt.\n",
    "食谱/红烧鱼.md":
        "# 红烧鱼\n\n如何做：鲤鱼洗净切花刀，用料酒和姜片腌十分钟，热锅凉油煎至两面金黄，"
        "加入酱油、冰糖、葱段和清水，小火焖二十分钟，最后大火收汁装盘。\n",
    "Notes/Coffee.md":
        "# Coffee\n\nGrind fresh beans, warm the pot, pour cold water and lift it off the "
        "heat when the foam rises.\n",
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    with notes_app(tmp_path_factory.mktemp("honesty"), NOTES) as app:
        yield app


def _matched(app: App, query: str) -> list[str]:
    """What `--matched-only` answers."""
    found = app.search.search(query, NOW, include_review=False, min_relevance=MATCH_FLOOR)
    return [hit.path for hit in found.hits]


def _best_with_english_words_only(app: App, query: str) -> float:
    """The best relevance as it was when only English's function words were skipped."""
    index = app.index()
    vector = app.search._embedder.embed_query(query)
    signals = note_signals(index.vector_search(vector, VECTOR_POOL),
                           index.text_search(query, TEXT_POOL,
                                             languages=app.catalog.languages()))
    context = replace(query_context(app.catalog, query, signals), function_words=ENGLISH)
    return max(m.relevance for m in rank_notes(signals, context))


@pytest.mark.parametrize("query", [
    "как приготовить борщ", "борщ", "如何做红烧肉", "Wie repariere ich ein Fahrrad",
    "how to cook borscht",
])
def test_a_question_the_vault_cannot_answer_matches_nothing(app: App, query: str) -> None:
    assert _matched(app, query) == []


@pytest.mark.parametrize("query", [
    "как приготовить борщ", "如何做红烧肉", "Wie repariere ich ein Fahrrad",
])
def test_its_function_words_were_what_matched(app: App, query: str) -> None:
    """The same questions, their language's function words counted as words: a match."""
    assert is_match(_best_with_english_words_only(app, query))


@pytest.mark.parametrize(("query", "note"), [
    ("как приготовить кофе", "Кухня/Кофе по-турецки.md"),
    ("Wie mache ich eine Datensicherung", "Notizen/Datensicherung.md"),
    ("如何做红烧鱼", "食谱/红烧鱼.md"),
    ("how do I grind coffee beans", "Notes/Coffee.md"),
])
def test_a_question_the_vault_answers_still_matches(app: App, query: str, note: str) -> None:
    assert _matched(app, query)[:1] == [note]
