"""Memory re-ranking and review blending (SPEC §3.5): a note's relevance times its memory
factor, then slots given to memories due for review."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from vaultmem.core.ranking import NoteMatch, Ranked

FACTOR_FLOOR = 0.5
FACTOR_SCALE = 0.25


def memory_factor(score: float | None) -> float:
    """Re-rank multiplier in [0.5, 1.0]: monotone in the score, saturating above about 1.

    Regular notes (None) count as fresh memories (score 1.0), so decay re-ranks memories
    without erasing them.
    """
    value = 1.0 if score is None else max(score, 0.0)
    return FACTOR_FLOOR + (1.0 - FACTOR_FLOOR) * (1.0 - math.exp(-value / FACTOR_SCALE))


def rerank(matches: Sequence[NoteMatch], memory_scores: Mapping[str, float]) -> list[Ranked]:
    """final = relevance · memory_factor(score); best first, ties in the order given (rank_notes':
    its place, then path). A query nothing matches has confidence 0, so every relevance is
    0: its results keep the ranking's order rather than the alphabet's."""
    ranked = [
        Ranked(
            path=match.path,
            relevance=match.relevance,
            memory_score=memory_scores.get(match.path),
            final=match.relevance * memory_factor(memory_scores.get(match.path)),
            text=match.text,
        )
        for match in matches
    ]
    ranked.sort(key=lambda item: -item.final)  # stable: ties stay in the given order
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
