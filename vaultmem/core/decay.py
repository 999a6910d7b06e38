"""Forgetting curves and the memory score (SPEC §3.1–3.2)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from .memory import MemoryState

SECONDS_PER_DAY = 86_400.0
POWER_LAW = "power_law"
EXPONENTIAL = "exponential"
TWO_COMPONENT = "two_component"
DECAY_MODELS: tuple[str, ...] = (POWER_LAW, EXPONENTIAL, TWO_COMPONENT)



@dataclass(frozen=True)
class DecayParams:
    """Filled from Settings (which holds the defaults) by the composition root."""

    model: str
    half_life_days: float
    alpha: float
    beta: float
    two_component_weight: float
    fast_lambda: float
    slow_lambda: float
    # hash=False keeps the params hashable although a mapping is not.
    type_half_lives: Mapping[str, float] = field(hash=False)

    def __post_init__(self) -> None:
        if self.model not in DECAY_MODELS:
            raise ValueError(
                f"decay model must be one of {', '.join(DECAY_MODELS)}, got {self.model!r}"
            )
        _require_positive("half_life_days", self.half_life_days)
        _require_positive("alpha", self.alpha)
        _require_positive("fast_lambda", self.fast_lambda)
        _require_positive("slow_lambda", self.slow_lambda)
        if not self.beta >= 0.0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if not 0.0 <= self.two_component_weight <= 1.0:
            raise ValueError(
                f"two_component_weight must be in [0, 1], got {self.two_component_weight}"
            )
        normalised = {str(k).strip().lower(): float(v) for k, v in self.type_half_lives.items()}
        for memory_type, days in normalised.items():
            _require_positive(f"type_half_lives[{memory_type!r}]", days)
        # Freeze a copy so a caller's dict cannot change the params afterwards.
        object.__setattr__(self, "type_half_lives", MappingProxyType(normalised))


def _require_positive(name: str, value: float) -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive number, got {value}")


def half_life_to_lambda(days: float) -> float:
    """Exponential rate per second for a half-life in days."""
    _require_positive("half-life", days)
    return math.log(2) / (days * SECONDS_PER_DAY)


def effective_half_life(state_type: str | None, params: DecayParams) -> float:
    """The half-life (days) for a memory type; untyped or unknown types use the default."""
    if state_type is None:
        return params.half_life_days
    return params.type_half_lives.get(state_type.strip().lower(), params.half_life_days)


def decay_factor(
    dt_seconds: float, params: DecayParams, half_life_days: float | None = None
) -> float:
    """f(Δt) of the configured model, in [0, 1]; 1 at Δt ≤ 0 (clock skew counts as no time).

    A half-life other than the default stretches time by H / H_t, which is exact for the
    exponential and the power law and gives the two-component curve the same relative stretch.
    """
    if math.isnan(dt_seconds):
        raise ValueError("dt_seconds must be a number, got NaN")
    dt = max(dt_seconds, 0.0)
    if half_life_days is not None:
        _require_positive("half_life_days", half_life_days)
        dt *= params.half_life_days / half_life_days
    if params.model == EXPONENTIAL:
        return _exponential(dt, params)
    if params.model == POWER_LAW:
        return _power_law(dt, params)
    return _two_component(dt, params)


def _exponential(dt: float, params: DecayParams) -> float:
    return math.exp(-half_life_to_lambda(params.half_life_days) * dt)


def _power_law(dt: float, params: DecayParams) -> float:
    # t0 is chosen so that f(H) = 1/2 exactly.
    half_life = params.half_life_days * SECONDS_PER_DAY
    t0 = half_life / (2 ** (1 / params.alpha) - 1)
    return float((1 + dt / t0) ** (-params.alpha))


def _two_component(dt: float, params: DecayParams) -> float:
    w = params.two_component_weight
    return w * math.exp(-params.fast_lambda * dt) + (1 - w) * math.exp(-params.slow_lambda * dt)


def elapsed_seconds(since: datetime, now: datetime) -> float:
    """Seconds from `since` to `now`; both must be timezone-aware."""
    if now.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, got {now!r}")
    return (now - since).total_seconds()


def score(state: MemoryState, now: datetime, params: DecayParams) -> float:
    """use_count^β · f(Δt) · strength, with the memory type's half-life."""
    dt = elapsed_seconds(state.last_used, now)
    factor = decay_factor(dt, params, effective_half_life(state.type, params))
    return float(state.use_count**params.beta) * factor * state.strength

