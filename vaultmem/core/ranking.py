"""Hybrid-search ranking: fusion, per-note aggregation, memory re-ranking, review blending."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

ELLIPSIS = "…"
# Memory-factor curve: 0.5 at score 0, ≈0.99 for a fresh memory (score 1), → 1.0 above.
FACTOR_FLOOR = 0.5
FACTOR_SCALE = 0.25
# Fusion weights: meaning leads; exact words weigh more in short (keyword) queries.
TEXT_WEIGHT = 0.3
SHORT_QUERY_TEXT_WEIGHT = 0.5
SHORT_QUERY_TERMS = 2
# A note's evidence is the sum of its chunks' fused scores, best first, each further chunk
# counting half as much as the one before: several matching passages beat one lucky chunk,
# but a long note cannot win on length alone (the series is bounded by twice the best).
CHUNK_DECAY = 0.5
# Vector scores are normalised by the best cosine, but never by less than this: when nothing is
# close in meaning (a rare word, a name, a typo), the nearest chunks are noise and must not
# outweigh a chunk that contains the exact word.
VECTOR_CONFIDENT = 0.5

_TERM = re.compile(r"\w+")


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: str
    path: str
    text: str
    score: float


@dataclass(frozen=True)
class NoteMatch:
    path: str
    relevance: float
    snippet: str
    chunk_id: str
    vector_similarity: float | None


@dataclass(frozen=True)
class Ranked:
    path: str
    relevance: float
    memory_score: float | None
    final: float
    snippet: str
    review: bool = False


def text_weight_for(query: str) -> float:
    """How much exact words count against meaning: more for short keyword queries."""
    terms = len(_TERM.findall(query))
    return SHORT_QUERY_TEXT_WEIGHT if terms <= SHORT_QUERY_TERMS else TEXT_WEIGHT


def fuse(
    vector_hits: Sequence[ChunkHit], text_hits: Sequence[ChunkHit], *,
    text_weight: float = TEXT_WEIGHT,
) -> list[tuple[ChunkHit, float]]:
    """Score fusion by chunk id, best first, each fused score in [0, 1].

    Each list is normalised by its best score (cosine and BM25 are on different scales), then
    combined convexly. Unlike rank fusion this keeps magnitudes: a chunk far behind the best
    by meaning does not catch up merely by sitting in both lists. Cosines are on an absolute
    scale, so the vector list is normalised by at least VECTOR_CONFIDENT.
    """
    if not 0.0 <= text_weight <= 1.0:
        raise ValueError(f"text_weight must be in [0, 1], got {text_weight}")
    fused: dict[str, float] = {}
    hits: dict[str, ChunkHit] = {}
    lists = ((vector_hits, 1.0 - text_weight, VECTOR_CONFIDENT), (text_hits, text_weight, 0.0))
    for ranking, weight, floor in lists:
        best = max((hit.score for hit in ranking), default=0.0)
        if best <= 0.0:
            continue
        best = max(best, floor)
        seen: set[str] = set()
        for hit in ranking:
            if hit.chunk_id in seen:
                continue  # only a chunk's best position in one list counts
            seen.add(hit.chunk_id)
            value = weight * max(hit.score, 0.0) / best
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + value
            hits.setdefault(hit.chunk_id, hit)
    order = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))
    return [(hits[chunk_id], fused[chunk_id]) for chunk_id in order]


def aggregate_by_note(
    fused: Sequence[tuple[ChunkHit, float]],
    *,
    vector_hits: Sequence[ChunkHit] = (),
    query: str = "",
) -> list[NoteMatch]:
    """One match per note, best first; relevance in [0, 1].

    Relevance is the note's decayed sum of chunk scores (best chunk ×1, next ×1/2, ×1/4, …)
    over the largest possible such sum (every chunk the best in both lists).
    """
    best_possible = 1.0 / (1.0 - CHUNK_DECAY)
    cosine = {hit.chunk_id: hit.score for hit in vector_hits}
    by_note: dict[str, list[tuple[ChunkHit, float]]] = {}
    for hit, value in fused:
        by_note.setdefault(hit.path, []).append((hit, value))
    matches = []
    for path, chunks in by_note.items():
        chunks.sort(key=lambda pair: (-pair[1], pair[0].chunk_id))
        best_hit = chunks[0][0]
        evidence = sum(value * CHUNK_DECAY**n for n, (_, value) in enumerate(chunks))
        relevance = min(evidence / best_possible, 1.0)
        matches.append(
            NoteMatch(
                path=path,
                relevance=relevance,
                snippet=snippet(best_hit.text, query),
                chunk_id=best_hit.chunk_id,
                vector_similarity=cosine.get(best_hit.chunk_id),
            )
        )
    matches.sort(key=lambda match: (-match.relevance, match.path))
    return matches


def snippet(text: str, query: str, *, width: int = 200) -> str:
    """About `width` characters of `text` around the first query term, cut at word boundaries."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    budget = max(width - 2, 1)  # room for an ellipsis at each end
    position = _first_term_position(flat, query)
    start = max(0, min(position - budget // 3, len(flat) - budget))
    end = min(len(flat), start + budget)
    if start > 0 and not flat[start - 1].isspace():
        start = _next_word_start(flat, start, position)
    if end < len(flat) and not flat[end].isspace():
        end = _previous_word_end(flat, end, start)
    window = flat[start:end].strip()
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if end < len(flat) else ""
    return f"{prefix}{window}{suffix}"


def _first_term_position(text: str, query: str) -> int:
    lowered = text.casefold()
    positions = [
        found for term in _TERM.findall(query.casefold()) if (found := lowered.find(term)) >= 0
    ]
    return min(positions, default=0)


def _next_word_start(text: str, start: int, limit: int) -> int:
    space = text.find(" ", start, max(limit, start))
    return space + 1 if space >= 0 else start


def _previous_word_end(text: str, end: int, start: int) -> int:
    space = text.rfind(" ", start + 1, end)
    return space if space > start else end


def memory_factor(score: float | None) -> float:
    """Re-rank multiplier in [0.5, 1.0]: monotone in the score, saturating above about 1.

    Regular notes (None) count as fresh memories (score 1.0), so decay re-ranks memories
    without erasing them.
    """
    value = 1.0 if score is None else max(score, 0.0)
    return FACTOR_FLOOR + (1.0 - FACTOR_FLOOR) * (1.0 - math.exp(-value / FACTOR_SCALE))


def rerank(matches: Sequence[NoteMatch], memory_scores: Mapping[str, float]) -> list[Ranked]:
    """final = relevance · memory_factor(score); best first, ties by path."""
    ranked = [
        Ranked(
            path=match.path,
            relevance=match.relevance,
            memory_score=memory_scores.get(match.path),
            final=match.relevance * memory_factor(memory_scores.get(match.path)),
            snippet=match.snippet,
        )
        for match in matches
    ]
    ranked.sort(key=lambda item: (-item.final, item.path))
    return ranked


def review_slots(top_k: int, fraction: float) -> int:
    """floor(fraction · top_k) slots for review items; none when that rounds down to 0."""
    return max(0, math.floor(fraction * top_k + 1e-9))


def blend_review(
    ranked: Sequence[Ranked],
    review_priorities: Mapping[str, float],
    top_k: int,
    *,
    fraction: float = 0.3,
) -> list[Ranked]:
    """Give up to `review_slots(top_k, fraction)` slots to review candidates (SPEC §3.5).

    Candidates are the results beyond the primary slots with review priority > 0, best
    priority · relevance first; they are appended, marked `review=True`. Slots no candidate
    fills go to the next primary results, so the list has min(top_k, len(ranked)) entries
    (a path listed twice in `ranked` counts once).
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    unique = _first_per_path(ranked)
    size = min(max(top_k, 0), len(unique))
    primary_count = size - min(review_slots(top_k, fraction), size)
    rest = unique[primary_count:]
    candidates = sorted(
        (item for item in rest if review_priorities.get(item.path, 0.0) > 0.0),
        key=lambda item: (-review_priorities[item.path] * item.relevance, item.path),
    )[: size - primary_count]
    chosen = {item.path for item in candidates}
    free_slots = size - primary_count - len(candidates)
    fillers = [item for item in rest if item.path not in chosen][:free_slots]
    reviews = [replace(item, review=True) for item in candidates]
    return unique[:primary_count] + fillers + reviews


def _first_per_path(ranked: Sequence[Ranked]) -> list[Ranked]:
    seen: set[str] = set()
    unique = []
    for item in ranked:
        if item.path not in seen:
            seen.add(item.path)
            unique.append(item)
    return unique
