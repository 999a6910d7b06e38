"""Search prefers the current fact: a superseded memory ranks below its successor when both
match, and carries `superseded_by` (the successor's id, path, title and uri) in the results.

A small step on search's results after the memory re-rank (`Search.search`); the relevance
scores are not touched. The order rule is `core.supersede.prefer_successors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from vaultmem.core.ranking import Ranked
from vaultmem.core.supersede import prefer_successors
from vaultmem.engine.results import SearchHit, Successor
from vaultmem.engine.shapes import obsidian_uri
from vaultmem.index.catalog import Catalog
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.store.memory_store import MemoryStore


def prefer_current(ranked: Sequence[Ranked], memories: Mapping[str, MemoryNote]) -> list[Ranked]:
    """`ranked` with each superseded memory below its successor when both are listed."""
    stale = {path: m.state.superseded_by for path, m in memories.items()
             if m.state.superseded_by is not None}
    if not stale:
        return list(ranked)
    path_of_id = {m.state.id: path for path, m in memories.items()}
    successor = {path: path_of_id[new] for path, new in stale.items() if new in path_of_id}
    return prefer_successors(ranked, lambda item: item.path, successor)


def mark_superseded(hits: Sequence[SearchHit], memories: Mapping[str, MemoryNote],
                    store: MemoryStore, catalog: Catalog, vault_name: str) -> list[SearchHit]:
    """Each hit of a superseded memory with its successor; regular notes are never marked."""
    return [replace(hit, superseded_by=successor(memory.state.superseded_by, store, catalog,
                                                 vault_name))
            if (memory := memories.get(hit.path)) is not None
            and memory.state.superseded_by is not None else hit
            for hit in hits]


def successor(memory_id: str, store: MemoryStore, catalog: Catalog,
              vault_name: str) -> Successor:
    """The successor with this id, where its note is now (None when no note carries it)."""
    paths = catalog.paths_for_note_id(memory_id)
    path = store.canonical(paths) if paths else None
    record = catalog.records_for([path]).get(path) if path else None
    return Successor(id=memory_id, path=path,
                     title=record.title if record is not None else None,
                     uri=obsidian_uri(vault_name, path) if path else None)
