"""Saving a memory that updates another: explicitly (`supersedes`), or detected and proposed.

`Updates.save` wraps `Lifecycle.save`: the memory named by `supersedes` is checked before
anything is written (bad input changes nothing), the new memory is saved through the intake
gate, then the two are linked by the `Superseder`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePosixPath

from vaultmem.core.intake import normalise_tags
from vaultmem.core.memory import ARCHIVED
from vaultmem.core.update_rule import best_update, same_scope, value_change
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.parts import IndexOpener
from vaultmem.engine.results import NoteRef, PossibleUpdate, SaveResult, UpdateProposal
from vaultmem.engine.save_intake import NEAR_SHORTLIST, NEAR_SHORTLIST_MARGIN
from vaultmem.engine.superseder import Superseder
from vaultmem.engine.views import Views
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError
from vaultmem.index.base import Embedder
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import (
    MemoryNote,
    Rewrite,
    content_of,
    normalise_text,
    writable,
)
from vaultmem.store.memory_store import MemoryStore

log = logging.getLogger(__name__)

# the note vectors' shortlist, as for near duplicates (a note vector also carries the title)
SHORTLIST = NEAR_SHORTLIST
SHORTLIST_MARGIN = NEAR_SHORTLIST_MARGIN


@dataclass(frozen=True)
class UpdateParams:
    """When a save is proposed as an update of an existing memory; from Settings."""

    update_cosine: float  # at least this close to an existing memory (and a value differs)
    auto_supersede: bool  # apply a detected update without asking
    memory_folder: str  # where saves go: an untagged memory there is in scope (core.update_rule)


class Updates:
    def __init__(
        self, lifecycle: Lifecycle, superseder: Superseder, params: UpdateParams, *,
        store: MemoryStore, sync: IndexSync, views: Views, index: IndexOpener,
        embedder: Embedder,
    ) -> None:
        self.lifecycle = lifecycle
        self.superseder = superseder
        self.params = params
        self.store = store
        self.sync = sync
        self.views = views
        self.index = index
        self.embedder = embedder

    def save(self, content: str, now: datetime, *, supersedes: str | None = None,
             title: str | None = None, tags: Sequence[str] = (), type: str | None = None,
             strength: float = 1.0, pinned: bool = False, source: str | None = None,
             force: bool = False) -> SaveResult:
        """A save that names the memory it replaces is never held back as a rewording of it
        (Lifecycle does not hold back one that changes a value either: that is an update)."""
        old = self._replaceable(supersedes, content) if supersedes is not None else None
        force = force or old is not None
        answer = self.lifecycle.save(content, now, title=title, tags=tags, type=type,
                                     strength=strength, pinned=pinned, source=source,
                                     force=force)
        if old is not None and answer.memory.id != old.state.id:
            return self._link(answer, old.path, now)
        if old is None and answer.created:
            found = self.detect(content, tags, answer.memory.path)
            if found is not None:
                applied = self.params.auto_supersede
                update = PossibleUpdate(NoteRef.of(self.views.view(found[0], now)), found[1],
                                        found[2], applied=applied)
                answer = (self._link(answer, found[0].path, now) if applied
                          else self._propose(answer, found[0].state.id, now))
                linked = answer.superseded is not None  # False: proposed instead (_link)
                return replace(answer, possible_update_of=replace(update, applied=linked))
        return answer

    def detect(self, content: str, tags: Sequence[str], saved_path: str
               ) -> tuple[MemoryNote, str, float] | None:
        """The live memory `content` most likely updates (core.update_rule), with the reason and
        the cosine of the two texts; None when none does. Like the near-duplicate check, the
        index's note vectors pick a shortlist whose own texts are then embedded."""
        threshold = self.params.update_cosine
        folder = self.params.memory_folder
        scoped = {m.path: m for m in self.store.iter_memories()
                  if m.path != saved_path and m.state.status != ARCHIVED
                  and m.state.superseded_by is None
                  and same_scope(m.state.tags, normalise_tags(tags),
                                 str(PurePosixPath(m.path).parent), folder)}
        if not scoped:
            return None
        query = self.embedder.embed_query(content)
        ranked = sorted(((float(vector @ query), path)
                         for path, vector in self.index().note_vectors(scoped).items()),
                        reverse=True)
        shortlist = [scoped[path] for cosine, path in ranked[:SHORTLIST]
                     if cosine >= threshold - SHORTLIST_MARGIN]
        if not shortlist:
            return None
        texts = [content_of(m) for m in shortlist]
        cosines = self.embedder.embed(texts) @ query
        found = best_update([(m.path, text, float(c))
                             for m, text, c in zip(shortlist, texts, cosines, strict=True)],
                            content, threshold)
        if found is None:
            return None
        path, reason, cosine = found
        return scoped[path], reason, cosine

    def proposals(self, now: datetime, *, limit: int = 20) -> tuple[UpdateProposal, ...]:
        """Detected updates not confirmed or dismissed yet (`stm_possible_update_of`, recorded
        at save), newest first, for review. Read from the notes alone: no model, no index."""
        live = {m.state.id: m for m in self.store.iter_memories()
                if m.state.status != ARCHIVED and m.state.superseded_by is None}
        found = []
        for newer in live.values():
            older = live.get(newer.state.possible_update_of or "")
            if older is None:
                continue  # linked, archived or gone since: nothing to propose
            reason = value_change(content_of(older), content_of(newer))
            found.append((newer.state.created, UpdateProposal(
                old=NoteRef.of(self.views.view(older, now)),
                reason=reason or "proposed when it was saved",
                by=NoteRef.of(self.views.view(newer, now)))))
        found.sort(key=lambda item: (item[0], item[1].by.id), reverse=True)
        return tuple(item for _, item in found[:limit])

    def _propose(self, answer: SaveResult, old_id: str, now: datetime) -> SaveResult:
        """Record the detected update in the new memory's note (`stm_possible_update_of`), so
        review lists it until it is confirmed (supersede) or dismissed (unsupersede).

        The memory is written already: if its user edited or broke the note meanwhile, their
        version stays (the update goes unrecorded) and the save is still answered as saved; an
        error would tell the client that nothing was written, and it would save it again."""
        path = answer.memory.path

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            mine = [m for m in current if m.path == path and writable(m)]
            return [Rewrite(m, replace(m.state, possible_update_of=old_id)) for m in mine]

        try:
            written = self.store.rewrite([path], plan)
        except NoteError as exc:
            log.info("%s: the detected update of %s is not recorded: %s", path, old_id,
                     exc.message)
            return answer
        self.sync.sync_paths([path])
        return replace(answer, memory=self.views.view(written[0], now)) if written else answer

    def _link(self, answer: SaveResult, old_path: str, now: datetime) -> SaveResult:
        """The saved memory supersedes the one at `old_path`. The save is on disk already: when
        the link cannot be made (the user keeps editing the old note; the Superseder took its
        half back), the save is answered as saved, the update proposed for review instead."""
        try:
            linked = self.superseder.supersede(old_path, answer.memory.id, now)
        except ConcurrentEdit as exc:
            log.info("%s: not linked to %s: %s", answer.memory.path, old_path, exc.message)
            old = self.store.try_load(old_path)
            return self._propose(answer, old.state.id, now) if old is not None else answer
        return replace(answer, superseded=NoteRef.of(linked.superseded), memory=linked.by)

    def _replaceable(self, ref: str, content: str) -> MemoryNote:
        """The memory a save names in `supersedes`, checked before anything is written."""
        old = self.store.load(ref)
        if old.state.superseded_by is not None:
            raise InvalidInput(f"memory {old.state.id} is already superseded by "
                               f"{old.state.superseded_by}; supersede the current one")
        if normalise_text(content_of(old)) == normalise_text(content):
            raise InvalidInput(f"the new text is the text of {old.path}: nothing to update")
        return old

