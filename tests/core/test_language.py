"""Telling how much of a vault is not English (the status hint about multilingual models)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.language import (
    LATIN,
    MULTILINGUAL_MODEL,
    NOTICE_SHARE,
    OTHER_SCRIPT,
    LanguageShare,
    choose_model,
    english_only,
    is_english,
    judge,
    language_share,
)
from vaultmem.engine.shapes import languages

ENGLISH = "The backup job runs every night and copies the photos to the NAS in the attic."
RUSSIAN = "Резервное копирование запускается каждую ночь и копирует фотографии на сервер."
FRENCH = "La sauvegarde est lancée chaque nuit et copie les photos sur le serveur du grenier."
GERMAN = "Die Sicherung läuft jede Nacht und kopiert die Fotos auf den Server im Dachboden."
JAPANESE = "バックアップは毎晩実行され、写真を屋根裏のサーバーにコピーします。" * 2


@pytest.mark.parametrize(("text", "english"), [
    (ENGLISH, True), (RUSSIAN, False), (FRENCH, False), (GERMAN, False), (JAPANESE, False),
    ("short", None),  # too short to tell
    ("```\nfoo_bar = baz(qux, quux)\nprint(foo_bar, corge, grault)\n```", None),  # no words
])
def test_is_english(text: str, english: bool | None) -> None:
    assert is_english(text) is english


def test_share_counts_only_texts_it_can_judge() -> None:
    share = language_share([ENGLISH, ENGLISH, RUSSIAN, "tiny", FRENCH])
    assert (share.judged, share.not_english) == (4, 2)
    assert share.notable and share.share == 0.5
    assert NOTICE_SHARE > 0.1 and not language_share([ENGLISH] * 9 + [RUSSIAN]).notable
    assert not language_share([]).notable


def test_advice_only_for_a_largely_non_english_vault_on_an_english_only_model() -> None:
    mixed = language_share([RUSSIAN, ENGLISH])
    default = "sentence-transformers/all-MiniLM-L6-v2"
    assert english_only(default) and not english_only("/models/multilingual-e5-small")
    assert "--choose-model" in (languages(mixed, default, "auto").advice or "")
    assert '"multilingual"' in (languages(mixed, default, "english").advice or "")
    assert languages(mixed, "intfloat/multilingual-e5-small (4-bit)", "auto").advice is None
    assert languages(language_share([ENGLISH] * 5), default, "auto").advice is None


@given(st.lists(st.sampled_from([ENGLISH, RUSSIAN, FRENCH, "x"]), max_size=20))
def test_share_is_a_fraction(texts: list[str]) -> None:
    share = language_share(texts)
    assert 0 <= share.not_english <= share.judged <= len(texts)
    assert 0.0 <= share.share <= 1.0


@pytest.mark.parametrize(("judged", "not_english", "scripts", "model", "settled"), [
    (0, 0, 0, "english", False),  # nothing to tell by: English, asked again later
    (10, 9, 9, "multilingual", False),  # a small vault: chosen, but not kept
    (100, 29, 29, "english", True),  # Russian or Chinese notes: from 30 %
    (100, 30, 30, "multilingual", True),
    (100, 49, 0, "english", True),  # German or French notes: from half
    (100, 50, 0, "multilingual", True),
    (300, 290, 100, "multilingual", True),
])
def test_auto_chooses_the_multilingual_model_from_a_share(
        judged: int, not_english: int, scripts: int, model: str, settled: bool) -> None:
    choice = choose_model(LanguageShare(judged, not_english, scripts))
    assert (choice.model, choice.settled) == (model, settled)
    if judged:
        assert f"{not_english} of {judged}" in choice.reason


def test_prose_is_judged_not_code_or_addresses() -> None:
    """A command page in Chinese has more Latin letters in its commands than Han characters in
    its words; a short Chinese line says as much as a long English one."""
    page = ("# tar\n\n> 归档实用程序。更多信息：<https://www.gnu.org/software/tar>.\n\n"
            "- 创建一个归档文件并写入所有文件：\n\n`tar cf {{path/to/target.tar}} "
            "{{path/to/file1 path/to/file2 ...}}`\n")
    assert judge(page) == OTHER_SCRIPT
    assert judge(GERMAN) == LATIN and judge(ENGLISH) == "english"
    share = language_share([page, GERMAN, ENGLISH, "tiny"])
    assert (share.judged, share.not_english, share.other_script) == (3, 2, 1)


@given(st.integers(0, 500), st.integers(0, 500))
def test_more_notes_in_other_languages_never_choose_english_again(judged: int, extra: int) -> None:
    """Monotone: a vault with more notes not in English is never served by the English model
    where a vault with fewer is served by the multilingual one."""
    lower = choose_model(LanguageShare(judged + extra, judged, judged))
    higher = choose_model(LanguageShare(judged + extra, judged + extra, judged + extra))
    if lower.model == MULTILINGUAL_MODEL:
        assert higher.model == MULTILINGUAL_MODEL
