"""Reinforcement (SPEC §3.4) and review priority (SPEC §3.5)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core._params import reinforce
from vaultmem.core.reinforce import (
    adjust_strength,
    jaccard,
    normalize_tags,
    observe,
    review_priority,
    touch,
)

from ._support import NOW, memory

PARAMS = reinforce()


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.20, 0.75), (0.25, 1.0), (0.30, 0.75), (0.15, 0.0), (0.35, 0.0), (0.1, 0.0), (0.9, 0.0)],
)
def test_reference_review_priority(value: float, expected: float) -> None:
    assert review_priority(value, PARAMS) == pytest.approx(expected, abs=1e-3)


@given(st.floats(min_value=-10, max_value=10, allow_nan=False))
def test_review_priority_in_unit_interval(value: float) -> None:
    assert 0.0 <= review_priority(value, PARAMS) <= 1.0


def test_touch() -> None:
    state = memory(idle_hours=48, use_count=2)
    touched = touch(state, NOW, PARAMS)
    assert (touched.last_used, touched.use_count, touched.strength) == (NOW, 3, 1.0)
    assert touch(state, NOW, PARAMS, boost=True).strength == pytest.approx(1.1)


def test_touch_boost_is_capped() -> None:
    assert touch(memory(strength=1.95), NOW, PARAMS, boost=True).strength == 2.0


def test_touch_never_moves_last_used_backwards() -> None:
    state = memory(idle_hours=-1)
    assert touch(state, NOW, PARAMS).last_used == NOW + timedelta(hours=1)


@given(
    uses=st.integers(min_value=0, max_value=10_000),
    strength=st.floats(min_value=0, max_value=2),
    boost=st.booleans(),
    hours=st.floats(min_value=-1000, max_value=1000),
)
def test_touch_properties(uses: int, strength: float, boost: bool, hours: float) -> None:
    state = memory(use_count=uses, strength=strength, idle_hours=hours)
    touched = touch(state, NOW, PARAMS, boost=boost)
    assert touched.use_count > state.use_count
    assert touched.strength <= PARAMS.strength_max
    assert touched.strength >= state.strength
    assert touched.last_used >= state.last_used


def test_observe_same_domain() -> None:
    state = memory(tags=("python", "testing"), idle_hours=5)
    observed, cross = observe(state, NOW, ["#Python", "Testing"], PARAMS)
    assert not cross
    assert (observed.use_count, observed.review_count, observed.cross_domain_count) == (2, 1, 0)
    assert observed.strength == 1.0
    assert observed.last_used == NOW


def test_observe_cross_domain() -> None:
    state = memory(tags=("python", "testing", "ci"))
    observed, cross = observe(state, NOW, ["cooking", "python", "baking", "travel"], PARAMS)
    assert cross  # Jaccard 1/6 < 0.3
    assert (observed.review_count, observed.cross_domain_count) == (1, 1)
    assert observed.strength == pytest.approx(1.1)


@pytest.mark.parametrize(("mine", "theirs"), [((), ("x",)), (("x",), ()), ((), ())])
def test_observe_needs_both_tag_sets(mine: tuple[str, ...], theirs: tuple[str, ...]) -> None:
    _, cross = observe(memory(tags=mine), NOW, theirs, PARAMS)
    assert not cross


def test_jaccard_and_normalization() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0
    assert jaccard({"a"}, set()) == 0.0
    assert normalize_tags(["#Project/Alpha", " x ", "#", ""]) == {"project/alpha", "x"}


def test_adjust_strength_clamps() -> None:
    state = memory(strength=0.1)
    assert adjust_strength(state, -PARAMS.feedback_penalty, PARAMS).strength == 0.0
    assert adjust_strength(state, 5, PARAMS).strength == 2.0
    assert adjust_strength(state, 0.4, PARAMS).strength == pytest.approx(0.5)


def test_params_validation() -> None:
    with pytest.raises(ValueError):
        reinforce(review_low=0.4, review_high=0.3)
    with pytest.raises(ValueError):
        reinforce(strength_max=3.0)
