"""A small pile of index writes waits for a search, and the search's optimise waits for an
indexing run to end (its own end optimises)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.app import build_app, daemon_params
from vaultmem.config import load_settings
from vaultmem.daemon.run import Daemon
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.upkeep import Occasion
from vaultmem_testing.sample_vault import redated_sample_vault


@pytest.mark.timeout(120)
def test_the_search_cue_optimises_a_small_pile_but_not_during_an_indexing_run(
        tmp_path: Path) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake",
        "port": 0})
    app = build_app(settings, embedder=FakeEmbedder(), daemon=True)
    daemon = Daemon(daemon_params(settings), app.daemon_parts())  # not started: no threads
    try:
        sync, index = app.sync, app.index()
        sync.reindex()
        index.optimize()
        cues: list[bool] = []
        assert index.on_pile_searched is not None  # the daemon's
        index.on_pile_searched = lambda: cues.append(True)
        note = vault / "Inbox" / "Pile.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text("# Pile\n\nA note written after the optimise.\n", encoding="utf-8")
        sync.sync_paths(["Inbox/Pile.md"])
        assert index.upkeep(Occasion.SCHEDULED) is None  # small: left to a search
        assert index.text_search("pile", 3)[0].path == "Inbox/Pile.md"
        assert cues == [True]
        daemon.progress.running = True  # an indexing run: its end optimises, not the cue
        daemon._optimize_after_search()
        assert index.stats()["writes_since_optimize"] == 1
        daemon.progress.running = False
        daemon._optimize_after_search()
        assert index.stats()["writes_since_optimize"] == 0
    finally:
        daemon.stop()
