"""A note its user made read-only (chmod 444) is left alone by every command and reported,
also when vaultmem runs as root (who may write any file): the mode bits decide, not a write
attempt."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, invoke, invoke_json, memory_note
from vaultmem.errors import NoteError
from vaultmem.vault.writes import guarded_write, sha256_bytes

NOW = REFERENCE.isoformat()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Bikes.md").write_text("# Bikes\n\nSpare tubes.\n", encoding="utf-8")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake"}


def _read_only(path: Path) -> bytes:
    path.chmod(0o444)
    return path.read_bytes()


def test_a_guarded_write_refuses_a_read_only_file(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"---\nstm_use_count: 1\n---\nText\n")
    original = _read_only(note)
    with pytest.raises(NoteError, match="read-only"):
        guarded_write(note, b"changed\n", sha256_bytes(original))
    assert note.read_bytes() == original and stat.S_IMODE(note.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["n.md"]  # no temp file left


@pytest.mark.timeout(120)
def test_touch_of_a_read_only_memory_is_refused_and_changes_nothing(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    path, memory_id = memory_note(vault, "router", use_count=2, last_used=ago(days=1))
    original = _read_only(path)
    result = invoke(["touch", memory_id, "--json"], env=env)
    assert result.exit_code == 1, result.output
    assert "read-only" in result.stdout and "leaves it alone" in result.stdout
    assert path.read_bytes() == original


@pytest.mark.timeout(120)
def test_a_note_made_read_only_after_it_was_read_is_still_left_alone(
    env: dict[str, str]
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    path, memory_id = memory_note(vault, "router", use_count=2, last_used=ago(days=1))
    assert invoke_json(["touch", memory_id], env=env)["use_count"] == 3  # read and cached
    original = _read_only(path)
    assert invoke(["touch", memory_id], env=env).exit_code == 1
    assert path.read_bytes() == original


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", [["gc", "--apply"], ["sweep", "--apply"], ["promote"]])
def test_sweeps_leave_a_read_only_memory_alone_and_report_it(
    env: dict[str, str], command: list[str]
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    faded, faded_id = memory_note(vault, "faded", use_count=1, last_used=ago(days=400),
                                  created=ago(days=500))
    strong, strong_id = memory_note(vault, "strong", use_count=30, last_used=ago(days=1),
                                    created=ago(days=60), strength=5.0)
    before = {p: _read_only(p) for p in (faded, strong)}
    data = invoke_json([*command, "--now", NOW, "--write-at-now"], env=env)
    assert {item["id"] for item in data["left_alone"]} == {faded_id, strong_id}
    assert all("read-only" in item["reason"] for item in data["left_alone"])
    assert not data.get("archived") and not data.get("promoted")
    assert {p: p.read_bytes() for p in before} == before and faded.exists() and strong.exists()
    shown = invoke([*command, "--now", NOW, "--write-at-now"], env=env).output
    assert "left alone memories/faded.md: read-only" in shown

