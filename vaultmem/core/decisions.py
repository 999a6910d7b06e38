"""Keep, forget or promote a memory (SPEC §3.3), and the optional cap on active memories."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from .decay import SECONDS_PER_DAY, DecayParams, elapsed_seconds, score
from .memory import ACTIVE, ARCHIVED, PROMOTED, MemoryState, counted_uses, future_problem

KEEP = "keep"
FORGET = "forget"
PROMOTE = "promote"
ACTIONS: tuple[str, ...] = (KEEP, FORGET, PROMOTE)


@dataclass(frozen=True)
class Policy:
    """When a memory is forgotten or promoted; the values (and their defaults) come from
    Settings through the composition root."""

    promote_threshold: float
    promote_min_uses: int
    promote_use_count: int
    promote_window_days: float
    forget_threshold: float
    forget_grace_hours: float
    max_active_memories: int  # 0 disables the cap

    def __post_init__(self) -> None:
        for name in (
            "promote_threshold",
            "promote_min_uses",
            "promote_use_count",
            "promote_window_days",
            "forget_threshold",
            "forget_grace_hours",
            "max_active_memories",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.forget_threshold > self.promote_threshold:
            raise ValueError(
                f"forget_threshold ({self.forget_threshold}) must not exceed "
                f"promote_threshold ({self.promote_threshold})"
            )


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str
    score: float


def decide(state: MemoryState, now: datetime, decay: DecayParams, policy: Policy) -> Decision:
    """The lifecycle decision for one memory, with a reason that quotes the numbers."""
    value = score(state, now, decay)
    if state.status == PROMOTED:
        return Decision(KEEP, "already promoted", value)
    if state.status == ARCHIVED:
        return Decision(KEEP, "archived", value)
    problem = future_problem(state, now)
    if problem is not None:
        return Decision(KEEP, f"{problem}: left alone", value)
    if state.superseded_by is not None:
        return _superseded_decision(state, value)
    promote_reason = _promotion_reason(state, value, now, policy)
    if promote_reason is not None:
        return Decision(PROMOTE, promote_reason, value)
    if value < policy.forget_threshold:
        return _low_score_decision(state, value, now, policy)
    return Decision(KEEP, _keep_reason(state, value, policy), value)


def _promotion_reason(
    state: MemoryState, value: float, now: datetime, policy: Policy
) -> str | None:
    uses = counted_uses(state)
    if uses >= policy.promote_min_uses and value >= policy.promote_threshold:
        return (
            f"score {value:.3f} >= promote threshold {policy.promote_threshold:g} "
            f"with {uses} uses spaced in time"
        )
    age_days = _age_days(state, now)
    if uses >= policy.promote_use_count and age_days <= policy.promote_window_days:
        return (
            f"used {uses} times spaced in time (>= {policy.promote_use_count}) within "
            f"{policy.promote_window_days:g} days of creation (age {max(age_days, 0.0):.1f} days)"
        )
    return None


def _superseded_decision(state: MemoryState, value: float) -> Decision:
    """A superseded memory is never promoted; it is forgotten (archived) like a faded one,
    unless its user pinned it."""
    why = f"superseded by {state.superseded_by}: a newer memory replaces it"
    if state.pinned:
        return Decision(KEEP, f"pinned: kept, never promoted ({why})", value)
    return Decision(FORGET, f"{why}, so it fades like a forgotten one "
                            f"(score {value:.3f}; restore or unsupersede undoes it)", value)


def _low_score_decision(
    state: MemoryState, value: float, now: datetime, policy: Policy
) -> Decision:
    below = f"score {value:.3f} < forget threshold {policy.forget_threshold:g}"
    if state.pinned:
        return Decision(KEEP, f"pinned: never forgotten ({below})", value)
    age_hours = _age_days(state, now) * 24
    if age_hours < policy.forget_grace_hours:
        return Decision(
            KEEP,
            f"in grace period: {max(age_hours, 0.0):.1f} h old < "
            f"{policy.forget_grace_hours:g} h ({below})",
            value,
        )
    idle_days = max(elapsed_seconds(state.last_used, now), 0.0) / SECONDS_PER_DAY
    return Decision(FORGET, f"{below} (last used {idle_days:.0f} days ago)", value)


def _keep_reason(state: MemoryState, value: float, policy: Policy) -> str:
    if value >= policy.promote_threshold:
        return (
            f"score {value:.3f} >= promote threshold {policy.promote_threshold:g} but only "
            f"{counted_uses(state)} use(s) spaced in time (< {policy.promote_min_uses}; "
            f"{state.use_count} in all): not reinforced yet"
        )
    return (
        f"score {value:.3f} between forget threshold {policy.forget_threshold:g} "
        f"and promote threshold {policy.promote_threshold:g}"
    )


def _age_days(state: MemoryState, now: datetime) -> float:
    return elapsed_seconds(state.created, now) / SECONDS_PER_DAY


def plan_cap(
    states: Sequence[MemoryState],
    now: datetime,
    decay: DecayParams,
    policy: Policy,
    *,
    exclude: Collection[str] = (),
) -> list[tuple[str, str]]:
    """(id, reason) of the lowest-scoring active unpinned memories to archive to meet the cap.

    Ids in `exclude` are already leaving the active set and count as gone.
    """
    if policy.max_active_memories == 0:
        return []
    leaving = set(exclude)
    active = [s for s in states if s.status == ACTIVE and s.id not in leaving]
    excess = len(active) - policy.max_active_memories
    if excess <= 0:
        return []
    scored = sorted(
        ((score(s, now, decay), s.id) for s in active
         if not s.pinned and future_problem(s, now) is None),
        key=lambda pair: (pair[0], pair[1]),
    )
    return [
        (
            memory_id,
            f"over the cap: {len(active)} active memories > max {policy.max_active_memories}; "
            f"score {value:.3f} is among the {excess} lowest",
        )
        for value, memory_id in scored[:excess]
    ]
