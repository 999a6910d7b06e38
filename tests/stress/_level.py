"""Short form (inside scripts/test) or long form (scripts/stress --long) of the stress suite."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class StressLevel:
    long: bool

    def pick(self, short: int, long: int) -> int:
        """The short-form figure in scripts/test, the long-form one under scripts/stress --long."""
        return long if self.long else short


LEVEL = StressLevel(long=os.environ.get("VAULTMEM_STRESS", "short").strip().lower() == "long")
