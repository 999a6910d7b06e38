"""Looking after single memories on request: list them, forget one now, edit one.

* `list_memories`: every memory with its status, score and decision, filtered (status, tags,
  type, decision) and sorted; the same memory view as `get`.
* `forget`: archive one memory now, as a sweep would when it fades out: `stm_status: archived`
  written in place (guarded), then the note moves into the archive folder (never
  overwriting). Its history is kept; `restore` brings it back. Pinned memories are refused
  (unpin first), as the sweep never archives them either.
* `edit`: a memory's own words - its remembered text, its `# Title` line, its tags - changed
  through the same intake gate as a save (a secret is refused and written nowhere), in one
  guarded write that keeps every other byte (the stm_* lines, the user's other properties,
  vaultmem's sections); not a use. The file keeps its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from vaultmem.core.intake import (
    check_content,
    find_secret,
    normalise_tags,
    secret_reason,
    tag_key,
)
from vaultmem.core.memory import ACTIVE, ARCHIVED, PROMOTED
from vaultmem.engine.filters import tag_keys
from vaultmem.engine.moves import Mover
from vaultmem.engine.parts import EngineParams
from vaultmem.engine.results import EditResult, ForgetResult, ListResult, MemoryView
from vaultmem.engine.upkeep_results import Move
from vaultmem.engine.views import Views
from vaultmem.errors import InvalidInput, NoteError, Refused
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote, Rewrite, check_writable
from vaultmem.store.memory_store import MemoryStore
from vaultmem.vault.memory_text import replace_text, set_tags, set_title

# sort key -> (the view's field, descending)
SORTS: dict[str, tuple[str, bool]] = {
    "score": ("score", True), "last_used": ("last_used", True), "created": ("created", True),
    "use_count": ("use_count", True), "title": ("title", False),
}
DECISIONS = ("keep", "forget", "promote")


@dataclass(frozen=True)
class ListFilters:
    statuses: tuple[str, ...] = (ACTIVE, PROMOTED)
    tags_any: tuple[str, ...] = ()
    type: str | None = None
    decision: str | None = None
    pinned: bool | None = None


class MemoryAdmin:
    def __init__(self, *, store: MemoryStore, sync: IndexSync, views: Views, mover: Mover,
                 params: EngineParams) -> None:
        self.store = store
        self.sync = sync
        self.views = views
        self.mover = mover
        self.params = params

    def list_memories(self, now: datetime, filters: ListFilters = ListFilters(), *,
                      sort: str = "score", limit: int = 100) -> ListResult:
        """The memories that pass `filters`, sorted by `sort`, at most `limit` of them, and
        how many passed in all."""
        if sort not in SORTS:
            raise InvalidInput(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
        wanted = {tag_key(t) for t in filters.tags_any}
        views = []
        for memory in self.store.iter_memories():
            state = memory.state
            if state.status not in filters.statuses:
                continue
            if filters.type is not None and state.type != filters.type:
                continue
            if filters.pinned is not None and state.pinned != filters.pinned:
                continue
            if wanted and not wanted & tag_keys(state.tags):
                continue
            view = self.views.view(memory, now)
            if filters.decision is None or view.decision.action == filters.decision:
                views.append(view)
        views.sort(key=lambda v: v.path)
        field, descending = SORTS[sort]
        views.sort(key=lambda v: _sort_key(_sort_value(v, field)), reverse=descending)
        return ListResult(memories=tuple(views[:limit]), total=len(views))

    def forget(self, ref: str, now: datetime) -> ForgetResult:
        """Archive one active or promoted memory now (see the module docstring)."""
        memories = self.store

        def plan(current: Sequence[MemoryNote]) -> list[Rewrite]:
            memory = current[0]
            if memory.state.status == ARCHIVED:
                raise InvalidInput(f"{memory.path} is already archived: `restore` brings it "
                                   "back")
            if memory.state.pinned:
                raise InvalidInput(f"{memory.path} is pinned, so it is never forgotten: unpin "
                                   "it first")
            check_writable(memory)
            return [Rewrite(memory, replace(memory.state, status=ARCHIVED))]

        [memory] = memories.rewrite([memories.resolve(ref)], plan, strict=True)
        target = self.mover.to_archive(memory.path)
        if target is None:
            raise NoteError(f"{memory.path} was moved or deleted while it was forgotten; its "
                            "state says archived, and the next sweep moves it")
        if target == memory.path:
            self.sync.sync_paths([target])
        forgotten = memories.load(target)
        return ForgetResult(forgotten=Move(forgotten.state.id, memory.path, target),
                            memory=self.views.view(forgotten, now))

    def edit(self, ref: str, now: datetime, *, content: str | None = None,
             title: str | None = None, tags: Sequence[str] | None = None) -> EditResult:
        """Change a memory's text, title and/or tags (see the module docstring)."""
        if content is None and title is None and tags is None:
            raise InvalidInput("give the new text, title or tags")
        content = None if content is None else content.strip()
        clean_tags = None if tags is None else normalise_tags(tags)
        self._check(content, title, tags)

        def change(memory: MemoryNote) -> str:
            text = memory.text
            if content is not None:
                text = replace_text(text, content)
            if title is not None:
                text = set_title(text, title)
            if clean_tags is not None:
                text = set_tags(text, clean_tags)
            return text

        edited = self.store.rewrite_text(ref, change)
        self.sync.sync_paths([edited.path])
        changed = tuple(name for name, value in (("text", content), ("title", title),
                                                 ("tags", tags)) if value is not None)
        return EditResult(id=edited.state.id, path=edited.path, changed=changed,
                          memory=self.views.view(edited, now))

    def _check(self, content: str | None, title: str | None,
               tags: Sequence[str] | None) -> None:
        """The save's intake gate: refused words are written nowhere."""
        if content is not None:
            reason = check_content(content, min_chars=self.params.min_content_chars,
                                   max_chars=self.params.max_content_chars)
            if reason is not None:
                raise Refused(reason)
        for what, text in (("title", title), ("tag", " ".join(tags or ()))):
            kind = find_secret(text) if text else None
            if kind is not None:
                raise Refused(secret_reason(what, kind))


def _sort_value(view: MemoryView, field: str) -> str | float | None:
    """The value a list sorts by, as the answer shows it (rounded score, dates in ISO form)."""
    if field == "score":
        return round(view.score, 6)
    if field == "title":
        return view.title
    if field == "use_count":
        return view.state.use_count
    when = view.state.last_used if field == "last_used" else view.state.created
    return when.isoformat(timespec="seconds") if when is not None else None


def _sort_key(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value
