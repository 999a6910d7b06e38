"""Clustering of similar memories and merging a cluster into one memory (SPEC §5)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .decay import DecayParams, effective_half_life
from .intake import tag_key
from .memory import ACTIVE, MemoryState, counted_uses

MERGE = "merge"
REVIEW = "review"
KEEP_APART = "keep"
MERGE_BONUS_PER_MEMBER = 0.1
MERGE_BONUS_MAX = 0.5


@dataclass(frozen=True)
class Cluster:
    id: str
    members: tuple[str, ...]
    cohesion: float
    action: str


def cluster_id(members: Sequence[str]) -> str:
    """Stable id from the member ids: "c-" and 12 hex digits of their SHA-1."""
    digest = hashlib.sha1("\n".join(sorted(members)).encode("utf-8")).hexdigest()
    return f"c-{digest[:12]}"


def plan_clusters(
    ids: Sequence[str],
    similarity: Mapping[tuple[str, str], float],
    *,
    threshold: float = 0.83,
    max_size: int = 12,
    merge_cohesion: float = 0.9,
    review_cohesion: float = 0.75,
) -> list[Cluster]:
    """Single-linkage clusters over pairs with cosine ≥ threshold, at most `max_size` each.

    Links are taken strongest first (ties by id); a link that would make a cluster larger than
    `max_size` is skipped, which splits big components deterministically. Only clusters of two
    or more members are returned, best cohesion first.
    """
    if max_size < 2:
        raise ValueError(f"max_size must be >= 2, got {max_size}")
    members = sorted(set(ids))
    links = sorted(
        (-cosine, a, b)
        for a, b in itertools.combinations(members, 2)
        if (cosine := _similarity(similarity, a, b)) >= threshold
    )
    groups = _link(members, [(a, b) for _, a, b in links], max_size)
    clusters = []
    for group in groups:
        cohesion = _cohesion(group, similarity)
        action = _action(cohesion, merge_cohesion, review_cohesion)
        clusters.append(Cluster(cluster_id(group), group, cohesion, action))
    clusters.sort(key=lambda cluster: (-cluster.cohesion, cluster.id))
    return clusters


def _similarity(similarity: Mapping[tuple[str, str], float], a: str, b: str) -> float:
    key = (a, b) if a < b else (b, a)
    return similarity.get(key, similarity.get((key[1], key[0]), 0.0))


def _link(members: list[str], links: list[tuple[str, str]], max_size: int) -> list[tuple[str, ...]]:
    group_of: dict[str, tuple[str, ...]] = {member: (member,) for member in members}
    for a, b in links:
        group_a, group_b = group_of[a], group_of[b]
        if group_a == group_b or len(group_a) + len(group_b) > max_size:
            continue
        joined = tuple(sorted(group_a + group_b))
        for member in joined:
            group_of[member] = joined
    unique = {group for group in group_of.values() if len(group) >= 2}
    return sorted(unique)


def _cohesion(group: Sequence[str], similarity: Mapping[tuple[str, str], float]) -> float:
    pairs = list(itertools.combinations(group, 2))
    return sum(_similarity(similarity, a, b) for a, b in pairs) / len(pairs)


def _action(cohesion: float, merge_cohesion: float, review_cohesion: float) -> str:
    if cohesion >= merge_cohesion:
        return MERGE
    if cohesion >= review_cohesion:
        return REVIEW
    return KEEP_APART


def merge_states(
    states: Sequence[MemoryState],
    cohesion: float,
    new_id: str,
    now: datetime,
    *,
    strength_max: float,
    decay: DecayParams,
) -> MemoryState:
    """One active memory standing for a cluster (SPEC §5).

    Times come from the originals, never later than `now` (a skewed clock elsewhere cannot put
    the merged memory in the future); review and cross-domain counts are summed. The type is
    the members' slowest-fading one (`merged_type`). Every factor of the score - uses, recency,
    strength, half-life - is at least the best member's, so the merged memory never scores
    below its best member at merge time.
    """
    if not states:
        raise ValueError("merge_states needs at least one memory")
    if now.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, got {now!r}")
    bonus = min(cohesion * len(states) * MERGE_BONUS_PER_MEMBER, MERGE_BONUS_MAX)
    return MemoryState(
        id=new_id,
        created=min(min(state.created for state in states), now),
        last_used=min(max(state.last_used for state in states), now),
        use_count=sum(state.use_count for state in states),
        strength=min(max(state.strength for state in states) + bonus, strength_max),
        status=ACTIVE,
        type=merged_type(states, decay),
        pinned=any(state.pinned for state in states),
        review_count=sum(state.review_count for state in states),
        cross_domain_count=sum(state.cross_domain_count for state in states),
        tags=_tag_union(states),
        uses_by=_summed_uses_by(states),
        spaced_uses=_spaced_sum(states),
    )


def _spaced_sum(states: Sequence[MemoryState]) -> int | None:
    """The merged memory's uses toward promotion: its members' spaced uses, summed."""
    counted = sum(counted_uses(state) for state in states)
    return counted if counted < sum(state.use_count for state in states) else None


def _summed_uses_by(states: Sequence[MemoryState]) -> tuple[tuple[str, int], ...]:
    """Each device's uses of the members, added up: the merged memory's `use_count` is their
    sum, so its per-device part is too, and a device's later uses continue from its own count
    (core.device_sync) instead of being read as uses no device recorded."""
    counts: dict[str, int] = {}
    for state in states:
        for device, count in state.uses_by:
            counts[device] = counts.get(device, 0) + count
    return tuple(sorted((d, c) for d, c in counts.items() if c > 0))


def merged_type(states: Sequence[MemoryState], decay: DecayParams) -> str | None:
    """The type whose half-life is the longest among the members (untyped members count with
    the default half-life); on a tie, the first member's (members come best first). So a
    `preference` merged with an untyped memory stays a `preference`, and `fact` + `issue`
    is a `fact`."""
    best = states[0].type
    for state in states[1:]:
        if effective_half_life(state.type, decay) > effective_half_life(best, decay):
            best = state.type
    return best


def _tag_union(states: Sequence[MemoryState]) -> tuple[str, ...]:
    """Tags in first-seen order, one per tag ignoring case and a leading '#'."""
    seen: set[str] = set()
    tags = []
    for tag in itertools.chain.from_iterable(state.tags for state in states):
        key = tag_key(tag)
        if key and key not in seen:
            seen.add(key)
            tags.append(tag)
    return tuple(tags)
