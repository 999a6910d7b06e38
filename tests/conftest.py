"""Hermetic defaults for every test: no user config, data or model downloads leak in or out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "sample-vault"
CORPORA = REPO.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def _model_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of model files (the ONNX export) for the whole run: each test has its own
    data dir, but exporting the model again for every test that loads it would cost seconds."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(autouse=True)
def _hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                  _model_files: Path) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    (home / "data" / "vaultmem").mkdir(parents=True)
    (home / "data" / "vaultmem" / "models").symlink_to(_model_files, target_is_directory=True)
    for name in list(os.environ):
        if name.startswith("VAULTMEM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("VAULTMEM_CONFIG", str(home / "config" / "vaultmem.toml"))
    yield
