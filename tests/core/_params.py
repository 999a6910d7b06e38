"""The core's parameter objects at the defaults `Settings` holds (they have none of their own),
built the way the composition root builds them; keyword arguments change single fields."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vaultmem.config import Settings
from vaultmem.core.decay import DecayParams
from vaultmem.core.decisions import Policy
from vaultmem.core.reinforce import ReinforceParams
from vaultmem.settings_params import decay_params, policy, reinforce_params

DEFAULTS = Settings()


def decay(**changes: Any) -> DecayParams:
    return replace(decay_params(DEFAULTS), **changes)


def lifecycle_policy(**changes: Any) -> Policy:
    return replace(policy(DEFAULTS), **changes)


def reinforce(**changes: Any) -> ReinforceParams:
    return replace(reinforce_params(DEFAULTS), **changes)
