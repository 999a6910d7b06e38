"""Decay models, scores and SPEC §3.6 reference values."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core._params import decay
from vaultmem.core.decay import (
    DECAY_MODELS,
    DecayParams,
    decay_factor,
    effective_half_life,
    half_life_to_lambda,
    score,
)

from ._support import DAY, HOUR, NOW, memory

TOLERANCE = 1e-3
EXP = decay(model="exponential")
POWER = decay(model="power_law")
TWO = decay(model="two_component")

# SPEC §3.6: Δt (hours) -> (exponential, power law, two-component)
REFERENCE_TABLE = [
    (1, 0.9904, 0.9868, 0.9595),
    (6, 0.9439, 0.9253, 0.7878),
    (24, 0.7937, 0.7540, 0.4469),
    (72, 0.5000, 0.5000, 0.2338),
    (168, 0.1984, 0.2934, 0.1500),
    (336, 0.0394, 0.1667, 0.0749),
    (720, 0.0010, 0.0814, 0.0153),
]
TABLE_CASES = [
    pytest.param(params, hours, expected, id=f"{params.model}-{hours}h")
    for hours, *values in REFERENCE_TABLE
    for params, expected in zip((EXP, POWER, TWO), values, strict=True)
]

# SPEC §3.6 scores: (use_count, idle hours, strength) -> (exponential, power law)
REFERENCE_SCORES = [
    (3, 1, 2.0, 3.829, 3.815),
    (6, 48, 1.0, 1.846, 1.765),
    (3, 120, 1.5, 0.913, 1.076),
    (1, 6, 1.0, 0.9439, 0.9253),
    (1, 504, 1.0, 0.0078, 0.1150),
]
SCORE_CASES = [
    pytest.param(params, uses, hours, strength, expected, id=f"{params.model}-{uses}x-{hours}h")
    for uses, hours, strength, *values in REFERENCE_SCORES
    for params, expected in zip((EXP, POWER), values, strict=True)
]


@pytest.mark.parametrize(("params", "hours", "expected"), TABLE_CASES)
def test_reference_decay_table(params: DecayParams, hours: float, expected: float) -> None:
    assert decay_factor(hours * HOUR, params) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize(("params", "hours", "expected"), TABLE_CASES)
def test_reference_table_through_score(params: DecayParams, hours: float, expected: float) -> None:
    assert score(memory(idle_hours=hours), NOW, params) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize(("params", "uses", "hours", "strength", "expected"), SCORE_CASES)
def test_reference_scores(
    params: DecayParams, uses: int, hours: float, strength: float, expected: float
) -> None:
    state = memory(idle_hours=hours, use_count=uses, strength=strength)
    assert score(state, NOW, params) == pytest.approx(expected, abs=TOLERANCE)


# SPEC prints 50^0.6 with two decimals (10.456 -> 10.46): allow half a unit of that digit.
@pytest.mark.parametrize(
    ("uses", "expected", "tolerance"),
    [(2, 1.516, TOLERANCE), (5, 2.627, TOLERANCE), (10, 3.981, TOLERANCE), (50, 10.46, 0.005)],
)
@pytest.mark.parametrize("params", [EXP, POWER, TWO], ids=lambda p: p.model)
def test_use_count_power(params: DecayParams, uses: int, expected: float, tolerance: float) -> None:
    # At Δt = 0 with strength 1 the score is exactly use_count^β.
    assert score(memory(use_count=uses), NOW, params) == pytest.approx(expected, abs=tolerance)


def test_exponential_lambda_is_ln2_over_three_days() -> None:
    assert half_life_to_lambda(3.0) == pytest.approx(math.log(2) / (3 * DAY), rel=1e-12)
    assert half_life_to_lambda(3.0) == pytest.approx(2.674e-6, rel=1e-3)


def test_two_component_rates_match_their_half_lives() -> None:
    def half_life_days(rate: float) -> float:
        return math.log(2) / rate / DAY

    assert half_life_days(TWO.fast_lambda) * 24 == pytest.approx(12.0, rel=0.01)
    assert half_life_days(TWO.slow_lambda) == pytest.approx(7.0, rel=0.01)


def test_the_configured_model_is_the_one_used() -> None:
    values = {decay_factor(DAY, decay(model=model)) for model in DECAY_MODELS}
    assert len(values) == len(DECAY_MODELS)


def test_default_model_is_power_law() -> None:
    assert decay().model == "power_law"
    assert decay_factor(7 * DAY, decay()) == pytest.approx(0.2934, abs=TOLERANCE)


@pytest.mark.parametrize("params", [EXP, POWER], ids=lambda p: p.model)
@pytest.mark.parametrize(("memory_type", "days"), [("issue", 7), ("decision", 30), ("fact", 90)])
def test_type_half_life_halves_at_its_half_life(
    params: DecayParams, memory_type: str, days: float
) -> None:
    assert effective_half_life(memory_type, params) == days
    state = memory(idle_hours=days * 24, type=memory_type)
    assert score(state, NOW, params) == pytest.approx(0.5, abs=1e-9)


def test_two_component_type_half_life_is_a_time_stretch() -> None:
    stretched = decay_factor(30 * DAY, TWO, half_life_days=30.0)
    assert stretched == pytest.approx(decay_factor(3 * DAY, TWO), rel=1e-12)


def test_untyped_and_unknown_types_use_default_half_life() -> None:
    assert effective_half_life(None, POWER) == 3.0
    assert effective_half_life("recipe", POWER) == 3.0
    assert effective_half_life(" Decision ", POWER) == 30.0


def test_type_half_lives_are_configurable_and_frozen() -> None:
    custom = {"recipe": 10.0}
    params = decay(model="exponential", type_half_lives=custom)
    custom["recipe"] = 1.0
    assert effective_half_life("recipe", params) == 10.0
    assert effective_half_life("decision", params) == 3.0
    with pytest.raises(TypeError):
        params.type_half_lives["recipe"] = 2.0  # type: ignore[index]
    assert hash(params) == hash(replace(params))


@pytest.mark.parametrize(
    "bad",
    [
        {"model": "linear"},
        {"half_life_days": 0},
        {"half_life_days": -1},
        {"alpha": 0},
        {"two_component_weight": 1.5},
        {"type_half_lives": {"issue": 0}},
    ],
)
def test_invalid_params_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        decay(**bad)


def test_clock_skew_counts_as_no_time() -> None:
    assert decay_factor(-5 * DAY, POWER) == 1.0
    assert score(memory(idle_hours=-48), NOW, POWER) == pytest.approx(1.0)


def test_score_requires_aware_now() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        score(memory(), NOW.replace(tzinfo=None), POWER)


MODELS = st.sampled_from([EXP, POWER, TWO])
SECONDS = st.floats(min_value=0, max_value=5 * 365 * DAY, allow_nan=False)


@given(params=MODELS, dt=SECONDS)
def test_decay_factor_in_unit_interval(params: DecayParams, dt: float) -> None:
    assert 0.0 < decay_factor(dt, params) <= 1.0


@given(params=MODELS, a=SECONDS, b=SECONDS)
def test_decay_factor_monotone(params: DecayParams, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert decay_factor(low, params) >= decay_factor(high, params)


@given(params=MODELS)
def test_decay_factor_is_one_at_zero(params: DecayParams) -> None:
    assert decay_factor(0.0, params) == 1.0
