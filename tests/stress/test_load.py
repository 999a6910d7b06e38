"""Load: concurrent clients on a real daemon while a sync-like process changes 10 % of the vault;
and a vault indexed at start-up is fully covered by the full-text index (no scanned tail).

The short form is 8 clients x 15 s on 300 synthetic notes; the long form (VAULTMEM_STRESS=long)
16 clients x 120 s on 2,000 notes. The figures are printed; the assertions are about
correctness, not speed: no failed request, the daemon alive, every note as the sync left it,
the index caught up with the disk, and the daemon's memory bounded.
"""

from __future__ import annotations

from pathlib import Path

import lancedb
import pytest

from tests.stress._level import LEVEL
from vaultmem_testing import load
from vaultmem_testing.daemon import DaemonProcess
from vaultmem_testing.synthetic import generate_vault


def rss_bound(start_mb: float) -> float:
    """Generous: caches may warm up under load, but the daemon must not keep growing."""
    return start_mb * 1.5 + 150


@pytest.mark.timeout(LEVEL.pick(150, 900))
def test_concurrent_clients_with_a_syncing_vault(tmp_path: Path) -> None:
    config = load.LoadConfig(notes=LEVEL.pick(300, 2000), clients=LEVEL.pick(8, 16),
                             seconds=LEVEL.pick(15, 120), rss_interval=0.5,
                             flush_seconds=0.5)  # flushes race the sync and the clients
    report = load.run_load(tmp_path, config, log=tmp_path / "daemon.log")
    load.print_report(report)

    assert report.errors == []
    assert report.problems == []
    assert sum(report.churn.values()) == round(config.notes * config.churn)
    for op, weight in load.MIX.items():
        if weight >= 5:
            assert report.latencies[op], f"no {op} request was made"
    assert report.rss is not None
    peak = max(mb for _, mb in report.rss.samples)
    assert peak <= rss_bound(report.rss_start), report.rss.series()


@pytest.mark.timeout(LEVEL.pick(120, 300))
def test_startup_indexing_leaves_no_chunk_outside_the_text_index(tmp_path: Path) -> None:
    """Start-up indexing writes in batches and optimises every N writes; the batches after the
    last optimise used to stay out of the full-text index until the 30-minute job, so search
    scanned them (half of a 10k-note vault: search p50 ~0.7 s instead of tens of ms). Optimising
    every 3 writes leaves this vault's last batch after the last optimise."""
    vault = generate_vault(tmp_path / "vault", LEVEL.pick(400, 3000), seed=3).root
    data = tmp_path / "data"
    data.mkdir()
    daemon = DaemonProcess(vault, data, VAULTMEM_OPTIMIZE_EVERY_WRITES="3")
    try:
        daemon.start(timeout=LEVEL.pick(90, 280))
        assert daemon.status()["daemon"]["indexing"]["last"]["added"] > 0
        chunks = lancedb.connect(str(data / "lance")).open_table("chunks")
        fts = [ix for ix in chunks.list_indices() if ix.index_type == "FTS"]
        assert fts, "no full-text index after start-up indexing"
        for index in fts:
            stats = chunks.index_stats(index.name)
            assert stats is not None and stats.num_unindexed_rows == 0, (index.name, stats)
    finally:
        daemon.stop()
