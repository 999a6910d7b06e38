"""Catalog.note_names_for: candidates' names, kept in memory until their notes change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.index._support import note
from vaultmem.index.catalog import Catalog


def test_names_follow_every_change_this_catalog_makes(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        record = note("a/Cats.md", "text")[0]
        catalog.apply([record, note("b.md", "text")[0]])
        assert catalog.note_names_for(["a/Cats.md", "missing.md"]) == {"a/Cats.md": ("Cats",)}
        catalog.apply([replace(record, title="Felines", aliases=("Kitties",))])
        assert catalog.note_names_for(["a/Cats.md"]) == {
            "a/Cats.md": ("Cats", "Felines", "Kitties")}
        catalog.apply(deletes=["a/Cats.md"])
        assert catalog.note_names_for(["a/Cats.md", "b.md"]) == {"b.md": ("b",)}
        catalog.reset("another-model")
        assert catalog.note_names_for(["b.md"]) == {}
    finally:
        catalog.close()


def test_names_follow_a_change_another_connection_commits(tmp_path: Path) -> None:
    """Another process (a CLI run beside the daemon) may write the same catalog file."""
    reader, writer = Catalog(tmp_path / "catalog.sqlite3"), Catalog(tmp_path / "catalog.sqlite3")
    try:
        record = note("Cats.md", "text")[0]
        writer.apply([record])
        assert reader.note_names_for(["Cats.md"]) == {"Cats.md": ("Cats",)}
        writer.apply([replace(record, title="Felines")])
        assert reader.note_names_for(["Cats.md"]) == {"Cats.md": ("Cats", "Felines")}
    finally:
        reader.close()
        writer.close()


def test_folder_listings_follow_changes_here_and_from_another_connection(
        tmp_path: Path) -> None:
    reader, writer = Catalog(tmp_path / "catalog.sqlite3"), Catalog(tmp_path / "catalog.sqlite3")
    try:
        reader.apply([note("c/Turn 1.md", "text")[0]])
        assert reader.paths_in_folder("c") == ["c/Turn 1.md"]
        writer.apply([note("c/Turn 2.md", "text")[0]])
        assert reader.paths_in_folder("c") == ["c/Turn 1.md", "c/Turn 2.md"]
        reader.apply(deletes=["c/Turn 1.md"])
        assert reader.paths_in_folder("c") == ["c/Turn 2.md"]
        listed = reader.paths_in_folder("c")
        listed.append("c/not a note.md")  # the caller's copy
        assert reader.paths_in_folder("c") == ["c/Turn 2.md"]
    finally:
        reader.close()
        writer.close()
