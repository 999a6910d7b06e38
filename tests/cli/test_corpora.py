"""Index the real third-party vaults: every note accounted for, no file changed."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.cli._support import invoke_json
from tests.conftest import CORPORA

pytestmark = [pytest.mark.corpus, pytest.mark.timeout(600)]

VAULTS = {
    "vaultofknowledge": CORPORA / "vaultofknowledge" / "vault",
    "obsidian-tasks": CORPORA / "obsidian-tasks",
}


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("name", sorted(VAULTS))
def test_corpus_indexes_completely_and_changes_nothing(tmp_path: Path, name: str) -> None:
    source = VAULTS[name]
    if not source.is_dir():
        pytest.skip(f"corpus {source} not present")
    vault = tmp_path / "vault"
    shutil.copytree(source, vault, symlinks=True)
    before = _digest(vault)
    env = {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
           "VAULTMEM_EMBEDDING_MODEL": "fake:384"}
    report = invoke_json(["reindex"], env=env)
    status = invoke_json(["status", "--files"], env=env)
    coverage = status["coverage"]
    listed = {item["path"]: item for item in coverage["files"]}
    notes_on_disk = {
        str(p.relative_to(vault)) for p in vault.rglob("*")
        if p.suffix.lower() == ".md" and not any(part.startswith(".") for part in
                                                 p.relative_to(vault).parts)
    }
    missing = notes_on_disk - set(listed)
    assert not missing, f"notes neither indexed nor reported: {sorted(missing)[:5]}"
    assert coverage["indexed"] + len(coverage["skipped"]) + len(coverage["failed"]) == len(listed)
    for item in coverage["skipped"] + coverage["failed"]:
        assert item["reason"], item
    assert coverage["indexed"] >= 0.95 * len(notes_on_disk)
    assert report["chunks_embedded"] >= coverage["indexed"]
    assert _digest(vault) == before, "indexing changed a file in the vault"
    again = invoke_json(["reindex"], env=env)
    assert again["added"] == again["changed"] == again["chunks_embedded"] == 0
