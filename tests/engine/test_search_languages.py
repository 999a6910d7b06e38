"""Search in the vault's languages (fake embedder: the words decide): a Russian query finds the
note that has its words in other forms, a Chinese query its note, each note's language is in
the catalog, and an English vault is searched as before."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmem.app import App
from vaultmem.core.words import english_keys
from vaultmem.engine.search_context import query_context
from vaultmem_testing.apps import notes_app

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 12, 1, tzinfo=UTC)
NOTES = {
    "Путешествия/Поездка в горы.md":
        "# Поездка в горы\n\nМои заметки о поездке: мы взяли палатку и спальные мешки, "
        "а вечером сварили суп на горелке.\n",
    "Путешествия/Море.md":
        "# Море\n\nНа море мы купались каждый день и читали книги на пляже.\n",
    "Кухня/Борщ.md":
        "# Борщ\n\nСвёкла, капуста и картофель варятся в бульоне; сметану добавить в конце.\n",
    "食谱/红烧肉.md": "# 红烧肉\n\n五花肉切块，加冰糖和酱油慢慢炖一个小时。\n",
    "食谱/米饭.md": "# 米饭\n\n大米洗净后加水，用电饭锅煮二十分钟。\n",
    "Notes/Hiking.md": "# Hiking\n\nWe packed the tent and the sleeping bags for the trip.\n",
    "Notes/Painting.md": "# Painting\n\nWatercolour paintings of the harbour at dusk.\n",
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    with notes_app(tmp_path_factory.mktemp("languages"), NOTES) as app:
        yield app


def _top(app: App, query: str) -> list[str]:
    return [hit.path for hit in app.search.search(query, NOW, include_review=False).hits]


def test_each_note_language_is_in_the_catalog(app: App) -> None:
    records = app.catalog.records()
    assert records["Путешествия/Поездка в горы.md"].language == "ru"
    assert records["食谱/红烧肉.md"].language == "zh"
    assert records["Notes/Hiking.md"].language == "en"
    assert app.catalog.languages() == {"ru", "zh", "en"}


def test_a_russian_query_finds_its_words_in_other_forms(app: App) -> None:
    result = app.search.search("заметки о поездках в горах", NOW, include_review=False)
    assert result.hits[0].path == "Путешествия/Поездка в горы.md"
    assert result.hits[0].matched
    assert _top(app, "палатки и мешок")[0] == "Путешествия/Поездка в горы.md"


def test_query_evidence_uses_the_same_analysis(app: App) -> None:
    """The share of a query's words a note holds counts `поездках` in a note's `поездке`."""
    trip = "Путешествия/Поездка в горы.md"
    context = query_context(app.catalog, "поездках", {trip: None})  # type: ignore[dict-item]
    assert "поездк" in context.keys_of(trip)("поездках")
    assert context.keys_of("Notes/Hiking.md") is english_keys
    assert _top(app, "поездках")[0] == "Путешествия/Поездка в горы.md"


def test_a_chinese_query_finds_its_note(app: App) -> None:
    assert _top(app, "红烧肉")[0] == "食谱/红烧肉.md"
    assert _top(app, "酱油")[0] == "食谱/红烧肉.md"
    assert _top(app, "电饭锅")[0] == "食谱/米饭.md"


def test_english_beside_them_is_searched_as_before(app: App) -> None:
    assert _top(app, "tent sleeping bags")[0] == "Notes/Hiking.md"
    assert _top(app, "watercolour painting")[0] == "Notes/Painting.md"


def test_an_english_vault_compares_words_as_before(tmp_path: Path) -> None:
    english = {p: t for p, t in NOTES.items() if p.startswith("Notes/")}
    with notes_app(tmp_path, english) as app:
        assert app.catalog.languages() == {"en"}
        context = query_context(app.catalog, "painting", {"Notes/Painting.md": None})  # type: ignore[dict-item]
        assert context.keys == {} and context.keys_of("Notes/Painting.md") is english_keys
        assert _top(app, "paintings harbour")[0] == "Notes/Painting.md"


def test_each_bundled_model_ranks_with_its_own_values() -> None:
    """e5's cosines crowd high (its scale against the crowd's 30th) and its meaning weighs more
    against the words; MiniLM keeps the defaults every English figure was measured with."""
    from vaultmem.core.ranking import RankingParams
    from vaultmem.engine.search import ranking_for
    from vaultmem.index.multilingual import (
        COSINE_SCALE,
        COSINE_TAIL,
        MULTILINGUAL_NAME,
        TEXT_WEIGHT,
    )

    assert ranking_for("sentence-transformers/all-MiniLM-L6-v2") == RankingParams()
    assert RankingParams().cosine_tail == 0  # min-max
    e5 = ranking_for(MULTILINGUAL_NAME)
    assert (e5.cosine_none, e5.cosine_full) == COSINE_SCALE
    assert e5.text_weight == TEXT_WEIGHT < RankingParams().text_weight
    assert e5.cosine_tail == COSINE_TAIL > 0
