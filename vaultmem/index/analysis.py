"""Words analysed in a note's language: the full-text index's `terms` column, the query's terms
for it, and the word keys ranking compares (core/relevance.py takes them as a function).

LanceDB's full-text index stems one language per index, English for `text` and `title`; the
`terms` column holds each chunk's words as its note's language analyses them, indexed with a
plain whitespace tokenizer:

* a language a Snowball stemmer covers (Russian, German, French, Spanish, ...): each word
  lower-cased, stemmed (PyStemmer), then its accents folded, so `заметки` and `заметках` are
  one term (`заметк`);
* Chinese and Japanese text: runs of CJK characters as their overlapping two-character words
  (`cjk_terms`): dictionary segmenters (jieba, MeCab, Sudachi, Janome) measured no better on
  the multilingual documentation vault and cost 30-90 MB and up to 2 s to load
  (docs/benchmarks.md);
* Korean: each word (spaces part Korean words, particles attached) with its particle or
  common ending cut off (better than bigrams on the judged questions: docs/benchmarks.md);
* English and a note of unknown language: the CJK bigrams only, as before: their words are
  searched in `text`, whose English analysis is unchanged.

A query is analysed with every language the vault holds, the terms ORed. Stemmers and
segmenters load on first use: a vault without such text never imports them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable
from typing import Any

from vaultmem.core.language_id import script_of
from vaultmem.core.words import english_keys

#: Snowball's name for each language that has a stemmer (PyStemmer's algorithms).
STEMMERS = {
    "ru": "russian", "de": "german", "fr": "french", "es": "spanish", "pt": "portuguese",
    "it": "italian", "nl": "dutch", "sv": "swedish", "da": "danish", "no": "norwegian",
    "fi": "finnish", "pl": "polish", "el": "greek", "ar": "arabic",
}
#: How the CJK runs of a note in each language are cut into words ("bigram": pairs of
#: characters, no dictionary; docs/benchmarks.md has the measurements behind each choice).
SEGMENTERS: dict[str, str] = {"zh": "bigram", "ja": "bigram", "ko": "strip"}
MAX_TERM_CHARS = 40

# Chinese, Japanese (kana) and Korean (hangul): written without spaces between words.
CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+")
_HANGUL = re.compile("^[\uac00-\ud7af]+$")
_WORD = re.compile(r"\w+", re.UNICODE)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Korean particles and the commonest verb endings, longest first: cut from a word's end when
# a stem of at least one syllable is left (`아카이브를` -> `아카이브`).
_KOREAN_ENDINGS = tuple(sorted((
    "은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "께", "한테", "로", "으로",
    "와", "과", "도", "만", "부터", "까지", "처럼", "보다", "이나", "나", "이다", "입니다",
    "합니다", "됩니다", "하다", "하기", "하고", "하여", "해서", "하는", "한", "할", "된", "되는",
    "하려면", "하면", "에서의", "으로의", "들", "들을", "들의", "들이",
), key=len, reverse=True))


def note_terms(text: str, language: str) -> str:
    """The `terms` column of a chunk of a note in `language`: space-separated terms."""
    return " ".join(analyse(text, language))


def query_terms(query: str, languages: Collection[str]) -> str:
    """A query's terms for the `terms` column: analysed as each of `languages` would analyse
    it (the languages of the vault's notes), each term once."""
    terms: dict[str, None] = {}
    for language in sorted(set(languages) or {""}):
        terms.update(dict.fromkeys(analyse(query, language)))
    return " ".join(terms)


def analyse(text: str, language: str) -> list[str]:
    """`text`'s terms as a note in `language` is indexed."""
    stemmer = _stemmer(language) if language in STEMMERS else None
    method = SEGMENTERS.get(language, "bigram")
    terms: list[str] = []
    latin: list[str] = []
    for word in _WORD.findall(text.casefold()):
        if CJK.search(word) is None:
            if stemmer is not None and len(word) <= MAX_TERM_CHARS:
                latin.append(word)
            continue
        for piece in re.split(f"({CJK.pattern})", word):
            if not piece:
                continue
            if CJK.fullmatch(piece):
                terms.extend(_cjk_words(piece, method))
            elif stemmer is not None and len(piece) <= MAX_TERM_CHARS:
                latin.append(piece)
    if stemmer is not None and latin:
        terms.extend(_stems(stemmer, latin))
    return terms


def cjk_terms(text: str) -> str:
    """Every run of CJK characters as overlapping two-character words (a lone character as
    itself), space-separated: "東京で" -> "東京 京で". Bigrams are the usual way to search such
    text without a dictionary: a query's bigrams meet the text's wherever its words occur."""
    return " ".join(term for run in CJK.findall(text) for term in _bigrams(run))


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _cjk_words(run: str, method: str) -> list[str]:
    """A CJK run's words by `method`; bigrams too where the method has nothing for the run
    (Han characters in a Korean note)."""
    stripped = "strip" in method and _HANGUL.match(run) is not None
    segmented = [w for name in method.split("+") if name in SEGMENTER_LOADERS
                 for w in _segmenter(name)(run) if _WORD.search(w)]
    words = _bigrams(run) if "bigram" in method or not (stripped or segmented) else []
    if stripped:
        words.append(_strip_korean(run) if len(run) > 1 else run)
    return words + segmented


def _strip_korean(word: str) -> str:
    for ending in _KOREAN_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending):
            return "~" + word[: -len(ending)]
    return "~" + word


def _stems(stemmer: Any, words: list[str]) -> list[str]:
    """Stemmed (on the word as written, accents and all), then folded; words with digits or
    underscores (code, ids) kept whole."""
    stems = stemmer.stemWords([w.replace("ё", "е") for w in words])
    return [_fold(stem) if word.isalpha() else word
            for word, stem in zip(words, stems, strict=True)]


#: The script each stemmer's words are written in (the others': Latin).
_SCRIPTS = {"ru": "cyrillic", "el": "greek", "ar": "arabic"}
#: The language judge's scripts (core/language_id.py `script_of`) as `_SCRIPTS` names them;
#: the others are told apart by `CJK`.
_NAMED = {"latin": "latin", "cyrillic": "cyrillic", "el": "greek", "ar": "arabic"}


def _script(word: str) -> str:
    """The script of a word's first letter, as `_SCRIPTS` names them ("cjk" for CJK)."""
    script = _NAMED.get(script_of(ord(word[0])))
    if script is not None:
        return script
    return "cjk" if CJK.match(word) else "other"


def _fold(word: str) -> str:
    if word.isascii():
        return word
    return unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", word)))


@functools.cache
def _stemmer(language: str) -> Any:
    import Stemmer  # PyStemmer: C, ~1 ms to load; only for a vault that needs it

    return Stemmer.Stemmer(STEMMERS[language])


# ---- segmenters --------------------------------------------------------------------------------

#: Dictionary segmenters by name, each a loader called once on first use: none is shipped
#: (bigrams measured as good or better, docs/benchmarks.md); bench/eval_analysis.py adds the
#: ones it measures. A `SEGMENTERS` method names them joined by "+" ("jieba+bigram").
SEGMENTER_LOADERS: dict[str, Callable[[], Callable[[str], Iterable[str]]]] = {}


@functools.cache
def _segmenter(name: str) -> Callable[[str], Iterable[str]]:
    return SEGMENTER_LOADERS[name]()


# ---- the word keys ranking compares ---------------------------------------------------------



@functools.cache
def word_keys(languages: frozenset[str]) -> Callable[[str], tuple[str, ...]]:
    """For core/relevance.py: a query's or a name's word (lower-cased, not folded) → its keys
    in each of `languages`: English's light suffix strip always (names and code are often
    English), each stemmer's stem besides."""
    if not any(lang in STEMMERS for lang in languages):
        return english_keys
    return _WordKeys(languages)


class _WordKeys:
    """`word_keys`' function for languages with stemmers; pickles as its languages (the
    evaluation keeps query contexts)."""

    def __init__(self, languages: frozenset[str]) -> None:
        self.languages = languages
        self._stemmers = [(_SCRIPTS.get(lang, "latin"), _stemmer(lang))
                          for lang in sorted(languages) if lang in STEMMERS]
        self._known: dict[str, tuple[str, ...]] = {}

    def __call__(self, word: str) -> tuple[str, ...]:
        found = self._known.get(word)
        if found is None:
            found = self._keys(word)
            if len(self._known) < 65536:
                self._known[word] = found
        return found

    def _keys(self, word: str) -> tuple[str, ...]:
        found = dict.fromkeys(english_keys(word))
        if word.isalpha():
            script = _script(word)
            found.update(dict.fromkeys(_stems(stemmer, [word])[0]
                                       for of, stemmer in self._stemmers if of == script))
        return tuple(found)

    def __reduce__(self) -> tuple[Callable[[frozenset[str]], object], tuple[frozenset[str]]]:
        return word_keys, (self.languages,)
