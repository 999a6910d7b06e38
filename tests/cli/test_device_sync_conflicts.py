"""A synced vault as a new user meets it: two conflict copies of one memory note (named as
Syncthing and Dropbox name them) carrying the original's `stm_id`. `status` reports them,
`touch`/`get` land on the original, and `reconcile --apply` merges the copies' uses into it and
archives them, keeping a copy whose text differs linked from the original."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from tests.cli._support import REFERENCE, copy_vault, invoke, invoke_json
from tests.conftest import SAMPLE_VAULT
from vaultmem.errors import ConfigError
from vaultmem.store.device import DEVICE_FILE, device_id

NOW = REFERENCE.isoformat()
ID = "4c80f0c6-d2ed-4a7b-a433-1888347fad8d"
ORIGINAL = "memories/2026-11-10 crumb-migrations-must-be-reversible.md"
SYNCTHING = ("memories/2026-11-10 crumb-migrations-must-be-reversible"
             ".sync-conflict-20261124-101010-ABCDEFG.md")
DROPBOX = "memories/2026-11-10 crumb-migrations-must-be-reversible (conflicted copy 2026-11-24).md"
EXTRA = "\nAlso: squash migrations only before a release.\n"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    text = (vault / ORIGINAL).read_text(encoding="utf-8")
    # the other device used the memory twice before the sync tool kept its version as a copy
    other = text.replace("stm_use_count: 5", "stm_use_count: 7").replace(
        "2026-11-11T21:00:00", "2026-11-19T09:00:00")
    (vault / SYNCTHING).write_text(other, encoding="utf-8")
    (vault / DROPBOX).write_text(text + EXTRA, encoding="utf-8")  # same state, more text
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_DEVICE_ID": "laptop-1a2b"}


def fields(vault: Path, path: str) -> dict[str, object]:
    text = (vault / path).read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match is not None
    loaded = yaml.safe_load(match.group(1))
    assert isinstance(loaded, dict)
    return loaded


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.timeout(120)
def test_status_reports_the_copies_and_counts_the_memory_once(env: dict[str, str]) -> None:
    data = invoke_json(["status", "--now", NOW], env=env)
    assert data["memories"]["total"] == 14
    assert data["sync"]["duplicates"] == [{"id": ID, "canonical": ORIGINAL, "copies": [
        {"path": DROPBOX, "kind": "dropbox", "use_count": 5},
        {"path": SYNCTHING, "kind": "syncthing", "use_count": 7}]}]
    text = invoke(["status", "--now", NOW], env=env).output
    assert "duplicate memory id" in text and SYNCTHING in text and "reconcile --apply" in text


@pytest.mark.timeout(120)
def test_touch_and_get_land_on_the_original(env: dict[str, str]) -> None:
    assert invoke_json(["get", ID, "--now", NOW], env=env)["path"] == ORIGINAL
    touched = invoke_json(["touch", ID, "--now", NOW], env=env)
    assert touched["path"] == ORIGINAL and touched["use_count"] == 6
    vault = Path(env["VAULTMEM_VAULT"])
    assert fields(vault, ORIGINAL)["stm_uses_by"] == "laptop-1a2b=1"
    assert fields(vault, SYNCTHING)["stm_use_count"] == 7  # the copy was not written


@pytest.mark.timeout(120)
def test_copies_are_not_forget_candidates(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    faded = "memories/2026-10-05 tried-caddy-in-front-of-gitea.md"  # a forget candidate
    copy = faded.replace(".md", " (conflicted copy 2026-11-24).md")
    (vault / copy).write_bytes((vault / faded).read_bytes())
    paths = [item["path"] for item in invoke_json(["gc", "--now", NOW], env=env)["archive"]]
    assert faded in paths and copy not in paths and len(paths) == 3


@pytest.mark.timeout(180)
def test_reconcile_merges_the_uses_and_archives_the_copies(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    invoke_json(["touch", ID, "--now", NOW], env=env)  # one use here, after the fork
    before = digest(vault)
    dry = invoke_json(["reconcile", "--now", NOW], env=env)
    assert dry["dry_run"] and dry["merged"] == [] and digest(vault) == before
    assert dry["duplicates"][0]["use_count"] == 8  # 7 from the copy + this device's 1

    done = invoke_json(["reconcile", "--apply", "--now", NOW, "--write-at-now"], env=env)
    [merged] = done["merged"]
    assert merged["canonical"] == ORIGINAL and merged["linked"] == [DROPBOX]
    original = fields(vault, ORIGINAL)
    assert original["stm_use_count"] == 8 and original["stm_status"] == "active"
    assert str(original["stm_last_used"]).startswith("2026-11-20 12:00:00")
    text = (vault / ORIGINAL).read_text(encoding="utf-8")
    assert "[[2026-11-10 crumb-migrations-must-be-reversible (conflicted copy 2026-11-24)]]" \
        in text
    for copy in (SYNCTHING, DROPBOX):
        archived = "memories/archive/" + copy.rpartition("/")[2]
        assert not (vault / copy).exists() and (vault / archived).is_file()
        state = fields(vault, archived)
        assert state["stm_status"] == "archived" and state["stm_merged_into"] == ID
        assert state["stm_id"] != ID
    assert EXTRA.strip() in (vault / "memories/archive" / DROPBOX.rpartition("/")[2]).read_text(
        encoding="utf-8")

    status = invoke_json(["status", "--now", NOW], env=env)
    assert status["sync"]["duplicates"] == []
    assert status["memories"]["by_status"]["active"] == 14
    assert invoke_json(["get", ID, "--now", NOW], env=env)["use_count"] == 8
    again = digest(vault)
    replay = ["reconcile", "--apply", "--now", NOW, "--write-at-now"]
    assert invoke_json(replay, env=env)["merged"] == []
    assert digest(vault) == again


@pytest.mark.timeout(120)
def test_git_conflict_markers_are_reported_and_never_written(tmp_path: Path) -> None:
    vault = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    env = {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
           "VAULTMEM_EMBEDDING_MODEL": "fake"}
    text = (vault / ORIGINAL).read_text(encoding="utf-8")
    merged = text.replace("stm_use_count: 5\n", "<<<<<<< HEAD\nstm_use_count: 6\n=======\n"
                          "stm_use_count: 7\n>>>>>>> laptop\n")
    (vault / ORIGINAL).write_text(merged, encoding="utf-8")
    invoke_json(["reindex"], env=env)  # found from the index (the daemon keeps it current)
    status = invoke_json(["status", "--now", NOW], env=env)
    assert status["sync"]["git_conflicts"] == [ORIGINAL]
    assert "git conflict markers" in invoke(["status", "--now", NOW], env=env).output
    done = invoke_json(["reconcile", "--apply", "--now", NOW, "--write-at-now"], env=env)
    assert done["git_conflicts"] == [ORIGINAL] and done["merged"] == []
    assert (vault / ORIGINAL).read_text(encoding="utf-8") == merged


def test_the_device_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = device_id(tmp_path)
    assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{4}", first)
    assert device_id(tmp_path) == first == (tmp_path / DEVICE_FILE).read_text().strip()
    assert device_id(tmp_path, "desk-9f8e") == "desk-9f8e"  # the setting wins
    with pytest.raises(ConfigError, match="device_id"):
        device_id(tmp_path, "two words")


@pytest.mark.timeout(120)
def test_search_lists_the_memory_once_not_its_copies(env: dict[str, str]) -> None:
    found = invoke_json(["search", "reversible migrations", "--now", NOW], env=env)
    paths = [hit["path"] for hit in found["results"]]
    assert ORIGINAL in paths
    assert SYNCTHING not in paths and DROPBOX not in paths
