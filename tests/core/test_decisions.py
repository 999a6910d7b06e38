"""Keep / forget / promote per SPEC §3.3 and the active-memory cap."""

from __future__ import annotations

import pytest

from tests.core._params import decay, lifecycle_policy
from vaultmem.core.decay import DecayParams
from vaultmem.core.decisions import Decision, decide, plan_cap
from vaultmem.core.memory import ARCHIVED, PROMOTED

from ._support import NOW, memory

EXP = decay(model="exponential")
POWER = decay(model="power_law")
POLICY = lifecycle_policy()


def _decide(params: DecayParams = POWER, **kwargs: object) -> Decision:
    return decide(memory(**kwargs), NOW, params, POLICY)  # type: ignore[arg-type]


# SPEC §3.6 score examples with their decisions.
@pytest.mark.parametrize(
    ("params", "kwargs", "action"),
    [
        (EXP, {"use_count": 3, "idle_hours": 1, "strength": 2.0, "age_hours": 400}, "promote"),
        (POWER, {"use_count": 3, "idle_hours": 1, "strength": 2.0, "age_hours": 400}, "promote"),
        (EXP, {"use_count": 6, "idle_hours": 48, "age_hours": 400}, "promote"),
        (POWER, {"use_count": 6, "idle_hours": 48, "age_hours": 400}, "promote"),
        (EXP, {"use_count": 3, "idle_hours": 120, "strength": 1.5}, "promote"),
        (POWER, {"use_count": 3, "idle_hours": 120, "strength": 1.5}, "promote"),
        (EXP, {"use_count": 1, "idle_hours": 6}, "keep"),
        (POWER, {"use_count": 1, "idle_hours": 6}, "keep"),
        (EXP, {"use_count": 1, "idle_hours": 504}, "forget"),
        (POWER, {"use_count": 1, "idle_hours": 504}, "keep"),
    ],
)
def test_reference_decisions(params: DecayParams, kwargs: dict[str, object], action: str) -> None:
    assert _decide(params, **kwargs).action == action


def test_fresh_memory_is_not_promoted() -> None:
    decision = _decide()
    assert decision.score == pytest.approx(1.0)
    assert decision.action == "keep"
    assert "1 use" in decision.reason


def test_second_use_with_high_score_promotes() -> None:
    decision = _decide(use_count=2, idle_hours=1, age_hours=100)
    assert decision.action == "promote"
    assert "0.65" in decision.reason


def test_fast_promotion_within_window() -> None:
    # Score far below the threshold, but used 5 times in the first 14 days.
    decision = _decide(EXP, use_count=5, idle_hours=13 * 24, age_hours=13.9 * 24)
    assert decision.score < 0.65
    assert decision.action == "promote"
    assert "5 times" in decision.reason


def test_no_fast_promotion_after_window() -> None:
    decision = _decide(EXP, use_count=5, idle_hours=13 * 24, age_hours=14.1 * 24)
    assert decision.action == "keep"


def test_forget_reason_quotes_numbers() -> None:
    decision = _decide(EXP, idle_hours=21 * 24)
    assert decision.action == "forget"
    assert decision.reason == "score 0.008 < forget threshold 0.05 (last used 21 days ago)"


def test_grace_period_protects_young_memories() -> None:
    young = _decide(strength=0.01, idle_hours=0, age_hours=23)
    assert young.score < 0.05
    assert young.action == "keep"
    assert "grace" in young.reason
    assert _decide(strength=0.01, idle_hours=0, age_hours=25).action == "forget"


def test_pinned_is_never_forgotten() -> None:
    decision = _decide(EXP, idle_hours=60 * 24, pinned=True)
    assert decision.score < 0.05
    assert decision.action == "keep"
    assert "pinned" in decision.reason


@pytest.mark.parametrize(
    ("status", "reason"), [(PROMOTED, "already promoted"), (ARCHIVED, "archived")]
)
def test_non_active_memories_are_kept(status: str, reason: str) -> None:
    decision = _decide(EXP, idle_hours=60 * 24, status=status)
    assert (decision.action, decision.reason) == ("keep", reason)


def test_keep_between_thresholds() -> None:
    decision = _decide(use_count=2, idle_hours=7 * 24, age_hours=30 * 24)
    assert 0.05 <= decision.score < 0.65
    assert decision.action == "keep"


def test_custom_policy_thresholds() -> None:
    strict = lifecycle_policy(forget_threshold=0.3)
    state = memory(idle_hours=7 * 24)
    assert decide(state, NOW, POWER, strict).action == "forget"
    assert decide(state, NOW, POWER, POLICY).action == "keep"


def test_policy_validation() -> None:
    with pytest.raises(ValueError):
        lifecycle_policy(forget_threshold=0.9)
    with pytest.raises(ValueError):
        lifecycle_policy(max_active_memories=-1)


def test_cap_archives_lowest_unpinned() -> None:
    states = [
        memory("a", idle_hours=10 * 24),
        memory("b", idle_hours=20 * 24, pinned=True),
        memory("c", idle_hours=5 * 24),
        memory("d", idle_hours=1),
        memory("e", idle_hours=15 * 24),
        memory("f", idle_hours=90 * 24, status=ARCHIVED),
    ]
    plan = plan_cap(states, NOW, POWER, lifecycle_policy(max_active_memories=3))
    assert [memory_id for memory_id, _ in plan] == ["e", "a"]
    assert "max 3" in plan[0][1]


def test_cap_counts_excluded_as_gone() -> None:
    states = [memory(name, idle_hours=hours) for name, hours in [("a", 1), ("b", 2), ("c", 3)]]
    policy = lifecycle_policy(max_active_memories=2)
    assert [i for i, _ in plan_cap(states, NOW, POWER, policy)] == ["c"]
    assert plan_cap(states, NOW, POWER, policy, exclude={"a"}) == []


def test_cap_disabled_and_under_cap() -> None:
    states = [memory(str(i)) for i in range(5)]
    assert plan_cap(states, NOW, POWER, lifecycle_policy(max_active_memories=0)) == []
    assert plan_cap(states, NOW, POWER, lifecycle_policy(max_active_memories=5)) == []
