"""Hybrid-search ranking: fusion and per-note aggregation (memory re-ranking and review
blending: core/rerank.py; snippets: core/display.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from vaultmem.core.function_words import ENGLISH, FunctionWords
from vaultmem.core.relevance import (
    COSINE_FULL,
    COSINE_NONE,
    NO_NAME_MATCH,
    NameMatch,
    evidence,
    name_matches,
    propagate,
    word_evidences,
)
from vaultmem.core.words import WordKeys, english_keys

# Memory-factor curve: 0.5 at score 0, ≈0.99 for a fresh memory (score 1), → 1.0 above.
# Each value below was chosen with scripts/eval on its development queries (docs/benchmarks.md).
# Exact words weigh a little more than meaning: on conversation memory BM25 alone beats the
# model alone by ~17 points of recall, on the judged vault the model is ahead; 0.55 serves both.
TEXT_WEIGHT = 0.55
# BM25 is weighed by the share of the query's words a note holds, to this power (0: not).
COVERAGE_POWER = 1.0
# A note gains this share of its best thread neighbour's score (core/relevance.py), less by
# THREAD_DECAY for each further place, up to THREAD_WIDTH places away.
THREAD_SHARE = 0.5
THREAD_DECAY = 0.7
THREAD_WIDTH = 2
# Only short notes (one chunk: a turn, an entry) take part in threads: a longer note stands on
# its own, and lifting whole neighbouring sessions of a chat lowered session recall (dev R@5
# 87.5 -> 87.1).
THREAD_MAX_CHUNKS = 1
# A folder reads as a thread (its notes in name order, as Obsidian lists them) when this share
# of its notes is short: a conversation's turns, a log's entries. Measured against threads of
# numbered names (leave-one-conversation-out, docs/benchmarks.md): the same LoCoMo figures but
# one fold (-0.4), tldr in Russian +1.0 and Chinese +1.8, the vault set -1.5 and tldr in English
# -0.9 nDCG@5; kept because it needs no file-name pattern to fire.
THREAD_SHORT_SHARE = 0.8
# A note whose title or alias the query names is lifted by up to this share.
NAME_BOOST = 0.3
# A query's confidence is the best evidence among this many of its best notes.
CONFIDENCE_DEPTH = 3
#: The documented threshold of a real match: `matched` in the protocol is relevance ABOVE it.
#: Exclusive, by measurement (bench/match_boundary.py, the judged tldr set, 8 languages): of the
#: questions whose best result sits exactly at 0.5, 15 have no answer and 14 have one (against
#: 240 and 888 overall); excluding 0.5 refuses 72.5 % of the no-answer questions instead of
#: 66.2 % and still matches 84.3 % of the answerable ones instead of 85.9 %.
MATCH_THRESHOLD = 0.5
#: The least relevance that is a match (the float just above MATCH_THRESHOLD), for `>=` filters.
MATCH_FLOOR = math.nextafter(MATCH_THRESHOLD, 1.0)


def is_match(relevance: float) -> bool:
    """Whether a result is a real match: relevance above MATCH_THRESHOLD."""
    return relevance > MATCH_THRESHOLD



@dataclass(frozen=True)
class RankingParams:
    """Every value of the ranking, in one place (the defaults are the constants above). Search
    passes the model's cosine calibration; the evaluation switches rules off one at a time
    (bench/eval_ablation.py)."""

    text_weight: float = TEXT_WEIGHT
    coverage_power: float = COVERAGE_POWER
    thread_share: float = THREAD_SHARE  # 0: no thread neighbours
    thread_decay: float = THREAD_DECAY
    thread_width: int = THREAD_WIDTH
    thread_max_chunks: int = THREAD_MAX_CHUNKS
    # every note of a folder in name order (False: only numbered names, one thread a series)
    thread_any_name: bool = True
    # a folder reads as a thread only when this share of its notes is short (0: any folder)
    thread_short_share: float = THREAD_SHORT_SHARE
    name_boost: float = NAME_BOOST  # 0: names do not lift
    name_power: float = 1.0  # the lift grows with the name's coverage to this power
    exact_name_first: bool = True
    confidence_depth: int = CONFIDENCE_DEPTH
    cosine_none: float = COSINE_NONE  # the model's cosine of unrelated texts (relevance.py)
    cosine_full: float = COSINE_FULL  # and of texts clearly about the same thing
    # the cosine scaled by the best's gap to the k-th best note's (0: to the lowest, min-max)
    cosine_tail: int = 0
    fusion: str = "minmax"  # or "rrf": reciprocal rank fusion of the two rankings
    rrf_k: float = 60.0


DEFAULT_RANKING = RankingParams()


class ChunkHit(NamedTuple):
    """One chunk a retrieval found. A named tuple, not a frozen dataclass: a search makes ~550
    of these and ~470 NoteSignals, and a frozen dataclass takes twice as long to make."""

    chunk_id: str
    path: str
    text: str
    score: float


@dataclass(frozen=True)
class NoteMatch:
    path: str
    relevance: float
    text: str  # the best chunk's text: the hit's snippet is cut from it (`snippet`)
    chunk_id: str
    vector_similarity: float | None


@dataclass(frozen=True)
class Ranked:
    path: str
    relevance: float
    memory_score: float | None
    final: float
    text: str  # as in NoteMatch
    review: bool = False


class NoteSignals(NamedTuple):
    """What retrieval found for one note: its best cosine and BM25 score over its chunks (max,
    so a long note gains nothing from its length) and the chunk shown as its snippet."""

    path: str
    cosine: float | None
    text_score: float
    best: ChunkHit
    words_text: str = ""  # the text of the chunk that gave `text_score`


@dataclass(frozen=True)
class QueryContext:
    """What ranking needs to know beyond the hits: each candidate's names (file name, title,
    aliases), its thread neighbours (path, places away) and how the query's words are compared
    with each note's in the note's language (core/relevance.py's `WordKeys`; English's for a
    note not listed)."""

    query: str
    names: Mapping[str, Sequence[str]] = field(default_factory=dict)
    neighbours: Mapping[str, Sequence[tuple[str, int]]] = field(default_factory=dict)
    keys: Mapping[str, WordKeys] = field(default_factory=dict)
    # the function words of the query's language (core/function_words.py): no evidence
    function_words: FunctionWords = ENGLISH

    def keys_of(self, path: str) -> WordKeys:
        return self.keys.get(path, english_keys)


def note_signals(
    vector_hits: Sequence[ChunkHit], text_hits: Sequence[ChunkHit], *,
    text_weight: float = TEXT_WEIGHT,
) -> dict[str, NoteSignals]:
    """One NoteSignals per note found by either list: its best cosine, its best BM25 hit and
    its chunk with the best fused chunk score (min-max of each list, weighted; ties to the
    smaller chunk id), in one pass over each list (this runs on every search's ~550 hits)."""
    cosine: dict[str, float] = {}
    text: dict[str, ChunkHit] = {}
    fused: dict[str, float] = {}  # chunk id: fused chunk score
    hits: dict[str, ChunkHit] = {}  # chunk id: its hit, as first met
    # hits unpacked as the tuples they are: a named tuple's field by name costs a call
    low, span = _scale(vector_hits)
    weight = 1.0 - text_weight
    for hit in vector_hits:
        chunk_id, path, _, score = hit
        held = cosine.get(path, -1.0)
        cosine[path] = score if score > held else held  # max(held, score)
        value = 1.0 if span <= 0.0 else (score - low) / span
        fused[chunk_id] = fused.get(chunk_id, 0.0) + weight * value
        if chunk_id not in hits:
            hits[chunk_id] = hit
    low, span = _scale(text_hits)
    for hit in text_hits:
        chunk_id, path, _, score = hit
        kept = text.get(path)
        if kept is None or score > kept[3]:
            text[path] = hit
        value = 1.0 if span <= 0.0 else (score - low) / span
        fused[chunk_id] = fused.get(chunk_id, 0.0) + text_weight * value
        if chunk_id not in hits:
            hits[chunk_id] = hit
    best: dict[str, ChunkHit] = {}
    held_best: dict[str, tuple[float, str]] = {}  # path: (fused score, chunk id), its best
    for chunk_id, value in fused.items():
        hit = hits[chunk_id]
        path = hit[1]
        kept_best = held_best.get(path)
        if kept_best is None or value > kept_best[0] or (
                value == kept_best[0] and chunk_id < kept_best[1]):
            held_best[path] = (value, chunk_id)
            best[path] = hit
    signals = {}
    for path, chunk in best.items():
        words = text.get(path)
        signals[path] = NoteSignals(
            path, cosine.get(path), 0.0 if words is None else max(words[3], 0.0), chunk,
            "" if words is None else words[2])
    return signals


def _scale(hits: Sequence[ChunkHit]) -> tuple[float, float]:
    """The lowest score of `hits` and the span up to the highest (min-max scaling: a span of
    0, all scores equal, scales every one to 1)."""
    if not hits:
        return 0.0, 0.0
    scores = [hit[3] for hit in hits]
    low = min(scores)
    return low, max(scores) - low


def hybrid_scores(
    signals: Mapping[str, NoteSignals], *, text_weight: float = TEXT_WEIGHT,
    coverage: Mapping[str, float] | None = None, coverage_power: float = COVERAGE_POWER,
    cosine_tail: int = 0,
) -> dict[str, float]:
    """(1 - w) · min-max cosine + w · BM25 / best BM25 · coverage^p, per note, in [0, 1].

    `coverage` is the share of the query's words each note holds: BM25 credits a rare word
    fully, so a note holding two words of a long question can beat the note that answers it
    in other words. Notes found only by their words count at the lowest cosine. With
    `cosine_tail` k > 0 the cosine is scaled by the best's gap to the k-th best note's
    (`meaning_floor`) instead of to the lowest, and floored at 0."""
    if not 0.0 <= text_weight <= 1.0:
        raise ValueError(f"text_weight must be in [0, 1], got {text_weight}")
    cosines = [s.cosine for s in signals.values() if s.cosine is not None]
    low = min(cosines, default=0.0)
    high = max(cosines, default=0.0)
    floor = meaning_floor(cosines, cosine_tail) if cosine_tail > 0 else low
    text_best = max((s.text_score for s in signals.values()), default=0.0)
    scores = {}
    for path, (_, cosine, text_score, _, _) in signals.items():
        if cosine is None:
            cosine = low
        if high > floor:
            meaning = (cosine - floor) / (high - floor) if cosine > floor else 0.0
        else:
            meaning = (1.0 if cosine >= high else 0.0) if cosines else 0.0
        words = text_score / text_best if text_best > 0 else 0.0
        if coverage is not None:
            words *= coverage.get(path, 0.0) ** coverage_power
        scores[path] = (1.0 - text_weight) * meaning + text_weight * words
    return scores


def meaning_floor(cosines: Sequence[float], k: int) -> float:
    """The k-th best of `cosines` (the lowest when there are fewer than k; 0 when none): how
    close a note's cosine comes to it says how little it stands out of the crowd."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not cosines:
        return 0.0
    if k >= len(cosines):
        return min(cosines)
    return sorted(cosines, reverse=True)[k - 1]


def rrf_scores(
    signals: Mapping[str, NoteSignals], *, text_weight: float, coverage: Mapping[str, float],
    coverage_power: float, k: float,
) -> dict[str, float]:
    """Weighted reciprocal rank fusion of the notes' order by cosine and by words (BM25 ·
    coverage^p), scaled so the best possible note scores 1."""
    by_meaning = sorted((p for p, s in signals.items() if s.cosine is not None),
                        key=lambda p: -(signals[p].cosine or 0.0))
    words = {p: s.text_score * coverage.get(p, 0.0) ** coverage_power
             for p, s in signals.items() if s.text_score > 0}
    by_words = sorted((p for p in words if words[p] > 0), key=lambda p: -words[p])
    scores = dict.fromkeys(signals, 0.0)
    for ranking, weight in ((by_meaning, 1.0 - text_weight), (by_words, text_weight)):
        for place, path in enumerate(ranking):
            scores[path] += weight * (k + 1) / (k + 1 + place)
    return scores


def rank_notes(
    signals: Mapping[str, NoteSignals], context: QueryContext, *,
    params: RankingParams = DEFAULT_RANKING, limit: int | None = None,
) -> list[NoteMatch]:
    """The `limit` best notes (all by default), best first; relevance in [0, 1] on the scale
    documented in docs/protocol.md."""
    if not signals:
        return []
    names_of = context.names.get
    coverage = word_evidences(
        context.query, ((p, " ".join([s.words_text, *names_of(p, ())]))
                        for p, s in signals.items() if s.text_score > 0), context.keys_of)
    if params.fusion == "rrf":
        scores = rrf_scores(signals, text_weight=params.text_weight, coverage=coverage,
                            coverage_power=params.coverage_power, k=params.rrf_k)
    else:
        scores = hybrid_scores(signals, text_weight=params.text_weight, coverage=coverage,
                               coverage_power=params.coverage_power,
                               cosine_tail=params.cosine_tail)
    names = name_matches(context.query, context.names, scores, context.keys_of)
    if params.thread_share > 0:
        scores = propagate(scores, context.neighbours, share=params.thread_share,
                           decay=params.thread_decay)
    boosted: dict[str, float] = {}
    exact: dict[str, bool] = {}
    for p, s in scores.items():
        name = names[p]
        if name is NO_NAME_MATCH:  # most notes: × 1.0 and not exact, as below
            boosted[p], exact[p] = s, False
        else:
            boosted[p] = s * (1.0 + params.name_boost * name.coverage ** params.name_power)
            exact[p] = params.exact_name_first and name.exact
    scores = boosted
    # the sort keys made at once: a key function called per note cost as much as the sort
    order = [p for _, _, p in sorted([(not exact[p], -s, p) for p, s in scores.items()])]
    best = max(scores.values())
    confidence = max(_evidence(p, signals[p], context, names[p], params)
                     for p in order[:params.confidence_depth])
    matches = []
    for path in order[:limit]:
        relative = 1.0 if exact[path] else (scores[path] / best if best > 0 else 0.0)
        chunk = signals[path].best
        matches.append(NoteMatch(
            path=path, relevance=round(relative * confidence, 6),
            text=chunk.text, chunk_id=chunk.chunk_id,
            vector_similarity=signals[path].cosine,
        ))
    return matches


def _evidence(path: str, signal: NoteSignals, context: QueryContext, name: NameMatch,
              params: RankingParams) -> float:
    """Absolute evidence that the note matches (1 for a note named exactly as the query)."""
    if name.exact:
        return 1.0
    text = " ".join([signal.best.text, signal.words_text, *context.names.get(path, ())])
    return evidence(signal.cosine, context.query, text, context.keys_of(path),
                    none=params.cosine_none, full=params.cosine_full,
                    function=context.function_words)
