"""A save that says what a memory already says does not silently become a second memory.

* its text is a memory's title (the README's own example on sample-vault/): the same memory,
  reinforced;
* a rewording (cosine with the memory's text or title at least `similar_memory_cosine`, below
  `near_duplicate_cosine`): held back, the answer names the memory; `force` saves it anyway.

In-process with the fake embedder (a hashed bag of words); one test (marked `model`) runs the
README example and a real rewording on a copy of sample-vault/ with the real model.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from vaultmem.api.schemas import RESPONSES
from vaultmem.api.validation import validate
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem_testing.sample_vault import SAMPLE_VAULT

NOW = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
FACT = "The staging database listens on port 5433 behind pgbouncer."
REWORDED = "Our staging database listens on port 5433 behind pgbouncer."


def make_app(tmp_path: Path, vault: Path, model: str = "fake", **overrides: object) -> App:
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": model,
        **overrides})
    app = build_app(settings)
    app.sync.reindex()
    return app


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    vault = tmp_path / "vault"
    vault.mkdir()
    app = make_app(tmp_path, vault)
    try:
        yield app
    finally:
        app.close()


def memory_files(app: App) -> list[Path]:
    return sorted((app.root / "memories").glob("*.md"))


@pytest.mark.timeout(60)
def test_a_save_of_a_memorys_title_is_that_memory(app: App) -> None:
    api = app.api(clock=lambda: NOW)
    long_text = ("Sam prefers Restic over Borg for backing up to the NAS, because Restic writes "
                 "straight to a rest-server without Borg on the remote side.")
    first = api.call("save", {"content": long_text,
                              "title": "Sam prefers Restic over Borg for NAS backups"})
    again = api.call("save", {"content": "Sam prefers Restic over Borg for NAS backups"})
    assert again["created"] is False and again["reinforced"]["id"] == first["memory"]["id"]
    assert len(memory_files(app)) == 1


@pytest.mark.timeout(60)
def test_a_rewording_is_held_back_naming_the_memory_and_force_saves_it(app: App) -> None:
    api = app.api(clock=lambda: NOW)
    vectors = app.embedder.embed([FACT, REWORDED])
    assert 0.8 <= float(vectors[0] @ vectors[1]) < 0.95  # similar, not a near duplicate
    first = api.call("save", {"content": FACT})["memory"]
    before = {p: p.read_bytes() for p in memory_files(app)}
    held = api.call("save", {"content": REWORDED})
    validate(RESPONSES["save"], held, "save")
    assert held["created"] is False and held["reinforced"] is None
    assert held["similar"]["id"] == first["id"] and held["similar"]["path"] == first["path"]
    assert 0.8 <= held["similar"]["similarity"] < 0.95
    assert held["memory"]["id"] == first["id"] and held["memory"]["use_count"] == 1
    assert {p: p.read_bytes() for p in memory_files(app)} == before  # nothing written
    forced = api.call("save", {"content": REWORDED, "force": True})
    assert forced["created"] is True and len(memory_files(app)) == 2


@pytest.mark.timeout(60)
def test_the_threshold_is_a_setting(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    app = make_app(tmp_path, vault, similar_memory_cosine=0.95)
    try:
        api = app.api(clock=lambda: NOW)
        api.call("save", {"content": FACT})
        assert api.call("save", {"content": REWORDED})["created"] is True
    finally:
        app.close()


@pytest.mark.model
@pytest.mark.timeout(600)
def test_the_readme_example_and_a_rewording_add_no_memory_on_the_sample_vault(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    app = make_app(tmp_path, vault, model="default")
    try:
        api = app.api(clock=lambda: NOW)
        before = len(memory_files(app))
        example = api.call("save", {"content": "Sam prefers Restic over Borg for NAS backups",
                                    "tags": ["backup"], "type": "preference"})
        assert example["created"] is False
        assert example["memory"]["title"] == "Sam prefers Restic over Borg for NAS backups"
        reworded = api.call("save", {
            "content": "Sam likes Restic better than Borg for backing up the NAS"})
        assert reworded["created"] is False and reworded["similar"] is not None
        assert "restic" in reworded["similar"]["path"]
        other = api.call("save", {"content": "The garden shed key hangs behind the pantry door."})
        assert other["created"] is True
        assert len(memory_files(app)) == before + 1
        promote = api.call("promote", {"dry_run": True})["promote"]
        assert sum("restic" in item["path"] for item in promote) <= 1  # one memory, not three
    finally:
        app.close()
