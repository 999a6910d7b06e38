"""Re-dated copies of sample-vault/ for tests (the copying itself is the product's:
`vaultmem.vault.demo`, which `scripts/run` uses for its demo vault)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmem.vault.demo import redated_copy

REPO = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = REPO / "sample-vault"


def redated_sample_vault(target: Path) -> Path:
    """A copy of sample-vault/ at `target`, its memories dated relative to today."""
    redated_copy(SAMPLE_VAULT, target, datetime.now(UTC))
    return target
