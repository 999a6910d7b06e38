"""Reinforcement when a memory is used (SPEC §3.4) and review priority (SPEC §3.5)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from .intake import tag_key
from .memory import MemoryState, counted_uses, with_counted_uses


@dataclass(frozen=True)
class ReinforceParams:
    """Filled from Settings (which holds the defaults) by the composition root."""

    boost_step: float
    strength_max: float
    cross_domain_threshold: float
    review_low: float
    review_high: float
    feedback_penalty: float
    # SPEC §3.5: a use counts toward promotion only this long after the memory's previous use
    spaced_use_hours: float

    def __post_init__(self) -> None:
        if self.spaced_use_hours < 0:
            raise ValueError(f"spaced_use_hours must be >= 0, got {self.spaced_use_hours}")
        if self.boost_step < 0 or self.feedback_penalty < 0:
            raise ValueError("boost_step and feedback_penalty must be >= 0")
        if not 0 < self.strength_max <= 2.0:
            raise ValueError(f"strength_max must be in (0, 2], got {self.strength_max}")
        if not 0 <= self.cross_domain_threshold <= 1:
            raise ValueError(
                f"cross_domain_threshold must be in [0, 1], got {self.cross_domain_threshold}"
            )
        if not 0 <= self.review_low < self.review_high:
            raise ValueError(
                f"review zone must satisfy 0 <= review_low < review_high, "
                f"got [{self.review_low}, {self.review_high}]"
            )


def touch(
    state: MemoryState, now: datetime, params: ReinforceParams, *, boost: bool = False
) -> MemoryState:
    """One more use: last_used = now, use_count + 1, optionally a strength boost.

    The use counts toward promotion (`counted_uses`) only when it is spaced: at least
    `spaced_use_hours` after the memory's previous use (SPEC §3.5). Uses in one span -- one
    conversation, a save and a touch a minute apart -- count once, however many there are.
    last_used never moves backwards, so a touch from a device whose clock lags cannot age a
    memory.
    """
    if now.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, got {now!r}")
    delta = params.boost_step if boost else 0.0
    counted = counted_uses(state) + (1 if spaced(state, now, params) else 0)
    used = replace(
        state,
        last_used=max(state.last_used, now),
        use_count=state.use_count + 1,
        strength=_clamp(state.strength + delta, params),
    )
    return with_counted_uses(used, counted)


def spaced(state: MemoryState, now: datetime, params: ReinforceParams) -> bool:
    """Whether a use at `now` is spaced from the memory's previous use (SPEC §3.5)."""
    return (now - state.last_used).total_seconds() >= params.spaced_use_hours * 3600.0


def resave_counts(state: MemoryState, now: datetime, window_hours: float) -> bool:
    """Whether saving an existing memory again counts as a use: not within `window_hours` of
    its last use (the same text saved twice in one conversation is not evidence that it
    matters; saved again a day later, it is)."""
    return (now - state.last_used).total_seconds() >= window_hours * 3600.0


def observe(
    state: MemoryState, now: datetime, context_tags: Sequence[str], params: ReinforceParams
) -> tuple[MemoryState, bool]:
    """A use in a conversation: touch, count a review, reward cross-domain use.

    Returns the new state and whether the use was cross-domain (both tag sets non-empty and
    their Jaccard similarity below the threshold).
    """
    touched = touch(state, now, params)
    touched = replace(touched, review_count=touched.review_count + 1)
    mine, theirs = normalize_tags(state.tags), normalize_tags(context_tags)
    cross_domain = bool(mine and theirs) and jaccard(mine, theirs) < params.cross_domain_threshold
    if not cross_domain:
        return touched, False
    rewarded = replace(
        touched,
        cross_domain_count=touched.cross_domain_count + 1,
        strength=_clamp(touched.strength + params.boost_step, params),
    )
    return rewarded, True


def normalize_tags(tags: Iterable[str]) -> frozenset[str]:
    """Tags compared the way Obsidian shows them: case-insensitive, without a leading '#'."""
    return frozenset(key for key in map(tag_key, tags) if key)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|a ∩ b| / |a ∪ b| of the two sets as given; two empty sets are identical (1.0)."""
    set_a, set_b = set(a), set(b)
    union = set_a | set_b
    if not union:
        return 1.0
    return len(set_a & set_b) / len(union)


def review_priority(score: float, params: ReinforceParams) -> float:
    """0 outside the danger zone; inside, a parabola peaking at 1.0 in its middle."""
    low, high = params.review_low, params.review_high
    if not low < score < high:
        return 0.0
    x = (score - low) / (high - low)
    return min(max(1.0 - 4.0 * (x - 0.5) ** 2, 0.0), 1.0)


def adjust_strength(state: MemoryState, delta: float, params: ReinforceParams) -> MemoryState:
    """Add `delta` (negative for negative feedback) to strength, clamped to [0, strength_max]."""
    return replace(state, strength=_clamp(state.strength + delta, params))


def _clamp(strength: float, params: ReinforceParams) -> float:
    return min(max(strength, 0.0), params.strength_max)
