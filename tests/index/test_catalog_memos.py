"""The catalog's memos of a search's rows: `known_records_for`, `paths_for_note_id` and the
`generation` that tells a caller when what it derived from the catalog is out of date."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.index._support import note
from vaultmem.index.catalog import Catalog


def test_known_records_follow_every_change_this_catalog_makes(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        record = note("a/Cats.md", "text")[0]
        catalog.apply([record, note("b.md", "text")[0]])
        assert catalog.known_records_for(["a/Cats.md", "missing.md"]) == {"a/Cats.md": record}
        changed = replace(record, title="Felines", tags=("pets",))
        catalog.apply([changed])
        assert catalog.known_records_for(["a/Cats.md"]) == {"a/Cats.md": changed}
        catalog.apply(deletes=["a/Cats.md"])
        assert set(catalog.known_records_for(["a/Cats.md", "b.md"])) == {"b.md"}
        catalog.reset("another-model")
        assert catalog.known_records_for(["b.md"]) == {}
    finally:
        catalog.close()


def test_known_records_and_ids_follow_a_change_another_connection_commits(
        tmp_path: Path) -> None:
    """Another process (a CLI run beside the daemon) may write the same catalog file."""
    reader, writer = Catalog(tmp_path / "catalog.sqlite3"), Catalog(tmp_path / "catalog.sqlite3")
    try:
        memory = note("m/Fact.md", "text", note_id="id-1")[0]
        writer.apply([memory])
        assert reader.known_records_for(["m/Fact.md"]) == {"m/Fact.md": memory}
        assert reader.paths_for_note_id("id-1") == ["m/Fact.md"]
        copy = replace(memory, path="m/Fact (conflict).md")
        writer.apply([replace(memory, title="Changed"), copy])
        assert reader.known_records_for(["m/Fact.md"])["m/Fact.md"].title == "Changed"
        assert reader.paths_for_note_id("id-1") == ["m/Fact (conflict).md", "m/Fact.md"]
        writer.apply(deletes=["m/Fact.md"])
        assert reader.paths_for_note_id("id-1") == ["m/Fact (conflict).md"]
        assert reader.known_records_for(["m/Fact.md"]) == {}
    finally:
        reader.close()
        writer.close()


def test_ids_follow_changes_here_and_callers_get_copies(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    try:
        assert catalog.paths_for_note_id("id-1") == []
        catalog.apply([note("m/Fact.md", "text", note_id="id-1")[0]])
        found = catalog.paths_for_note_id("id-1")
        assert found == ["m/Fact.md"]
        found.append("m/not a note.md")  # the caller's copy
        assert catalog.paths_for_note_id("id-1") == ["m/Fact.md"]
        catalog.apply([note("m/Moved.md", "text", note_id="id-1")[0]], deletes=["m/Fact.md"])
        assert catalog.paths_for_note_id("id-1") == ["m/Moved.md"]
    finally:
        catalog.close()


def test_the_generation_changes_with_every_change_and_only_then(tmp_path: Path) -> None:
    reader, writer = Catalog(tmp_path / "catalog.sqlite3"), Catalog(tmp_path / "catalog.sqlite3")
    try:
        first = reader.generation()
        reader.known_records_for(["x.md"])  # reads change nothing
        reader.paths_in_folder("")
        assert reader.generation() == first
        reader.apply([note("a.md", "text")[0]])
        second = reader.generation()
        assert second != first
        reader.apply()  # nothing to write
        assert reader.generation() == second
        writer.apply([note("b.md", "text")[0]])
        third = reader.generation()
        assert third != second
        reader.reset("another-model")
        assert reader.generation() != third
    finally:
        reader.close()
        writer.close()
