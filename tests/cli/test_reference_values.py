"""SPEC §3.6 through the whole stack: memory notes on disk → `vaultmem get --json`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, invoke_json, memory_note

NOW = REFERENCE.isoformat()

# (use_count, age in hours, strength, {model: (score, decision)})
CASES = [
    (3, 1, 2.0, {"exponential": (3.829, "promote"), "power_law": (3.815, "promote")}),
    (6, 48, 1.0, {"exponential": (1.846, "promote"), "power_law": (1.765, "promote")}),
    (3, 120, 1.5, {"exponential": (0.913, "promote"), "power_law": (1.076, "promote")}),
    (1, 6, 1.0, {"exponential": (0.9439, "keep"), "power_law": (0.9253, "keep")}),
    (1, 21 * 24, 1.0, {"exponential": (0.0078, "forget"), "power_law": (0.1150, "keep")}),
]

TWO_COMPONENT_F = {1: 0.9595, 6: 0.7878, 24: 0.4469, 72: 0.2338, 168: 0.1500, 336: 0.0749,
                   720: 0.0153}


def _env(vault: Path, tmp_path: Path, model: str) -> dict[str, str]:
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_DECAY_MODEL": model}


@pytest.mark.parametrize("model", ["exponential", "power_law"])
@pytest.mark.parametrize(("uses", "hours", "strength", "expected"), CASES)
def test_get_reports_reference_scores_and_decisions(
    tmp_path: Path, model: str, uses: int, hours: float, strength: float,
    expected: dict[str, tuple[float, str]],
) -> None:
    vault = tmp_path / "vault"
    last = ago(hours=hours)
    # created long enough ago that neither the 24 h grace nor fast promotion applies
    created = last - timedelta(days=20)
    path, memory_id = memory_note(vault, "m", use_count=uses, last_used=last, created=created,
                                  strength=strength)
    score, decision = expected[model]
    for ref in (memory_id, "memories/m.md", str(path)):
        data = invoke_json(["get", ref, "--now", NOW], env=_env(vault, tmp_path, model))
        assert data["id"] == memory_id
        assert data["score"] == pytest.approx(score, abs=1e-3)
        assert data["decision"] == decision
        assert data["reason"]


@pytest.mark.parametrize(("hours", "factor"), sorted(TWO_COMPONENT_F.items()))
def test_two_component_model_is_the_one_used(tmp_path: Path, hours: int, factor: float) -> None:
    vault = tmp_path / "vault"
    memory_note(vault, "m", use_count=1, last_used=ago(hours=hours))
    data = invoke_json(["get", "memories/m.md", "--now", NOW],
                       env=_env(vault, tmp_path, "two_component"))
    assert data["score"] == pytest.approx(factor, abs=1e-3)


def test_review_priority_in_get(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    # power law, use_count 1: f = 0.25 at a known age → priority 1.0; find it via 3 d → 0.5.
    memory_note(vault, "m", use_count=1, last_used=ago(days=3), strength=0.5)
    env = _env(vault, tmp_path, "power_law")
    data = invoke_json(["get", "memories/m.md", "--now", NOW], env=env)
    assert data["score"] == pytest.approx(0.25, abs=1e-3)
    assert data["review_priority"] == pytest.approx(1.0, abs=1e-3)
