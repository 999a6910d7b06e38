"""A text's words and the keys they are compared by: word tokens lower-cased and
accent-folded (`fold`), Chinese, Japanese and Korean runs as overlapping two-character words,
content words (no function words, numbers or one-letter words), and a word's keys
(`WordKeys`: by default, `english_keys`, English suffixes stripped on Latin words). The
signals of core/relevance.py compare names, queries and texts through them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from vaultmem.core.function_words import ENGLISH, FunctionWords

_WORD = re.compile(r"\w+", re.UNICODE)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")

#: Words too common to say anything about what a query is after (English's; a query in another
#: language skips its own language's too: core/function_words.py).
STOP_WORDS = ENGLISH.words


# Chinese, Japanese and Korean are written without spaces: a run of them is taken as its
# overlapping two-character words (index/tables.py does the same for the full-text index).
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+")


def has_cjk(text: str) -> bool:
    """Whether `text` holds a Chinese, Japanese or Korean character."""
    return _CJK.search(text) is not None


def words(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens (CJK runs as two-character words)."""
    found = _WORD.findall(fold(text))
    if text.isascii():
        return found
    return [part for word in found for part in _cjk_split(word)]


def _cjk_split(word: str, function: FunctionWords | None = None) -> list[str]:
    """`word`, its CJK runs as two-character words; with `function`, each run parted at its
    function words first (core/function_words.py)."""
    if _CJK.search(word) is None:
        return [word]
    parts: list[str] = []
    for piece in re.split(f"({_CJK.pattern})", word):
        if not piece:
            continue
        if not _CJK.fullmatch(piece):
            parts.append(piece)
            continue
        for run in [piece] if function is None else function.cjk_pieces(piece):
            if len(run) > 1:
                parts.extend(run[i : i + 2] for i in range(len(run) - 1))
            else:
                parts.append(run)
    return parts


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stop words, no bare numbers, no one-letter words."""
    return [w for w in words(text) if _is_content(w)]


def _is_content(word: str, function: FunctionWords = ENGLISH) -> bool:
    return not function.is_function(word) and len(word) > 1 and not word.isdigit()


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light English suffix strip so that `painting`, `paints` and `painted` meet at `paint`
    (words of other scripts are left as they are)."""
    if not word.isascii():
        return word
    for suffix in ("ings", "ing", "edly", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


#: A word as written (lower-cased, accents kept) → the keys it is compared by: the default,
#: `english_keys`, strips English suffixes; index/analysis.py gives one that also stems in the
#: vault's other languages, so a Russian query's `заметки` meets a note's `заметках`.
WordKeys = Callable[[str], tuple[str, ...]]


def english_keys(word: str) -> tuple[str, ...]:
    """The default word keys: the folded word, English suffixes stripped."""
    return (_stem(fold(word)),)


#: Each content word's keys, one set per distinct word (words with the same keys once).
KeyGroups = tuple[frozenset[str], ...]


@functools.lru_cache(maxsize=65536)
def content_keys(text: str, keys: WordKeys = english_keys,
                  function: FunctionWords = ENGLISH) -> KeyGroups:
    """The keys of a name's or a query's content words (cached: both recur across
    searches). English's function words are skipped, or `function`'s (a query's language)."""
    if text.isascii():
        raw = _WORD.findall(text.casefold())
    else:
        lowered = unicodedata.normalize("NFC", text.casefold())
        raw = [part for word in _WORD.findall(lowered) for part in _cjk_split(word, function)]
    groups: dict[frozenset[str], None] = {}
    for word in raw:
        if _is_content(fold(word), function):
            groups[frozenset(keys(word))] = None
    return tuple(groups)


def fold(text: str) -> str:
    """Case-folded, accents dropped (`café` is `cafe`)."""
    folded = text.casefold()
    if not folded.isascii():
        # NFC again: marks that are not accents (kana voicing) rejoin their letters
        folded = unicodedata.normalize(
            "NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", folded)))
    return folded
