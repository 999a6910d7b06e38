"""Saving, forgetting (archive) and promotion: plan with the pure core, then apply to the vault.

Order of writes keeps every crash harmless: a note's new state is written (guarded) in place
first, then the file is moved; an interrupted move is finished by the next sweep
(`finish_moves`), so a note is never lost and never duplicated.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from vaultmem.core.decisions import Decision
from vaultmem.core.intake import (
    check_content,
    find_secret,
    normalise_tags,
    numbers_agree,
    secret_reason,
)
from vaultmem.core.memory import (
    ACTIVE,
    ARCHIVED,
    MEMORY_TYPES,
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
from vaultmem.engine.results import (
    Archived,
    GcResult,
    LeftAlone,
    Move,
    Planned,
    Promoted,
    PromoteResult,
    Reinforced,
    SaveResult,
    Similar,
    SweepResult,
)
from vaultmem.engine.views import Views
from vaultmem.errors import InvalidInput, Refused
from vaultmem.index.base import Embedder, Vector
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import (
    MemoryNote,
    Rewrite,
    content_of,
    normalise_text,
    unwritable_reason,
    writable,
)
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.memories import create_memory_note, wikilink
from vaultmem.vault.notes import parse_note

# Near duplicates: how many of the closest note vectors are re-checked on their own text, and
# how far below the threshold a note vector may be and still be re-checked (a note vector
# also carries the note's title, so it reads a little lower than the text alone).
NEAR_SHORTLIST = 5
NEAR_SHORTLIST_MARGIN = 0.25


@dataclass(frozen=True)
class Closest:
    """A live memory near a save: the cosine with its remembered text, and the similarity
    (the higher of that and the cosine with its title)."""

    memory: MemoryNote
    text_cosine: float
    similarity: float


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
        self._check_content(content, title=title, tags=tags, source=source, type=type,
                            strength=strength)
        clean_tags = normalise_tags(tags)
        query = self.embedder.embed_query(content)  # may load a model
        live = [m for m in self.store.iter_memories() if m.state.status != ARCHIVED]
        duplicate = _exact_duplicate(content, live)
        if duplicate is not None:
            return self._reinforce_instead(duplicate, now, "an identical memory exists")
        closest = self._closest(content, query, live)
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
            title=(title or _title_from(content)).strip(), body=content,
            stm_fields=state_to_fields(state), tags=clean_tags)
        self.sync.sync_paths([path])
        # Answer with what was written: re-reading the note could fail (404) when its user
        # has already moved it, and a client would then save the memory again.
        note = parse_note(path, text.encode("utf-8"))
        written = MemoryNote(path, note, state_from_fields(note.fields, tags=note.tags), text)
        return SaveResult(created=True, memory=self.views.view(written, now))

    def _check_content(
        self, content: str, *, title: str | None, tags: Sequence[str], source: str | None,
        type: str | None, strength: float,
    ) -> None:
        reason = check_content(content, min_chars=self.params.min_content_chars,
                               max_chars=self.params.max_content_chars)
        if reason is not None:
            raise Refused(reason)
        for what, text in (("title", title), ("source", source), ("tag", " ".join(tags))):
            kind = find_secret(text) if text else None
            if kind is not None:
                raise Refused(secret_reason(what, kind))
        if type is not None and type not in MEMORY_TYPES:
            kinds = ", ".join(MEMORY_TYPES)
            raise InvalidInput(f"unknown memory type {type!r}: use one of {kinds}")
        if not 0.0 <= strength <= 2.0:
            raise InvalidInput("strength must be between 0 and 2")

    def _closest(self, content: str, query: Vector, live: Sequence[MemoryNote]
                 ) -> Closest | None:
        """The live memory closest to `content` (same numbers). The index's note vectors
        (title and heading included) pick a shortlist; the shortlist's remembered texts and
        titles are then embedded and compared like for like."""
        lowest = min(self.params.near_duplicate_cosine, self.params.similar_memory_cosine)
        by_path = {m.path: m for m in live}
        if not by_path:
            return None
        ranked = sorted(((float(vector @ query), path)
                         for path, vector in self.index().note_vectors(by_path).items()),
                        reverse=True)
        shortlist = [by_path[path] for cosine, path in ranked[:NEAR_SHORTLIST]
                     if cosine >= lowest - NEAR_SHORTLIST_MARGIN
                     and numbers_agree(content, content_of(by_path[path]))]
        if not shortlist:
            return None
        texts = [content_of(m) for m in shortlist] + [m.note.title for m in shortlist]
        cosines = self.embedder.embed(texts) @ query
        count = len(shortlist)
        found = [Closest(m, float(cosines[i]), max(float(cosines[i]), float(cosines[count + i])))
                 for i, m in enumerate(shortlist)]
        return max(found, key=lambda c: (c.text_cosine >= self.params.near_duplicate_cosine,
                                         c.similarity, c.text_cosine))

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


def _exact_duplicate(content: str, live: Sequence[MemoryNote]) -> MemoryNote | None:
    """The live memory whose remembered text, or whose title, is `content` (normalised)."""
    wanted = normalise_text(content)
    same_text = (m for m in live if normalise_text(content_of(m)) == wanted)
    same_title = (m for m in live if normalise_text(m.note.title) == wanted)
    return next(same_text, None) or next(same_title, None)


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
TITLE_MAX = 200  # past this a first sentence is cut at a word, with an ellipsis


def _title_from(content: str) -> str:
    """A memory's title: the first sentence of its first line, whole (a title cut mid-sentence
    reads as a different fact); only a sentence longer than TITLE_MAX is shortened."""
    first = " ".join(content.strip().splitlines()[0].lstrip("#").split())
    sentence = _SENTENCE_END.split(first, maxsplit=1)[0].rstrip()
    if len(sentence) <= TITLE_MAX:
        return sentence[:-1] if sentence.endswith(".") and not sentence.endswith("..") \
            else sentence
    return sentence[:TITLE_MAX].rsplit(" ", 1)[0].rstrip(",;:") + "…"
