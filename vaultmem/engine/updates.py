"""Saving a memory that updates another: explicitly (`supersedes`), or detected and proposed.

`Updates.save` wraps `Lifecycle.save`: the memory named by `supersedes` is checked before
anything is written (bad input changes nothing), the new memory is saved through the intake
gate, then the two are linked by the `Superseder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from vaultmem.engine.lifecycle import Lifecycle, _content_of, normalise_text
from vaultmem.engine.memory_notes import MemoryNote
from vaultmem.engine.shapes import JSON
from vaultmem.engine.supersede import Superseder
from vaultmem.errors import InvalidInput


@dataclass(frozen=True)
class UpdateParams:
    """When a save is proposed as an update of an existing memory; from Settings."""

    update_cosine: float  # at least this close to an existing memory (and a value differs)
    auto_supersede: bool  # apply a detected update without asking


class Updates:
    def __init__(self, lifecycle: Lifecycle, superseder: Superseder,
                 params: UpdateParams) -> None:
        self.lifecycle = lifecycle
        self.engine = lifecycle.engine
        self.superseder = superseder
        self.params = params

    def save(self, content: str, now: datetime, *, supersedes: str | None = None,
             title: str | None = None, tags: Sequence[str] = (), type: str | None = None,
             strength: float = 1.0, pinned: bool = False, source: str | None = None) -> JSON:
        old = self._replaceable(supersedes, content) if supersedes is not None else None
        answer = self.lifecycle.save(content, now, title=title, tags=tags, type=type,
                                     strength=strength, pinned=pinned, source=source)
        answer["superseded"] = None
        answer["possible_update_of"] = None
        saved_id = answer["memory"]["id"]
        if old is not None and saved_id != old.state.id:
            linked = self.superseder.supersede(old.path, saved_id, now)
            answer["superseded"] = _brief(linked["superseded"])
            answer["memory"] = linked["by"]
        return answer

    def _replaceable(self, ref: str, content: str) -> MemoryNote:
        """The memory a save names in `supersedes`, checked before anything is written."""
        old = self.engine.memories.load(ref)
        if old.state.superseded_by is not None:
            raise InvalidInput(f"memory {old.state.id} is already superseded by "
                               f"{old.state.superseded_by}; supersede the current one")
        if normalise_text(_content_of(old)) == normalise_text(content):
            raise InvalidInput(f"the new text is the text of {old.path}: nothing to update")
        return old


def _brief(view: JSON) -> JSON:
    return {"id": view["id"], "path": view["path"], "title": view["title"],
            "uri": view["uri"]}
