"""Reconciling a synced vault: notes that carry one memory's `stm_id` (sync conflict copies).

The pure decisions (which note is canonical, how two states merge) live in `core.device_sync`; this
applies them. For each id carried by several notes: the canonical note gets the merged state
(no use recorded on any copy is lost, none counted twice) and, when a copy's text differs, a
link to that copy; then each copy gets a new id of its own, `stm_status: archived` and
`stm_merged_into: <the memory's id>`, and moves to the archive folder. Nothing is deleted.

Order keeps every crash harmless: the canonical note is written first (re-running the merge
adds nothing: it is idempotent), a copy is only archived after that, and a copy whose state
says archived but that was not moved yet is moved by the next sweep's `finish_moves`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vaultmem.core.device_sync import CopyPlan, conflict_kind, copy_id, plan_copies
from vaultmem.core.memory import ARCHIVED, MemoryState
from vaultmem.engine.moves import Mover
from vaultmem.engine.status_results import CopySeen, DuplicateGroup, DuplicatesReport
from vaultmem.engine.upkeep_results import (
    ConflictCopy,
    CopiesMerged,
    CopiesPlanned,
    PutBack,
    ReconcileResult,
)
from vaultmem.errors import ConcurrentEdit, NoteError, NotFound
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote, Rewrite, writable
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.conflicts import git_conflicted

UNPARSED = "frontmatter does not parse"


def duplicates_report(store: MemoryStore, root: Path,
                      snapshot: Snapshot | None = None) -> DuplicatesReport:
    """For `status`: every id more than one note carries (canonical first, each copy with the
    sync tool its name points to) and the notes whose frontmatter holds git conflict markers.
    `snapshot`: the status call's (the memories and the catalog read once)."""
    snapshot = snapshot or store.snapshot()
    groups = store.duplicates(snapshot)
    return DuplicatesReport(
        duplicates=tuple(_group(memory_id, group) for memory_id, group in groups.items()),
        git_conflicts=tuple(git_conflicts(root, snapshot)),
    )


def git_conflicts(root: Path, snapshot: Snapshot) -> list[str]:
    """Notes whose frontmatter does not parse because of git merge-conflict markers (vaultmem
    never writes them; the user resolves them, e.g. with `git mergetool`)."""
    return sorted(path for path, record in snapshot.records.items()
                  if record.reason.startswith(UNPARSED) and git_conflicted(root, path))


def _group(memory_id: str, group: list[MemoryNote]) -> DuplicateGroup:
    paths = [m.path for m in group]
    return DuplicateGroup(
        id=memory_id, canonical=paths[0],
        copies=tuple(CopySeen(m.path, conflict_kind(m.path, paths), m.state.use_count)
                     for m in group[1:]),
    )


class Reconciler:
    """Merges conflict copies into their canonical note (dry run unless `apply`)."""

    def __init__(self, *, root: Path, catalog: Catalog, store: MemoryStore, sync: IndexSync,
                 mover: Mover) -> None:
        self.root = root
        self.catalog = catalog
        self.store = store
        self.sync = sync
        self.mover = mover

    def report(self, snapshot: Snapshot | None = None) -> DuplicatesReport:
        """For `status`: the ids several notes carry, and the notes with git conflicts
        (`snapshot`: the status call's, the memories and the catalog read once)."""
        return duplicates_report(self.store, self.root, snapshot)

    def reconcile(self, *, apply: bool = False) -> ReconcileResult:
        snapshot = self.store.snapshot()
        groups = [self._with_pending(group)
                  for group in self.store.duplicates(snapshot).values()]
        plans = [p for p in (self._plan(group) for group in groups) if p]
        merged = () if not apply else tuple(m for m in (self._apply(p) for p in plans) if m)
        return ReconcileResult(
            dry_run=not apply, duplicates=tuple(_planned(plan) for plan in plans),
            merged=merged, git_conflicts=tuple(git_conflicts(self.root, snapshot)),
        )

    # planning -----------------------------------------------------------------------------

    def _with_pending(self, group: list[MemoryNote]) -> list[MemoryNote]:
        """The group (canonical first) with the uses pending here laid over the canonical note,
        so a dry run shows the count an apply writes."""
        current = self.store.try_load(group[0].path)
        return [current or group[0], *group[1:]]

    def _plan(self, group: list[MemoryNote]) -> CopyPlan | None:
        states = {m.path: m.state for m in group}
        texts = {m.path: _text_of(m) for m in group}
        return plan_copies(group[0].state.id, states, texts, self.store.archive_folder)

    # applying -----------------------------------------------------------------------------

    def _apply(self, planned: CopyPlan) -> CopiesMerged | None:
        """Merge one id's copies; None when its notes changed so that nothing is left to do
        (a later run sees them again)."""
        applied: list[tuple[CopyPlan, list[MemoryNote]]] = []

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            # the notes as they are now (the plan may be minutes old): the canonical one with
            # the uses still pending here, the copies as their files hold them (so every
            # device archives a copy with the same bytes)
            found = [m for m in current if m.state.id == planned.memory_id]
            plan = self._plan(found) if len(found) > 1 else None
            if plan is None:
                return []
            by_path = {m.path: m for m in found}
            canonical = by_path[plan.canonical]
            copies = [by_path[p] for p in plan.copies if writable(by_path[p])]
            if not writable(canonical) or not copies:
                return []
            applied.append((plan, copies))
            links = [f"[[{_stem(c.path)}]]" for c in copies if c.path in plan.body_differs]
            merged = replace(plan.merged, tags=canonical.state.tags)
            return [Rewrite(canonical, merged, copy_links=links),
                    *(Rewrite(c, _archived_copy(c, plan.memory_id)) for c in copies)]

        try:
            self.store.rewrite([planned.canonical, *planned.copies], plan)
        except (ConcurrentEdit, NoteError, NotFound, OSError):
            return None  # changed while we worked: the next run merges it
        if not applied:
            return None
        plan_, copies = applied[0]
        moves = []
        for copy in copies:
            target = self.mover.to_archive(copy.path)
            moves.append(PutBack(copy.path, target or copy.path))
        self.sync.sync_paths([plan_.canonical, *(m.to for m in moves)])
        return CopiesMerged(id=plan_.memory_id, canonical=plan_.canonical,
                            use_count=plan_.merged.use_count, archived=tuple(moves),
                            linked=tuple(c.path for c in copies if c.path in plan_.body_differs))


def _archived_copy(copy: MemoryNote, memory_id: str) -> MemoryState:
    return replace(copy.state, id=copy_id(memory_id, copy.path), status=ARCHIVED,
                   merged_into=memory_id)


def _text_of(memory: MemoryNote) -> str:
    """What the user wrote: the body and every frontmatter key but vaultmem's own."""
    fields = sorted((k, repr(v)) for k, v in memory.note.fields.items()
                    if not str(k).startswith("stm_"))
    return repr(fields) + "\n" + memory.note.body


def _stem(path: str) -> str:
    name = path.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") else name


def _planned(plan: CopyPlan) -> CopiesPlanned:
    paths = [plan.canonical, *plan.copies]
    return CopiesPlanned(
        id=plan.memory_id, canonical=plan.canonical,
        copies=tuple(ConflictCopy(p, conflict_kind(p, paths), p in plan.body_differs)
                     for p in plan.copies),
        use_count=plan.merged.use_count,
    )
