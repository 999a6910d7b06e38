"""The query-side signals of ranking: names, threads and how confident a match is.

* Names: a note's title and aliases are what a user types to find it. The share of a name's
  words that a query mentions lifts the note, and a query that *is* a note's name puts that
  note first.
* Threads: numbered notes of one folder (`Session 3 – turn 12`, `2023-05-08 s01 t003 …`,
  `Turn 7`, `Chapter 2`) are read in natural name order (2 before 10), a thread per folder,
  leading date and series (the words before the number); a note near a strongly matching
  note of its thread gains part of that note's score, because a short turn or entry is
  rarely understandable alone (the answer follows the question). A note whose name carries
  no number (a memory `2026-11-20 slug`, a daily note, `Home`) belongs to no thread: where
  nothing says the order means something, the rule does nothing.
* Confidence: the absolute strength of a query's best evidence (cosine of meaning, share of
  the query's words present), so that relevance means the same across queries and a query
  that matches nothing well does not return confident results.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\w+", re.UNICODE)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_THREAD_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?=$|[ T_.-])")
# A sequence number in a name: digits alone or after at most two letters (`12`, `t003`, `D3`),
# not digits inside a word (`k3s`, `mp3`, `13th`).
_SEQUENCE = re.compile(r"(?<![^\W\d_])[^\W\d_]{0,2}\d+(?![^\W_])")
_DIGITS = re.compile(r"(\d+)")

#: Words too common to say anything about what a query is after.
STOP_WORDS = frozenset((
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "done",
    "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "more", "most", "my", "no",
    "not", "of", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same",
    "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours", "yourself", "tell", "show", "find",
    "know", "get", "got", "let", "s", "t",
))


# Chinese, Japanese and Korean are written without spaces: a run of them is taken as its
# overlapping two-character words (index/tables.py does the same for the full-text index).
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+")


def words(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens (CJK runs as two-character words)."""
    found = _WORD.findall(_fold(text))
    if text.isascii():
        return found
    return [part for word in found for part in _cjk_split(word)]


def _cjk_split(word: str) -> list[str]:
    if _CJK.search(word) is None:
        return [word]
    parts: list[str] = []
    for piece in re.split(f"({_CJK.pattern})", word):
        if not piece:
            continue
        if _CJK.fullmatch(piece) and len(piece) > 1:
            parts.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            parts.append(piece)
    return parts


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stop words, no bare numbers, no one-letter words."""
    return [w for w in words(text) if w not in STOP_WORDS and len(w) > 1 and not w.isdigit()]


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


@functools.lru_cache(maxsize=65536)
def _content_stems(name: str) -> frozenset[str]:
    """The stemmed content words of a name or a query (cached: both recur across searches)."""
    return frozenset(_stem(w) for w in content_words(name))


def _normal_name(text: str) -> str:
    return " ".join(words(text))


# ---- names ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NameMatch:
    coverage: float  # share of the best-matching name's words that the query mentions
    exact: bool  # the query is one of the note's names (case, accents, punctuation aside)


_NO_NAME_MATCH = NameMatch(0.0, False)


def name_match(query: str, names: Iterable[str]) -> NameMatch:
    """How much of the note's title or an alias the query names."""
    query_stems, normal_query = _query_name(query)
    best, exact = 0.0, False
    for name in names:
        normal, plain, numbered = _name_parts(name)
        if normal_query and normal == normal_query:
            exact = True
        elif query_stems.isdisjoint(plain) and query_stems.isdisjoint(numbered):
            continue  # no word in common (most candidates' names): it adds nothing
        # Numbering and dates in a name ("s01", "2023") count only when the query has them.
        named = numbered & query_stems if numbered else numbered
        size = len(plain) + len(named)
        if size:
            best = max(best, (len(plain & query_stems) + len(named)) / size)
    return NameMatch(best, exact) if best or exact else _NO_NAME_MATCH


@functools.lru_cache(maxsize=1024)
def _query_name(query: str) -> tuple[frozenset[str], str]:
    return _content_stems(query), _normal_name(query)


@functools.lru_cache(maxsize=65536)
def _name_parts(name: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """A name's words as one string (to compare with a query's), its stems without digits
    and those with (cached: every search asks for each candidate's names)."""
    stems = _content_stems(name)
    numbered = frozenset(w for w in stems if any(ch.isdigit() for ch in w))
    return _normal_name(name), stems - numbered, numbered


# ---- threads ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def thread_key(path: str, *, any_name: bool = False) -> tuple[str, str, str] | None:
    """(folder, leading date or "", series) of a numbered note, else None. A note belongs to a
    thread when its name, a leading date aside, holds a sequence number; the words before
    that number name the series (`Session 3 – turn 12` and `Session 4 – turn 1` are one
    thread, `Free Will 3` and `Cryptocurrencies 4` two)."""
    folder, _, name = path.rpartition("/")
    if any_name:  # every note of a folder, in the order Obsidian's file list shows
        return folder, "", ""
    stem = name[: name.rfind(".")] if "." in name[1:] else name
    found = _THREAD_DATE.match(stem)
    day, rest = (found.group(1), stem[found.end():]) if found else ("", stem)
    number = _SEQUENCE.search(rest)
    if number is None:
        return None
    return folder, day, " ".join(words(rest[: number.start()]))


@functools.lru_cache(maxsize=65536)
def natural_key(path: str) -> tuple[tuple[int, int | str], ...]:
    """Sorts names as people read them: `turn 2` before `turn 10` (case aside)."""
    parts = _DIGITS.split(path.casefold())
    return tuple((1, int(part)) if i % 2 else (0, part) for i, part in enumerate(parts))


def thread_of(folder_paths: Iterable[str], key: tuple[str, str, str], *,
              any_name: bool = False) -> list[str]:
    """The notes of one thread among a folder's notes, in natural name order."""
    return sorted((p for p in folder_paths if thread_key(p, any_name=any_name) == key),
                  key=natural_key)


def thread_neighbours(
    thread: Sequence[str], path: str, width: int
) -> list[tuple[str, int]]:
    """The notes within `width` places of `path` in its thread (in the given order), with
    distances."""
    try:
        here = thread.index(path)
    except ValueError:
        return []
    low, high = max(0, here - width), min(len(thread), here + width + 1)
    return [(thread[i], abs(i - here)) for i in range(low, high) if i != here]


def propagate(
    scores: Mapping[str, float],
    neighbours: Mapping[str, Sequence[tuple[str, int]]],
    *,
    share: float,
    decay: float,
) -> dict[str, float]:
    """score + share · the best neighbour's score (× decay for each further place)."""
    result = dict(scores)  # most candidates of most vaults have no neighbours
    for path, around in neighbours.items():
        if path not in scores:
            continue
        lift = max(
            (scores.get(other, 0.0) * decay ** (distance - 1) for other, distance in around),
            default=0.0,
        )
        result[path] = scores[path] + share * lift
    return result


# ---- confidence -------------------------------------------------------------------------------

#: all-MiniLM-L6-v2 cosines: below ~0.25 unrelated, above ~0.6 clearly about the same thing
#: (another model brings its own: index/embedders.py `calibration`).
COSINE_NONE = 0.25
COSINE_FULL = 0.6


def cosine_evidence(cosine: float | None, *, none: float = COSINE_NONE,
                    full: float = COSINE_FULL) -> float:
    """A cosine mapped onto [0, 1]: 0 at `none` or below, 1 at `full` or above."""
    if cosine is None:
        return 0.0
    return min(max((cosine - none) / (full - none), 0.0), 1.0)


def word_evidence(query: str, text: str) -> float:
    """The share of the query's content words (lightly stemmed) that occur in `text`: a stem
    counts where a word of the text starts with it (`paint` in "paintings")."""
    wanted, starts, runs = _query_terms(query)
    if not wanted:
        return 0.0
    folded = _fold(text)
    found = _at_word_starts(starts, folded)
    # a CJK two-character word counts anywhere in a run (those runs have no word starts)
    found.update(w for w in runs if w in folded)
    return len(found) / len(wanted)


#: Each stem with the query's longer stems that begin with it (`art`: `artist`).
_Starts = tuple[tuple[str, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=1024)
def _query_terms(query: str) -> tuple[frozenset[str], _Starts, frozenset[str]]:
    """A query's stems, its non-CJK ones as `_Starts`, and its CJK ones (cached: a search
    asks for the same query's evidence once per candidate note)."""
    wanted = _content_stems(query)
    plain = sorted(w for w in wanted if _CJK.search(w) is None)
    starts = tuple(
        (stem, tuple(t for t in plain if len(t) > len(stem) and t.startswith(stem)))
        for stem in plain)
    return wanted, starts, wanted - frozenset(plain)


def _at_word_starts(starts: _Starts, text: str) -> set[str]:
    """The stems that begin a word of `text`. A word that a longer stem also begins counts
    for the longer one only (`artist` in "artists" is not `art`). Substring searches, not a
    regular expression: this runs for every candidate of every search, ~6x faster."""
    found = set()
    for stem, longer in starts:
        at = text.find(stem)
        while at >= 0:
            before = text[at - 1] if at else " "
            if not (before.isalnum() or before == "_") and not any(
                    text.startswith(other, at) for other in longer):
                found.add(stem)
                break
            at = text.find(stem, at + 1)
    return found


def _fold(text: str) -> str:
    folded = text.casefold()
    if not folded.isascii():
        # NFC again: marks that are not accents (kana voicing) rejoin their letters
        folded = unicodedata.normalize(
            "NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", folded)))
    return folded


def evidence(cosine: float | None, query: str, text: str, *, none: float = COSINE_NONE,
             full: float = COSINE_FULL) -> float:
    """Absolute evidence that a note matches the query, in [0, 1]: the stronger of meaning
    and words, each counting alone (an exact keyword with unrelated meaning still counts)."""
    meaning = cosine_evidence(cosine, none=none, full=full)
    lexical = word_evidence(query, text)
    return 1.0 - (1.0 - meaning) * (1.0 - lexical)
