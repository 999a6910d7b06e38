"""The query-side signals of ranking: names, threads and how confident a match is.

* Names: a note's title and aliases are what a user types to find it. The share of a name's
  words that a query mentions lifts the note, and a query that *is* a note's name puts that
  note first.
* Threads: the short notes (one chunk: a turn, an entry, a memory) of a folder whose notes are
  mostly short are read in natural name order (2 before 10), as Obsidian lists them; a note
  near a strongly matching note of its thread gains part of that note's score, because a short
  turn or entry is rarely understandable alone (the answer follows the question). A folder of
  mostly longer notes is no thread: where nothing says the order means something, the rule
  does nothing. (Threads of numbered names only, `Session 3 – turn 12`, remain a RankingParams
  option the evaluation measures.)
* Confidence: the absolute strength of a query's best evidence (cosine of meaning, share of
  the query's words present), so that relevance means the same across queries and a query
  that matches nothing well does not return confident results.

Each compares words by their keys (core/words.py: the words of a text, folded, and `WordKeys`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from vaultmem.core.function_words import ENGLISH, FunctionWords
from vaultmem.core.words import (
    KeyGroups,
    WordKeys,
    content_keys,
    english_keys,
    fold,
    has_cjk,
    words,
)

_THREAD_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?=$|[ T_.-])")
# A sequence number in a name: digits alone or after at most two letters (`12`, `t003`, `D3`),
# not digits inside a word (`k3s`, `mp3`, `13th`).
_SEQUENCE = re.compile(r"(?<![^\W\d_])[^\W\d_]{0,2}\d+(?![^\W_])")
_DIGITS = re.compile(r"(\d+)")


# ---- names ------------------------------------------------------------------------------------


def _normal_name(text: str) -> str:
    return " ".join(words(text))


@dataclass(frozen=True)
class NameMatch:
    coverage: float  # share of the best-matching name's words that the query mentions
    exact: bool  # the query is one of the note's names (case, accents, punctuation aside)


#: What `name_matches` gives a note none of whose names the query mentions (most notes).
NO_NAME_MATCH = NameMatch(0.0, False)


def name_match(query: str, names: Iterable[str], keys: WordKeys = english_keys) -> NameMatch:
    """How much of the note's title or an alias the query names."""
    return _name_match(_query_name(query, keys), names, keys)


def name_matches(query: str, names: Mapping[str, Sequence[str]], paths: Iterable[str],
                 keys_of: Callable[[str], WordKeys]) -> dict[str, NameMatch]:
    """`name_match` of each of `paths` (its names in `names`, none if not there), its words
    compared by `keys_of(path)`: the query is read once per kind of keys, and a note none of
    whose names shares a word with the query (most candidates) is set aside at one look."""
    queries: dict[WordKeys, tuple[frozenset[str], str]] = {}
    found = {}
    for path in paths:
        keys = keys_of(path)
        read = queries.get(keys)
        if read is None:
            read = queries[keys] = _query_name(query, keys)
        own = names.get(path, ())
        if isinstance(own, tuple):
            normals, every = _names_keys(own, keys)
            if not (read[1] and read[1] in normals) and read[0].isdisjoint(every):
                found[path] = NO_NAME_MATCH
                continue
        found[path] = _name_match(read, own, keys)
    return found


def _name_match(read: tuple[frozenset[str], str], names: Iterable[str],
                keys: WordKeys) -> NameMatch:
    query_keys, normal_query = read
    best, exact = 0.0, False
    for name in names:
        normal, plain, numbered, every = _name_parts(name, keys)
        if normal_query and normal == normal_query:
            exact = True
        elif query_keys.isdisjoint(every):
            continue  # no word in common (most candidates' names): it adds nothing
        # Numbering and dates in a name ("s01", "2023") count only when the query has them.
        named = sum(1 for group in numbered if not group.isdisjoint(query_keys))
        size = len(plain) + named
        if size:
            held = sum(1 for group in plain if not group.isdisjoint(query_keys))
            best = max(best, (held + named) / size)
    return NameMatch(best, exact) if best or exact else NO_NAME_MATCH


@functools.lru_cache(maxsize=65536)
def _names_keys(names: tuple[str, ...], keys: WordKeys) -> tuple[frozenset[str], frozenset[str]]:
    """A note's names as compared with a query: their words as strings, and all their keys."""
    parts = [_name_parts(name, keys) for name in names]
    return (frozenset(part[0] for part in parts),
            frozenset().union(*(part[3] for part in parts)))


@functools.lru_cache(maxsize=1024)
def _query_name(query: str, keys: WordKeys) -> tuple[frozenset[str], str]:
    return frozenset().union(*content_keys(query, keys)), _normal_name(query)


@functools.lru_cache(maxsize=65536)
def _name_parts(name: str, keys: WordKeys) -> tuple[str, KeyGroups, KeyGroups, frozenset[str]]:
    """A name's words as one string (to compare with a query's), its words' keys without
    digits and those with, and all its keys (cached: every search asks for each candidate's
    names)."""
    groups = content_keys(name, keys)
    numbered = tuple(g for g in groups if any(ch.isdigit() for key in g for ch in key))
    plain = tuple(g for g in groups if g not in numbered)
    return _normal_name(name), plain, numbered, frozenset().union(*groups)


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
    return neighbours_at(thread, here, width)


def neighbours_at(thread: Sequence[str], here: int, width: int) -> list[tuple[str, int]]:
    """`thread_neighbours` of the note at place `here` (a caller that knows the place skips
    the search for it along the thread)."""
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
    factors: dict[int, float] = {}  # decay ** (distance - 1), once per distance
    for path, around in neighbours.items():
        own = scores.get(path)
        if own is None:
            continue
        lift: float | None = None
        for other, distance in around:
            value = scores.get(other, 0.0)
            if distance != 1:  # × decay ** 0 is × 1.0: the value itself
                factor = factors.get(distance)
                if factor is None:
                    factor = factors[distance] = decay ** (distance - 1)
                value *= factor
            if lift is None or value > lift:
                lift = value
        result[path] = own + share * (0.0 if lift is None else lift)
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


def word_evidence(query: str, text: str, keys: WordKeys = english_keys,
                  function: FunctionWords = ENGLISH) -> float:
    """The share of the query's content words (lightly stemmed, or by `keys`; `function`: the
    function words of the query's language, skipped) that occur in `text`: a key counts where
    a word of the text starts with it (`paint` in "paintings")."""
    found, wanted = words_found(query, text, keys, function)
    return len(found) / wanted if wanted else 0.0


def words_found(query: str, text: str, keys: WordKeys = english_keys,
                function: FunctionWords = ENGLISH) -> tuple[set[int], int]:
    """The places of the query's content words that `text` holds, and how many it has
    (`word_evidence`; bench/eval_rarity.py weighs them by their rarity)."""
    wanted, starts, runs = _query_terms(query, keys, function)
    if not wanted:
        return set(), 0
    folded = fold(text)
    found = _at_word_starts(starts, folded)
    # a CJK two-character word counts anywhere in a run (those runs have no word starts)
    found.update(i for i, key in runs if key in folded)
    return found, wanted


def word_evidences(query: str, texts: Iterable[tuple[str, str]],
                   keys_of: Callable[[str], WordKeys]) -> dict[str, float]:
    """`word_evidence(query, text, keys_of(path))` of each (path, text), the query's terms
    read once per kind of keys (a search asks this of its ~100 notes found by words)."""
    read: dict[WordKeys, tuple[int, _Starts, tuple[tuple[int, str], ...]]] = {}
    found: dict[str, float] = {}
    for path, text in texts:
        keys = keys_of(path)
        terms = read.get(keys)
        if terms is None:
            terms = read[keys] = _query_terms(query, keys, ENGLISH)
        wanted, starts, runs = terms
        if not wanted:
            found[path] = 0.0
            continue
        folded = fold(text)
        held = _at_word_starts(starts, folded)
        held.update(i for i, key in runs if key in folded)
        found[path] = len(held) / wanted
    return found


#: Each key with its word's place among the query's words and the keys of the query's other
#: words that begin with it and are longer (`art`: `artist`).
_Starts = tuple[tuple[int, str, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=1024)
def _query_terms(query: str, keys: WordKeys, function: FunctionWords = ENGLISH
                 ) -> tuple[int, _Starts, tuple[tuple[int, str], ...]]:
    """How many content words a query has, its non-CJK keys as `_Starts` and its CJK ones
    (cached: a search asks for the same query's evidence once per candidate note)."""
    groups = content_keys(query, keys, function)
    plain = [(i, key) for i, group in enumerate(groups) for key in sorted(group)
             if not has_cjk(key)]
    starts = tuple(
        (i, key, tuple(sorted({other for j, other in plain if j != i and other not in groups[i]
                               and len(other) > len(key) and other.startswith(key)})))
        for i, key in plain)
    runs = tuple((i, key) for i, group in enumerate(groups) for key in sorted(group)
                 if has_cjk(key))
    return len(groups), starts, runs


def _at_word_starts(starts: _Starts, text: str) -> set[int]:
    """The words one of whose keys begins a word of `text`. A word of the text that a longer
    key of another query word also begins counts for that one only (`artist` in "artists" is
    not `art`). Substring searches, not a regular expression: this runs for every candidate of
    every search, ~6x faster."""
    found = set()
    find = text.find
    for place, key, longer in starts:
        if place in found:
            continue
        at = find(key)
        while at >= 0:
            starts_word = at == 0 or not ((before := text[at - 1]).isalnum() or before == "_")
            if starts_word and not (longer and any(text.startswith(o, at) for o in longer)):
                found.add(place)
                break
            at = find(key, at + 1)
    return found


def evidence(cosine: float | None, query: str, text: str, keys: WordKeys = english_keys, *,
             none: float = COSINE_NONE, full: float = COSINE_FULL,
             function: FunctionWords = ENGLISH) -> float:
    """Absolute evidence that a note matches the query, in [0, 1]: the stronger of meaning
    and words, each counting alone (an exact keyword with unrelated meaning still counts);
    `function`: the function words of the query's language, which count for nothing."""
    meaning = cosine_evidence(cosine, none=none, full=full)
    lexical = word_evidence(query, text, keys, function)
    return 1.0 - (1.0 - meaning) * (1.0 - lexical)
