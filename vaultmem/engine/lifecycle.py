"""Saving, forgetting (archive) and promotion: plan with the pure core, then apply to the vault.

Order of writes keeps every crash harmless: a note's new state is written (guarded) in place
first, then the file is moved; an interrupted move is finished by the next sweep
(`finish_moves`), so a note is never lost and never duplicated.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from vaultmem.core.decisions import Decision
from vaultmem.core.intake import normalise_tags
from vaultmem.core.memory import (
    ACTIVE,
    ARCHIVED,
    PROMOTED,
    new_state,
    state_from_fields,
    state_to_fields,
)
from vaultmem.core.planning import SweepItem, plan_sweep
from vaultmem.core.reinforce import resave_counts, touch
from vaultmem.core.update_rule import value_change
from vaultmem.engine.moves import Mover, inside
from vaultmem.engine.parts import EngineParams, IndexOpener
from vaultmem.engine.results import Reinforced, SaveResult, Similar
from vaultmem.engine.save_intake import (
    Closest,
    check_save,
    closest_memory,
    exact_duplicate,
    title_from,
)
from vaultmem.engine.upkeep_results import (
    Archived,
    GcResult,
    LeftAlone,
    Move,
    Planned,
    Promoted,
    PromoteResult,
    SweepResult,
)
from vaultmem.engine.views import Views
from vaultmem.errors import InvalidInput
from vaultmem.index.base import Embedder
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import (
    MemoryNote,
    Rewrite,
    content_of,
    unwritable_reason,
    writable,
)
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.memories import create_memory_note, wikilink
from vaultmem.vault.notes import parse_note


class Lifecycle:
    def __init__(
        self, *, root: Path, catalog: Catalog, store: MemoryStore, sync: IndexSync,
        views: Views, mover: Mover, index: IndexOpener, embedder: Embedder,
        params: EngineParams,
    ) -> None:
        self.root = root
        self.catalog = catalog
        self.store = store
        self.sync = sync
        self.views = views
        self.mover = mover
        self.index = index
        self.embedder = embedder
        self.params = params

    # save ---------------------------------------------------------------------------------

    def save(
        self, content: str, now: datetime, *, title: str | None = None,
        tags: Sequence[str] = (), type: str | None = None, strength: float = 1.0,
        pinned: bool = False, source: str | None = None, force: bool = False,
    ) -> SaveResult:
        """Save a memory through the intake gate: refused content writes nothing anywhere; an
        exact or near duplicate of a live memory reinforces it instead of adding another; a
        similar one (`similar_memory_cosine`) holds the save back unless `force` or it changes
        one of that memory's values (an update, proposed by `Updates`)."""
        content = content.strip()
        check_save(content, title=title, tags=tags, source=source, type=type,
                   strength=strength, params=self.params)
        clean_tags = normalise_tags(tags)
        query = self.embedder.embed_query(content)  # may load a model
        live = [m for m in self.store.iter_memories() if m.state.status != ARCHIVED]
        duplicate = exact_duplicate(content, live)
        if duplicate is not None:
            return self._reinforce_instead(duplicate, now, "an identical memory exists")
        closest = closest_memory(content, query, live, index=self.index,
                                 embedder=self.embedder, params=self.params)
        if closest is not None and closest.text_cosine >= self.params.near_duplicate_cosine:
            return self._reinforce_instead(
                closest.memory, now,
                f"a near-duplicate memory exists (cosine {closest.text_cosine:.2f})")
        if (closest is not None and not force
                and closest.similarity >= self.params.similar_memory_cosine
                and value_change(content_of(closest.memory), content) is None):
            return self._held_back(closest, now)  # a rewording; a changed value is an update
        state = new_state(str(uuid.uuid4()), now, strength=strength, type=type,
                          pinned=pinned, source=source, tags=tuple(clean_tags))
        path, text = create_memory_note(
            self.root, self.params.memory_folder, day=now.date(),
            title=(title or title_from(content)).strip(), body=content,
            stm_fields=state_to_fields(state), tags=clean_tags)
        self.sync.sync_paths([path])
        # Answer with what was written: re-reading the note could fail (404) when its user
        # has already moved it, and a client would then save the memory again.
        note = parse_note(path, text.encode("utf-8"))
        written = MemoryNote(path, note, state_from_fields(note.fields, tags=note.tags), text)
        return SaveResult(created=True, memory=self.views.view(written, now))

    def _held_back(self, closest: Closest, now: datetime) -> SaveResult:
        """A save that says nearly what a memory says is not written (two memories saying one
        thing compete in search and both get promoted); the answer names the memory."""
        memory = closest.memory
        return SaveResult(
            created=False, memory=self.views.view(memory, now),
            similar=Similar(memory.state.id, memory.path, memory.note.title, closest.similarity))

    def _reinforce_instead(self, memory: MemoryNote, now: datetime, why: str) -> SaveResult:
        """A use of the existing memory, unless it was saved or used within the resave
        window: then nothing is written and the answer says it was not counted."""
        window = self.params.resave_window_hours
        if not resave_counts(memory.state, now, window):
            why += f"; saved again within {window:g} h of its last use, so not counted as a use"
            return SaveResult(created=False, memory=self.views.view(memory, now),
                              reinforced=Reinforced(memory.state.id, why, counted=False))
        updated = self.store.update(
            memory.path, lambda current: touch(current.state, now, self.params.reinforce))
        return SaveResult(created=False, memory=self.views.view(updated, now),
                          reinforced=Reinforced(memory.state.id, why, counted=True))

    # sweep: forget and promote ------------------------------------------------------------

    def plan(self, now: datetime, snapshot: Snapshot | None = None
             ) -> tuple[list[MemoryNote], Any]:
        """Memories the user left read-only (or vaultmem cannot write) are not planned: they
        are listed by `_left_alone` instead."""
        memories = list(self.store.iter_memories(snapshot))
        active = [(m.path, m.state) for m in memories
                  if m.state.status == ACTIVE and writable(m)]
        return memories, plan_sweep(active, now, self.params.decay, self.params.policy)

    def gc(self, now: datetime, *, apply: bool = False) -> GcResult:
        snapshot = self.store.snapshot()
        memories, plan = self.plan(now, snapshot)
        by_path = {m.path: m for m in memories}
        done = _done(self._archive(by_path[item.path], item.decision, snapshot)
                     for item in (plan.archive if apply else ()))
        return GcResult(
            dry_run=not apply, archive=_planned(plan.archive), archived=done,
            kept=len(plan.keep) + len(plan.promote), left_alone=_left_alone(memories),
        )

    def promote(self, ref: str | None, now: datetime, *,
                dry_run: bool = False) -> PromoteResult:
        snapshot = self.store.snapshot()  # shared by every promotion of this call
        if ref is not None:
            memory = self.store.load(ref)
            if memory.state.status != ACTIVE:
                raise InvalidInput(f"{memory.path} is {memory.state.status}, not active")
            if memory.state.superseded_by is not None:
                raise InvalidInput(f"{memory.path} is superseded by {memory.state.superseded_by}"
                                   ": a stale memory is never promoted (unsupersede it first)")
            decision = Decision("promote", "promoted on request", 0.0)
            items = [SweepItem(memory.path, memory.state.id, decision)]
            by_path = {memory.path: memory}
        else:
            memories, plan = self.plan(now, snapshot)
            items = list(plan.promote)
            by_path = {m.path: m for m in memories}
        done = () if dry_run else _done(self._promote(by_path[i.path], i.decision, now,
                                                      snapshot) for i in items)
        return PromoteResult(dry_run=dry_run, promote=_planned(items), promoted=done,
                             left_alone=_left_alone(by_path.values()))

    def sweep(self, now: datetime, *, dry_run: bool = True) -> SweepResult:
        """Forget and promote together (the scheduled job), after finishing interrupted moves;
        the catalog and the vault are read once, the plan made from them as the moves left
        them."""
        snapshot = self.store.snapshot()
        finished = () if dry_run else self.finish_moves(snapshot)
        memories, plan = self.plan(now, snapshot)
        by_path = {m.path: m for m in memories}
        archived = () if dry_run else _done(
            self._archive(by_path[i.path], i.decision, snapshot) for i in plan.archive)
        promoted = () if dry_run else _done(
            self._promote(by_path[i.path], i.decision, now, snapshot) for i in plan.promote)
        return SweepResult(
            dry_run=dry_run, archive=_planned(plan.archive), promote=_planned(plan.promote),
            keep=len(plan.keep), archived=archived, promoted=promoted, finished_moves=finished,
            left_alone=_left_alone(memories),
        )

    def finish_moves(self, snapshot: Snapshot | None = None) -> tuple[Move, ...]:
        """Archived or promoted memories still outside their folder, and restored (active)
        ones still inside the archive folder (a crash between the state write and the move),
        are moved now."""
        done = []
        for memory in list(self.store.iter_memories(snapshot)):
            folder = {ARCHIVED: self.params.archive_folder,
                      PROMOTED: self.params.promoted_folder}.get(memory.state.status)
            misplaced = folder is not None and not inside(memory.path, folder)
            if memory.state.status == ACTIVE and inside(memory.path, self.params.archive_folder):
                folder, misplaced = self.params.memory_folder, True
            if folder and misplaced:
                target = self.mover.into(memory.path, folder, snapshot)
                if target is not None:
                    done.append(Move(memory.state.id, memory.path, target))
        return tuple(done)

    # applying -----------------------------------------------------------------------------

    def _rewrite_now(
        self, memory: MemoryNote, change: Callable[[MemoryNote], Rewrite | None]
    ) -> bool:
        """Write the planned memory's change now, from the memory as it is now (with the uses,
        pins and edits recorded since the plan: writing the planned state would undo them);
        nothing when it is gone, moved or no longer active, or `change` declines."""
        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            same = [m for m in current if m.state.id == memory.state.id and writable(m)
                    and m.state.status == ACTIVE]
            rewrite = change(same[0]) if same else None
            return [] if rewrite is None else [rewrite]

        return bool(self.store.rewrite([memory.path], plan))

    def _archive(self, memory: MemoryNote, decision: Decision,
                 snapshot: Snapshot) -> Archived | None:
        def archive(current: MemoryNote) -> Rewrite | None:
            if current.state.pinned:
                return None
            return Rewrite(current, replace(current.state, status=ARCHIVED))

        if not self._rewrite_now(memory, archive):
            return None
        target = self.mover.into(memory.path, self.params.archive_folder, snapshot)
        if target is None:
            return None
        return Archived(memory.state.id, memory.path, target, decision.reason)

    def _promote(self, memory: MemoryNote, decision: Decision, now: datetime,
                 snapshot: Snapshot) -> Promoted | None:
        links = self._related_links(memory, snapshot)

        def promote(current: MemoryNote) -> Rewrite:
            new = replace(current.state, status=PROMOTED, promoted_at=now)
            return Rewrite(current, new, related=links or None)

        if not self._rewrite_now(memory, promote):
            return None
        target = self.mover.into(memory.path, self.params.promoted_folder, snapshot)
        if target is None:
            return None
        return Promoted(memory.state.id, memory.path, target, decision.reason, tuple(links))

    def _related_links(self, memory: MemoryNote, snapshot: Snapshot) -> list[str]:
        records = snapshot.records
        all_paths = list(records)
        targets: list[str] = []
        try:
            neighbours = self.index().related(memory.path, self.params.related_links)
        except Exception:
            neighbours = []
        targets += [p for p, _ in neighbours if p != memory.path]
        by_stem = {PurePosixPath(p).stem.casefold(): p for p in all_paths}
        for link in memory.note.links:
            resolved = by_stem.get(PurePosixPath(link.target).name.casefold())
            if resolved and resolved not in targets and resolved != memory.path:
                targets.append(resolved)
        links = []
        for target in filter(self._linkable, targets):
            title = records[target].title if target in records else PurePosixPath(target).stem
            links.append(wikilink(target, all_paths, alias=title))
        return links

    def _linkable(self, path: str) -> bool:
        """A promoted note links to live notes only: not to archived memories (forgotten, or
        merged into another, like the originals of a merged note)."""
        if inside(path, self.params.archive_folder):
            return False
        memory = self.store.try_load(path)
        return memory is None or memory.state.status != ARCHIVED


Moved = TypeVar("Moved", Archived, Promoted)


def _left_alone(memories: Iterable[MemoryNote]) -> tuple[LeftAlone, ...]:
    """Active memories no sweep, gc or promote touches, and why (a read-only note)."""
    return tuple(LeftAlone(m.state.id, m.path, reason) for m in memories
                 if m.state.status == ACTIVE and (reason := unwritable_reason(m)) is not None)


def _done(moves: Iterable[Moved | None]) -> tuple[Moved, ...]:
    """The moves that happened (a memory that changed since the plan is left alone)."""
    return tuple(move for move in moves if move is not None)


def _planned(items: Iterable[SweepItem]) -> tuple[Planned, ...]:
    return tuple(Planned(item.id, item.path, item.decision) for item in items)
