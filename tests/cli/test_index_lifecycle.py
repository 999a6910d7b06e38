"""The vault is canonical, the index derived: deleting it or changing the model rebuilds it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, copy_vault, invoke_json
from tests.conftest import SAMPLE_VAULT

NOW = REFERENCE.isoformat()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake"}


def _top(env: dict[str, str], query: str) -> str:
    return str(invoke_json(["search", query, "--now", NOW], env=env)["results"][0]["path"])


def test_unchanged_vault_reindexes_nothing(env: dict[str, str]) -> None:
    first = invoke_json(["reindex"], env=env)
    assert first["added"] == 33 and first["chunks_embedded"] > 33
    again = invoke_json(["reindex"], env=env)
    assert again["added"] == again["changed"] == again["chunks_embedded"] == 0


def test_deleting_the_chunk_index_loses_nothing(env: dict[str, str]) -> None:
    invoke_json(["reindex"], env=env)
    expected = _top(env, "levain sourdough")
    shutil.rmtree(Path(env["VAULTMEM_DATA_DIR"]) / "lance")
    report = invoke_json(["reindex"], env=env)
    assert report["added"] == 33
    assert _top(env, "levain sourdough") == expected


def test_deleting_the_whole_data_dir_loses_nothing(env: dict[str, str]) -> None:
    invoke_json(["reindex"], env=env)
    shutil.rmtree(Path(env["VAULTMEM_DATA_DIR"]))
    assert invoke_json(["reindex"], env=env)["added"] == 33


def test_changing_the_model_rebuilds(env: dict[str, str]) -> None:
    invoke_json(["reindex"], env=env)
    report = invoke_json(["reindex"], env={**env, "VAULTMEM_EMBEDDING_MODEL": "fake:32"})
    assert report["rebuilt_reason"] and "model" in report["rebuilt_reason"]
    assert report["added"] == 33


def test_edits_moves_and_deletes_follow(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    invoke_json(["reindex"], env=env)
    dal = vault / "Recipes/Weeknight Dal.md"
    dal.rename(vault / "Recipes/Lentil Dal.md")
    report = invoke_json(["reindex"], env=env)
    assert report["moved"] == 1 and report["chunks_embedded"] == 0
    assert _top(env, "tadka") == "Recipes/Lentil Dal.md"
    loaf = vault / "Recipes/Sourdough Country Loaf.md"
    loaf.write_text(loaf.read_text(encoding="utf-8") + "\nAdd a zwetschgen topping.\n",
                    encoding="utf-8")
    assert invoke_json(["reindex"], env=env)["changed"] == 1
    hits = invoke_json(["search", "zwetschgen", "--now", NOW], env=env)["results"]
    assert "Recipes/Sourdough Country Loaf.md" in [h["path"] for h in hits[:3]]
    (vault / "Recipes/Lentil Dal.md").unlink()
    assert invoke_json(["reindex"], env=env)["deleted"] == 1
    hits = invoke_json(["search", "tadka", "--now", NOW], env=env)["results"]
    assert all(h["path"] != "Recipes/Lentil Dal.md" for h in hits)


def test_frontmatter_only_change_is_metadata_only(env: dict[str, str]) -> None:
    invoke_json(["reindex"], env=env)
    invoke_json(["touch", "dfc888ea-0e58-4d2e-8499-fe37117edeba", "--now", NOW], env=env)
    report = invoke_json(["reindex"], env=env)
    assert report["meta_changed"] == 1 and report["chunks_embedded"] == 0
