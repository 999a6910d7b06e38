"""A sync let in between the slices of another sync may itself let syncs in (up to
MAX_NESTING deep). Those must leave alone every path an enclosing sync has yet to write, not
only the ones their own sync has: otherwise the deletion of a note an outer sync is still
embedding is synced first, the outer sync then writes the note's record, and the index keeps a
note gone from disk until the next reindex (the concurrent-write seeds' stale entries)."""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from pathlib import Path

import pytest

from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.indexer import Indexer
from vaultmem.pipeline.sync_gate import SyncGate
from vaultmem.vault.scan import scan_vault

from .test_sync_gate import (  # noqa: F401 (parts: the fixture)
    ALL,
    BIG,
    SLICE_CHUNKS,
    GatedEmbedder,
    big_text,
    parts,
    wait,
    write,
)

pytestmark = pytest.mark.timeout(60)

OTHER = "big/Other large note.md"  # embedded in slices too, let in between BIG's slices
MOVED = "big/Large note, renamed.md"

Parts = tuple[Path, Catalog, Indexer, GatedEmbedder]


def _stale(vault: Path, catalog: Catalog, gate: SyncGate) -> set[str]:
    """Paths the index keeps that are no longer on disk."""
    return set(catalog.records()) - set(scan_vault(vault, gate.indexer.rules).files)


def _run_outer(gate: SyncGate, embedder: GatedEmbedder) -> None:
    """The outer sync: BIG, embedded in slices, new to the index."""
    for _ in range(ALL * 2):
        embedder.allowed.release()
    report = gate.sync_paths([BIG], {})
    assert report.added == 1


def test_a_sync_let_in_two_deep_leaves_the_outer_syncs_unwritten_note_queued(
        parts: Parts) -> None:  # noqa: F811 (the fixture imported above)
    """The watcher's queue, taken between slices: the user renames the note the outer sync
    is embedding while a second large note, let in, is embedded in its turn."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 2))
    write(vault, OTHER, big_text(SLICE_CHUNKS * 2).replace("Large note", "Other note"))
    queue: dict[str, None] = {OTHER: None}
    offered: list[frozenset[str]] = []

    def take(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, object]] | None:
        offered.append(unwritten)
        if len(offered) == 2:  # OTHER's first slice is done: the user renames BIG now
            os.rename(vault / BIG, vault / MOVED)
            queue.update(dict.fromkeys([BIG, MOVED]))  # the watcher's event for the rename
        paths = [p for p in queue if p not in unwritten]
        for path in paths:
            del queue[path]
        return (paths, {}) if paths else None

    gate.let_in(take, lambda report: None)
    _run_outer(gate, embedder)
    left = list(queue)
    if left:
        gate.sync_paths(left, {})  # the watcher delivers what is left
    assert _stale(vault, catalog, gate) == set()
    assert MOVED in catalog.records()
    assert offered[1] >= {BIG, OTHER}, "the inner sync was offered BIG as writable"
    assert left == [BIG], "BIG's rename waits for the sync writing BIG"


def test_a_waiting_caller_let_in_two_deep_waits_for_the_outer_syncs_unwritten_note(
        parts: Parts) -> None:  # noqa: F811 (the fixture imported above)
    """The same with a caller waiting for the writer (vaultmem's own move of the note, synced
    from another thread): it is let in only once the outer sync has written the note."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 2))
    write(vault, OTHER, big_text(SLICE_CHUNKS * 2).replace("Large note", "Other note"))
    calls: list[frozenset[str]] = []
    mover: list[threading.Thread] = []

    def take(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, object]] | None:
        calls.append(unwritten)
        if len(calls) == 1:
            return [OTHER], {}
        if len(calls) == 2:  # inside OTHER's sync: the move happens and its caller waits
            os.rename(vault / BIG, vault / MOVED)
            thread = threading.Thread(target=lambda: gate.sync_paths([BIG, MOVED], {}))
            thread.start()
            mover.append(thread)
            wait(lambda: gate.queued() == 2, "the move's sync to wait for the writer")
        return None

    gate.let_in(take, lambda report: None)
    _run_outer(gate, embedder)
    mover[0].join(20)
    assert not mover[0].is_alive()
    assert _stale(vault, catalog, gate) == set()
    assert MOVED in catalog.records()



def test_a_whole_vault_syncs_changed_notes_wait_for_it_during_its_words_pass(
        parts: Parts) -> None:  # noqa: F811 (the fixture imported above)
    """A whole-vault sync writes its new notes' words first, letting waiting changes in
    between those writes; its edited notes are written after, with their vectors, so a change
    to one of them let in meanwhile (here its deletion) would be undone by that write."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    edited = "notes/small 0.md"
    write(vault, edited, "# Small 0\n\nEdited: a different body now.\n")
    for n in range(40):  # new notes enough for more than one words write
        write(vault, f"new/note {n}.md", f"# New {n}\n\n" + big_text(2).replace("#", ""))
    queue: dict[str, None] = {}
    offered: list[frozenset[str]] = []

    def take(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, object]] | None:
        offered.append(unwritten)
        if len(offered) == 1:  # after the first words write, the user deletes the edited note
            (vault / edited).unlink()
            queue[edited] = None
        paths = [p for p in queue if p not in unwritten]
        for path in paths:
            del queue[path]
        return (paths, {}) if paths else None

    gate.let_in(take, lambda report: None)
    for _ in range(ALL * 20):
        embedder.allowed.release()
    report = gate.reindex(full=False, progress=None)
    assert report.added == 40 and report.changed == 1
    assert offered, "the words pass let nothing in"
    left = list(queue)
    if left:
        gate.sync_paths(left, {})  # the watcher delivers what is left
    assert _stale(vault, catalog, gate) == set()
    assert edited in offered[0], "the edited note is still to be written"
