"""A running daemon on a vault that a sync tool writes into: a conflict copy of a memory that
arrives while the daemon runs is reported, touches keep landing on the original, and the
scheduled reconcile merges the copy's uses and archives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.store.journal import UsageJournal
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.daemon import DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

pytestmark = pytest.mark.timeout(180)

SESSIONS_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
SESSIONS = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
COPY = ("memories/2026-11-15 crumb-server-side-sessions-in-redis"
        ".sync-conflict-20261124-101010-ABCDEFG.md")


def test_the_scheduled_reconcile_merges_a_copy_that_sync_brought(tmp_path: Path) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    original = (vault / SESSIONS).read_text(encoding="utf-8")
    assert "stm_use_count: 6\n" in original
    process = DaemonProcess(vault, tmp_path / "data", VAULTMEM_DEVICE_ID="laptop-1a2b",
                            VAULTMEM_RECONCILE_INTERVAL_MINUTES="0.05",
                            VAULTMEM_FLUSH_INTERVAL_SECONDS="0.5")
    client = process.start()
    try:
        # the other device used the memory twice; Syncthing kept its version as a copy
        other = original.replace("stm_use_count: 6\n",
                                 "stm_use_count: 8\nstm_uses_by: desk-9f8e=2\n")
        (vault / COPY).write_text(other, encoding="utf-8")
        touched = client.call("POST", "/v1/touch", {"id": SESSIONS_ID})
        assert touched["path"] == SESSIONS
        archived = vault / "memories/archive" / COPY.rpartition("/")[2]
        wait_until(lambda: archived.is_file() and not (vault / COPY).exists(), timeout=60)
        wait_until(lambda: "stm_use_count: 9\n" in (vault / SESSIONS).read_text("utf-8"),
                   timeout=30)

        def reconcile_runs() -> int:
            jobs = {job["name"]: job for job in client.call("GET", "/v1/status")["daemon"]["jobs"]}
            return int(jobs["reconcile"]["runs"])

        wait_until(lambda: reconcile_runs() >= 1, timeout=30)  # recorded once it returned
        status = client.call("GET", "/v1/status")
    finally:
        process.stop()
    fields, _, _ = parse((vault / SESSIONS).read_text(encoding="utf-8"))
    assert fields["stm_uses_by"] == "desk-9f8e=2 laptop-1a2b=1"  # 6 + 2 there + 1 here
    copy_fields, _, _ = parse(archived.read_text(encoding="utf-8"))
    assert copy_fields["stm_status"] == "archived"
    assert copy_fields["stm_merged_into"] == SESSIONS_ID
    assert status["sync"]["duplicates"] == []


def journaled_app(tmp_path: Path, vault: Path) -> tuple[App, UsageJournal]:
    """The daemon's wiring in-process: memory writes go through a usage journal."""
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": vault, "data_dir": tmp_path / "data", "embedding_model": "fake",
        "device_id": "laptop-1a2b"})
    app = build_app(settings, daemon=True)
    return app, app.journal


def test_a_dry_run_counts_the_uses_still_pending_in_the_journal(tmp_path: Path) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    original = (vault / SESSIONS).read_text(encoding="utf-8")
    (vault / COPY).write_text(original.replace(
        "stm_use_count: 6\n", "stm_use_count: 8\nstm_uses_by: desk-9f8e=2\n"), encoding="utf-8")
    app, journal = journaled_app(tmp_path, vault)
    try:
        app.sync.reindex()
        api = app.api()
        api.call("touch", {"id": SESSIONS_ID})  # pending in the journal, not in the note yet
        assert (vault / SESSIONS).read_text(encoding="utf-8") == original
        dry = api.call("reconcile", {})
        assert dry["duplicates"][0]["use_count"] == 9 and (vault / COPY).exists()
        done = api.call("reconcile", {"apply": True})
        assert done["merged"][0]["use_count"] == 9 and len(journal) == 0
    finally:
        app.close()
        journal.close()
    fields, _, _ = parse((vault / SESSIONS).read_text(encoding="utf-8"))
    assert fields["stm_use_count"] == 9


def test_after_a_last_writer_wins_sync_the_next_use_brings_this_devices_uses_back(
        tmp_path: Path) -> None:
    """A sync tool that keeps one version and no copy replaced the note with the other
    device's (which never saw this device's two uses). This device's next use continues from
    the count in its journal and puts its two lost uses back in the note."""
    vault = redated_sample_vault(tmp_path / "vault")
    original = (vault / SESSIONS).read_text(encoding="utf-8")
    app, journal = journaled_app(tmp_path, vault)
    try:
        app.sync.reindex()
        api = app.api()
        store = app.store
        assert store.journal is not None
        for _ in range(2):
            api.call("touch", {"id": SESSIONS_ID})
        store.flush()
        assert parse((vault / SESSIONS).read_text(encoding="utf-8"))[0]["stm_use_count"] == 8
        (vault / SESSIONS).write_text(original.replace(  # the other device's version wins
            "stm_use_count: 6\n", "stm_use_count: 7\nstm_uses_by: desk-9f8e=1\n"),
            encoding="utf-8")
        app.sync.reindex()
        api.call("touch", {"id": SESSIONS_ID})
        store.flush()
    finally:
        app.close()
        journal.close()
    fields, _, _ = parse((vault / SESSIONS).read_text(encoding="utf-8"))
    assert fields["stm_uses_by"] == "desk-9f8e=1 laptop-1a2b=3"
    assert fields["stm_use_count"] == 10  # 6 + 1 there + 3 here
