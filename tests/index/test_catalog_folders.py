"""Catalog.paths_in_folder: the notes directly in one folder, for thread context."""

from __future__ import annotations

from pathlib import Path

from tests.index._support import note
from vaultmem.index.catalog import Catalog


def test_paths_in_folder_lists_direct_children_only(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        paths = ["Top 1.md", "c/Turn 2.md", "c/Turn 10.md", "c/Session 1/Turn 1.md",
                 "c2/Turn 1.md", "c/2023-01-01 t1.md", "c/2023-01-02 t1.md"]
        catalog.apply([note(path, "text")[0] for path in paths])
        assert catalog.paths_in_folder("c") == sorted(
            ["c/Turn 2.md", "c/Turn 10.md", "c/2023-01-01 t1.md", "c/2023-01-02 t1.md"])
        assert catalog.paths_in_folder("c", "2023-01-01") == ["c/2023-01-01 t1.md"]
        assert catalog.paths_in_folder("c/Session 1") == ["c/Session 1/Turn 1.md"]
        assert catalog.paths_in_folder("") == ["Top 1.md"]
        assert catalog.paths_in_folder("missing") == []
        catalog.apply([note("c/Turn 3.md", "one\n\ntwo")[0]])  # two chunks
        assert "c/Turn 3.md" in catalog.paths_in_folder("c")
        assert "c/Turn 3.md" not in catalog.paths_in_folder("c", max_chunks=1)
        assert "c/Turn 2.md" in catalog.paths_in_folder("c", max_chunks=1)
    finally:
        catalog.close()
