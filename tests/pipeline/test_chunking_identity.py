"""The chunk sizes are part of the index's identity: chunks cut with other sizes are cut again
(a rebuild, with its reason), once; a catalog from before the sizes were recorded is kept."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from vaultmem.config import Settings
from vaultmem.core.chunking import note_chunks
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.lance import LanceIndex
from vaultmem.pipeline.indexer import Indexer
from vaultmem.settings_params import index_options, indexer_options
from vaultmem.vault.ignore import IgnoreRules

pytestmark = pytest.mark.timeout(120)

EMBEDDER = FakeEmbedder(32)
EXAMPLES = "\n\n".join(f"- Example {n}: do the thing number {n} with its own options:\n\n"
                       f"`tool --option-{n} {{{{path/to/file_{n}}}}}`" for n in range(8))
BODY = f"# tool\n\n> What the tool does, in one line.\n\n{EXAMPLES}\n"
FINE = {"chunk_max_chars": 300, "chunk_min_chars": 100}


class Store:
    """The real chunk index behind the indexer's store port."""

    def __init__(self, path: Path) -> None:
        self.index = LanceIndex(path, EMBEDDER.name, index_options(Settings()))

    def __call__(self) -> LanceIndex:
        return self.index

    def identity_problem(self) -> str | None:
        return self.index.rebuilt_reason

    def exists(self) -> bool:
        return True


def sync(tmp_path: Path, vault: Path, settings: Settings) -> tuple[int, str | None]:
    """One process's full sync: the chunks stored after it and why it rebuilt, if it did."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    store = Store(tmp_path / "lance")
    try:
        indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store,  # type: ignore[arg-type]
                          EMBEDDER, indexer_options(settings))
        reason = indexer.sync().rebuilt_reason
        return store.index.stats()["chunks"], reason
    finally:
        store.index.close()
        catalog.close()


def chunk_count(settings: Settings) -> int:
    return len(note_chunks(BODY, "tool", max_chars=settings.chunk_max_chars,
                           min_chars=settings.chunk_min_chars))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "tool.md").write_text(BODY, encoding="utf-8")
    return root


def test_changed_chunk_sizes_cut_every_note_again_once(tmp_path: Path, vault: Path) -> None:
    default, fine = Settings(), replace(Settings(), **FINE)
    assert chunk_count(fine) > chunk_count(default)
    assert sync(tmp_path, vault, default) == (chunk_count(default), None)
    assert sync(tmp_path, vault, fine) == (
        chunk_count(fine), "chunk sizes changed from 1000/200 to 300/100 characters")
    assert sync(tmp_path, vault, fine) == (chunk_count(fine), None)
    assert sync(tmp_path, vault, default)[1] == (
        "chunk sizes changed from 300/100 to 1000/200 characters")


def test_a_catalog_from_before_the_sizes_were_recorded_is_kept(tmp_path: Path,
                                                                vault: Path) -> None:
    settings = Settings()
    assert sync(tmp_path, vault, settings) == (chunk_count(settings), None)
    with sqlite3.connect(tmp_path / "catalog.sqlite3") as db:  # as an older version left it
        db.execute("DELETE FROM meta WHERE key = 'chunking'")
    assert sync(tmp_path, vault, settings) == (chunk_count(settings), None)
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        assert catalog.chunking() == "1000/200"  # recorded now
    finally:
        catalog.close()
