"""Archived memories come back: `restore` on the CLI (in-process and through a daemon), notes
moved out of (or into) the archive folder by hand, an interrupted restore finished by a sweep,
and the index brought up to date before in-process searches."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, invoke, invoke_json, memory_note, small_vault_env
from vaultmem.api.client import Client
from vaultmem.errors import NotFound
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.daemon import DaemonProcess, wait_until

NOW = REFERENCE.isoformat()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return small_vault_env(tmp_path)


def _archived(env: dict[str, str]) -> tuple[Path, str]:
    """A faded memory, archived by `gc --apply`."""
    vault = Path(env["VAULTMEM_VAULT"])
    _, memory_id = memory_note(vault, "old grafana panel order", use_count=3,
                               last_used=ago(days=200), created=ago(days=300), strength=1.2,
                               body="The NAS dashboard keeps disks first, then network.")
    done = invoke_json(["gc", "--apply", "--now", NOW, "--write-at-now"], env=env)
    assert [item["id"] for item in done["archived"]] == [memory_id]
    archived = vault / done["archived"][0]["to"]
    assert archived.parent.name == "archive"
    return archived, memory_id


def _fields(path: Path) -> dict[str, object]:
    fields, _, _ = parse(path.read_text(encoding="utf-8"))
    return fields


@pytest.mark.timeout(120)
def test_restore_brings_an_archived_memory_back_keeping_its_history(
    env: dict[str, str],
) -> None:
    archived, memory_id = _archived(env)
    before = _fields(archived)
    body = archived.read_text(encoding="utf-8").split("---", 2)[2]
    later = (REFERENCE + timedelta(days=1)).isoformat()
    data = invoke_json(["restore", memory_id, "--now", later], env=env)
    restored = Path(env["VAULTMEM_VAULT"]) / data["restored"]["to"]
    assert data["restored"]["from"].startswith("memories/archive/")
    assert restored.parent.name == "memories" and not archived.exists()
    after = _fields(restored)
    assert after["stm_status"] == "active" and data["memory"]["status"] == "active"
    assert data["memory"]["last_used"] == later
    for key in ("stm_id", "stm_created", "stm_use_count", "stm_strength", "tags"):
        assert after[key] == before[key], key
    assert restored.read_text(encoding="utf-8").split("---", 2)[2] == body  # body untouched
    shown = invoke_json(["get", memory_id, "--now", later], env=env)
    assert shown["status"] == "active" and shown["path"] == data["restored"]["to"]
    human = invoke(["restore", memory_id, "--now", later], env=env)
    assert human.exit_code == 1 and "not archived" in human.output


@pytest.mark.timeout(120)
def test_restore_refuses_an_active_memory_and_changes_nothing(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    path, memory_id = memory_note(vault, "fresh", use_count=1, last_used=ago(hours=1))
    before = path.read_bytes()
    result = invoke(["restore", memory_id, "--now", NOW], env=env)
    assert result.exit_code == 1
    assert "is active, not archived: there is nothing to restore" in result.output
    assert path.read_bytes() == before


@pytest.mark.timeout(120)
def test_a_note_moved_out_of_the_archive_by_hand_is_restored(env: dict[str, str]) -> None:
    archived, memory_id = _archived(env)
    vault = Path(env["VAULTMEM_VAULT"])
    by_hand = vault / "Notes" / archived.name
    os.rename(archived, by_hand)
    found = invoke_json(["search", "disks first then network", "--now", NOW], env=env)
    assert found["results"][0]["path"] == f"Notes/{archived.name}"
    assert _fields(by_hand)["stm_status"] == "active"
    assert invoke_json(["get", memory_id, "--now", NOW], env=env)["last_used"] == NOW


@pytest.mark.timeout(120)
def test_a_memory_moved_into_the_archive_by_hand_is_archived(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    path, memory_id = memory_note(vault, "moved away", use_count=2, last_used=ago(days=1))
    invoke_json(["reindex"], env=env)
    (vault / "memories" / "archive").mkdir()
    os.rename(path, vault / "memories" / "archive" / path.name)
    swept = invoke_json(["sweep", "--apply", "--now", NOW, "--write-at-now"], env=env)
    assert swept["finished_moves"] == []  # it stays where the user put it
    assert invoke_json(["get", memory_id, "--now", NOW], env=env)["status"] == "archived"


@pytest.mark.timeout(120)
def test_a_sweep_finishes_an_interrupted_restore(env: dict[str, str]) -> None:
    """A crash after the state write leaves an active memory in the archive folder."""
    archived, _ = _archived(env)
    text = archived.read_text(encoding="utf-8")
    archived.write_text(text.replace("stm_status: archived", "stm_status: active"),
                        encoding="utf-8")
    swept = invoke_json(["sweep", "--apply", "--now", NOW, "--write-at-now"], env=env)
    assert [m["to"] for m in swept["finished_moves"]] == [f"memories/{archived.name}"]


@pytest.mark.timeout(120)
def test_in_process_search_sees_a_note_written_since_the_last_index(
    env: dict[str, str],
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    invoke_json(["reindex"], env=env)
    (vault / "Inbox").mkdir()
    (vault / "Inbox" / "Z.md").write_text("The zorblatt widget needs oiling\n")
    status = invoke_json(["status"], env=env)
    assert status["unindexed_changes"] == 1
    assert "1 notes changed since the last index" in invoke(["status"], env=env).output
    found = invoke_json(["search", "zorblatt"], env=env)
    assert found["results"][0]["path"] == "Inbox/Z.md"
    assert invoke_json(["status"], env=env)["unindexed_changes"] == 0


@pytest.mark.timeout(120)
def test_pin_unpin_feedback_and_sweep_on_the_command_line(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    _, memory_id = memory_note(vault, "pin me", use_count=1, last_used=ago(days=100),
                               created=ago(days=100))
    assert invoke_json(["pin", memory_id, "--now", NOW], env=env)["pinned"] is True
    assert invoke_json(["sweep", "--now", NOW], env=env)["archive"] == []
    assert invoke_json(["unpin", memory_id, "--now", NOW], env=env)["pinned"] is False
    dry = invoke_json(["sweep", "--now", NOW], env=env)
    assert dry["dry_run"] is True and [i["id"] for i in dry["archive"]] == [memory_id]
    assert "would archive memories/pin me.md" in invoke(["sweep", "--now", NOW], env=env).output
    helped = invoke_json(["feedback", memory_id, "--helpful", "--now", NOW], env=env)
    assert helped["use_count"] == 2 and helped["strength"] == pytest.approx(1.1)
    worse = invoke_json(["feedback", memory_id, "--unhelpful", "--now", NOW], env=env)
    assert worse["strength"] == pytest.approx(0.9) and worse["use_count"] == 2


def _status(client: Client, memory_id: str) -> str | None:
    try:
        return str(client.call_op("get", {"id": memory_id})["status"])
    except NotFound:  # the watcher has not seen the move yet
        return None


@pytest.mark.timeout(180)
def test_restore_and_a_hand_move_through_the_daemon(env: dict[str, str]) -> None:
    vault, data = Path(env["VAULTMEM_VAULT"]), Path(env["VAULTMEM_DATA_DIR"])
    now = REFERENCE.now(REFERENCE.tzinfo)
    _, first = memory_note(vault, "first faded", use_count=1, last_used=now - timedelta(days=90),
                           created=now - timedelta(days=90))
    _, second = memory_note(vault, "second faded", use_count=1,
                            last_used=now - timedelta(days=90), created=now - timedelta(days=90),
                            body="The second faded memory, about the garden hose.")
    daemon = DaemonProcess(vault, data)
    client = daemon.start()
    try:
        moved = client.call_op("gc", {"apply": True})["archived"]
        assert sorted(m["id"] for m in moved) == sorted([first, second])
        cli_env = {k: v for k, v in env.items() if k != "VAULTMEM_CONFIG"}
        cli_env["VAULTMEM_CONFIG"] = daemon.env["VAULTMEM_CONFIG"]
        back = invoke_json(["restore", first], env=cli_env)
        assert back["memory"]["status"] == "active"
        assert back["restored"]["to"] == "memories/first faded.md"
        os.rename(vault / "memories" / "archive" / "second faded.md",
                  vault / "memories" / "second faded.md")
        wait_until(lambda: _status(client, second) == "active")
        assert client.call_op("get", {"id": second})["path"] == "memories/second faded.md"
    finally:
        daemon.stop()
