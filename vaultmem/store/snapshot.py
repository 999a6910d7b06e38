"""One call's whole reads: every catalog row, a stat scan of the vault, every memory note.

A use case that needs them (status, a sweep, gc, a promotion, clusters, a merge, the scheduled
consolidation) takes a `Snapshot` from the store and hands it to every part it calls, so each
whole read happens at most once per call, on first use. What the call itself then writes or
moves it follows (`MemoryStore.follow`: the rows, stats and memory notes of just those paths
are read again), so a later step plans from the vault as the call left it without reading it
all again. Planning from a snapshot never loosens a write: each write re-reads its note under
the store's lock and is refused when the note changed since (`MemoryStore.rewrite`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vaultmem.index.base import NoteRecord
from vaultmem.index.catalog import Catalog
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.scan import ScanResult, scan_one, scan_vault


class Snapshot:
    """Not shared between threads: one call's, dropped when it answers."""

    def __init__(self, catalog: Catalog, root: Path, rules: IgnoreRules) -> None:
        self._catalog = catalog
        self._root = root
        self._rules = rules
        self._records: dict[str, NoteRecord] | None = None
        self._scan: ScanResult | None = None
        self._memory_paths: list[str] | None = None
        # every memory note as its file holds it, copies included, by path: the store fills it
        self.memory_files: list[MemoryNote] | None = None

    @property
    def records(self) -> dict[str, NoteRecord]:
        """Every catalog row, by path (read once)."""
        if self._records is None:
            self._records = self._catalog.records()
        return self._records

    @property
    def scan(self) -> ScanResult:
        """The vault's notes with their stats (scanned once)."""
        if self._scan is None:
            self._scan = scan_vault(self._root, self._rules)
        return self._scan

    @property
    def memory_paths(self) -> list[str]:
        """The catalogued memory notes' paths, copies included (from the rows when they were
        read, else one light query)."""
        if self._memory_paths is None:
            if self._records is not None:
                self._memory_paths = sorted(p for p, r in self._records.items() if r.note_id)
            else:
                self._memory_paths = self._catalog.all_memory_paths()
        return self._memory_paths

    def follow(self, paths: Iterable[str]) -> list[str]:
        """Read again what was read of these paths (their rows, their stats) after this call
        wrote or moved them; the memory notes are the store's to follow. Returns the paths."""
        changed = sorted(set(paths))
        if self._records is not None or self._memory_paths is not None:
            fresh = self._catalog.records_for(changed)
            if self._records is not None:
                for path in changed:
                    self._records.pop(path, None)
                self._records.update(fresh)
            if self._memory_paths is not None:
                kept = set(self._memory_paths) - set(changed)
                self._memory_paths = sorted(kept | {p for p, r in fresh.items() if r.note_id})
        if self._scan is not None:
            files = {p: st for p, st in self._scan.files.items() if p not in changed}
            skipped = [(p, why) for p, why in self._scan.skipped if p not in changed]
            for path in changed:
                one = scan_one(self._root, path, self._rules)
                files.update(one.files)
                skipped += one.skipped
            self._scan = ScanResult(files, skipped)
        return changed
