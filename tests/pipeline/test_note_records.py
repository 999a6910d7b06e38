"""A memory whose dates lie ahead is reported by `status` as judged at the caller's `now`; the
catalog stores no reason that the clock would make stale."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmem.engine.status_results import StatusResult
from vaultmem_testing.apps import fake_app

AHEAD = datetime(2030, 1, 1, tzinfo=UTC)
BEFORE, AFTER = datetime(2026, 6, 1, tzinfo=UTC), datetime(2030, 6, 1, tzinfo=UTC)
NOTE = "memories/ahead.md"


def _vault(root: Path) -> Path:
    (root / "memories").mkdir(parents=True)
    (root / NOTE).write_text(
        f"---\nstm_id: ahead-1\nstm_created: {AHEAD.isoformat()}\n"
        f"stm_last_used: {AHEAD.isoformat()}\nstm_use_count: 2\n---\n# Ahead\n\nA date ahead.\n",
        encoding="utf-8")
    (root / "Plain.md").write_text("# Plain\n\nA plain note.\n", encoding="utf-8")
    return root


def _warnings(status: StatusResult) -> dict[str, str]:
    return {w.path: w.reason for w in status.coverage.warnings}


@pytest.mark.timeout(60)
def test_dates_ahead_are_judged_at_the_callers_now_and_never_stored(tmp_path: Path) -> None:
    with fake_app(_vault(tmp_path / "vault"), tmp_path / "data") as app:
        assert app.catalog.records()[NOTE].reason == ""
        before = _warnings(app.status.status(BEFORE, per_file=True))
        assert before == {NOTE: "memory left alone: stm_created 2030-01-01T00:00:00+00:00 "
                                "is in the future"}
        files = {f.path: f.reason
                 for f in app.status.status(BEFORE, per_file=True).coverage.files or ()}
        assert files[NOTE].endswith("is in the future") and files["Plain.md"] == ""
        assert _warnings(app.status.status(AFTER)) == {}
