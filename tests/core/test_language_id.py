"""Judging a note's language: by its script, then by its function words."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.language_id import UNKNOWN, _scripts, note_language, script_of

TEXTS = {
    "en": "The backup job runs every night and copies the photos to the server in the attic.",
    "ru": "Резервное копирование запускается каждую ночь и копирует фотографии на сервер.",
    "uk": "Резервне копіювання запускається щоночі і копіює фотографії на сервер у горищі.",
    "de": "Die Sicherung läuft jede Nacht und kopiert die Fotos auf den Server im Dachboden.",
    "fr": "La sauvegarde est lancée chaque nuit et copie les photos sur le serveur du grenier.",
    "es": "La copia de seguridad se ejecuta cada noche y copia las fotos en el servidor.",
    "pt": "A cópia de segurança é feita todas as noites e copia as fotos para o servidor da casa.",
    "it": "Il backup viene eseguito ogni notte e copia le foto sul server della soffitta.",
    "nl": "De back-up draait elke nacht en kopieert de foto's van het huis naar de server.",
    "sv": "Säkerhetskopieringen körs varje natt och kopierar bilderna till servern på vinden.",
    "zh": "备份任务每天晚上运行，并把照片复制到阁楼里的服务器上。",
    "ja": "バックアップは毎晩実行され、写真を屋根裏のサーバーにコピーします。",
    "ko": "백업 작업은 매일 밤 실행되며 사진을 다락방의 서버로 복사합니다.",
}


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_each_language(language: str) -> None:
    assert note_language(TEXTS[language]) == language


def test_japanese_is_told_by_its_kana_even_where_kanji_dominate() -> None:
    assert note_language("東京都新宿区西新宿二丁目の高層ビル群を見学する") == "ja"
    assert note_language("东京都新宿区西新宿二丁目的高层建筑群") == "zh"


def test_code_links_and_inline_code_do_not_decide() -> None:
    russian = ("Создать архив и записать его в файл:\n\n"
               "`tar cf target.tar file1 file2 --verbose --directory path/to/the/folder`\n\n"
               "```\nfor file in files: print(file, with_the_options, and_more, of_these)\n```\n"
               "See <https://www.gnu.org/software/tar/manual/tar.html> and [[Some English Note]]")
    assert note_language(russian) == "ru"


def test_chinese_with_english_terms_is_chinese() -> None:
    assert note_language("使用 Docker Compose 启动所有服务，然后检查 nginx 的日志。") == "zh"


@pytest.mark.parametrize("text", [
    "", "   ", "12345 67890", "```\nfoo_bar = baz(qux, quux)\n```", "Alice Bob Carol",
    "https://example.com/a/b/c", "---\n\n***",
])
def test_nothing_to_tell_by_is_unknown(text: str) -> None:
    assert note_language(text) == UNKNOWN


def test_a_short_line_needs_a_function_word_more_than_any_other_language() -> None:
    assert note_language("Verwaltet die Pakete des Systems.") == "de"
    assert note_language("Archivierungsprogramm.") == UNKNOWN


@given(st.text(max_size=300))
def test_any_text_gets_a_known_code(text: str) -> None:
    assert note_language(text) in {UNKNOWN, "ru", "uk", "el", "ar", "zh", "ja", "ko",
                                   "en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "no",
                                   "fi", "pl"}


def _scripts_one_by_one(text: str) -> Counter[str]:
    """The judge's letter count by its definition: every character looked at in turn (the
    judge counts ASCII letters at once; the counts and the order the scripts first appear in,
    which breaks ties, must be the same)."""
    counts: Counter[str] = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        counts[script_of(ord(ch))] += 1
    return counts


_MIXED = st.text(alphabet=st.sampled_from("aZ é ß ж і αβ ع か カ 한 漢 ー 1!`\nÆ"), max_size=40)


@given(st.one_of(_MIXED, st.text(max_size=40)))
def test_letters_counted_at_once_as_one_by_one(text: str) -> None:
    expected = _scripts_one_by_one(text)
    got = _scripts(text)
    cjk = ("kana", "hangul", "han")
    assert [(k, v) for k, v in got.items() if k not in (*cjk, "cjk")] == \
        [(k, v) for k, v in expected.items() if k not in cjk]
    assert {k: bool(got[k]) for k in cjk} == {k: bool(expected[k]) for k in cjk}


@pytest.mark.parametrize("text", ["Жж ab", "ab Жж", "é Жж", "Жж é", "αβ ab Жж"])
def test_a_tie_between_scripts_goes_to_the_first_as_before(text: str) -> None:
    assert list(_scripts(text)) == list(_scripts_one_by_one(text))
