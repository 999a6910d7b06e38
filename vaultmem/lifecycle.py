"""Saving, forgetting (archive) and promotion: plan with the pure core, then apply to the vault.

Order of writes keeps every crash harmless: a note's new state is written (guarded) in place
first, then the file is moved; an interrupted move is finished by the next sweep
(`finish_moves`), so a note is never lost and never duplicated.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from vaultmem.core.decisions import Decision
from vaultmem.core.memory import (
    ACTIVE,
    ARCHIVED,
    MEMORY_TYPES,
    PROMOTED,
    MemoryState,
    new_state,
    state_to_fields,
)
from vaultmem.core.planning import SweepItem, plan_sweep
from vaultmem.core.reinforce import touch
from vaultmem.errors import InvalidInput, Refused
from vaultmem.memories import MemoryNote
from vaultmem.protocol import JSON
from vaultmem.service import Engine
from vaultmem.vault.frontmatter import splice_stm
from vaultmem.vault.memories import create_memory_note, set_related_section, wikilink
from vaultmem.vault.writes import guarded_write, move_file, sha256_bytes

_SPACES = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


class Lifecycle:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.params = engine.params

    # save ---------------------------------------------------------------------------------

    def save(
        self, content: str, now: datetime, *, title: str | None = None,
        tags: Sequence[str] = (), type: str | None = None, strength: float = 1.0,
        pinned: bool = False, source: str | None = None,
    ) -> JSON:
        content = content.strip()
        self._check_content(content, type, strength)
        with self.engine.memories.lock:
            duplicate = self._exact_duplicate(content)
            if duplicate is not None:
                return self._reinforce_instead(duplicate, now, "an identical memory exists")
            state = new_state(str(uuid.uuid4()), now, strength=strength, type=type,
                              pinned=pinned, source=source, tags=tuple(tags))
            title = (title or _title_from(content)).strip()
            path = create_memory_note(
                self.engine.root, self.params.memory_folder, day=now.date(), title=title,
                body=content, stm_fields=state_to_fields(state), tags=_clean_tags(tags),
            )
        self.engine.sync_paths([path])
        view = self.engine.get(path, now)
        return {"created": True, "reinforced": None, "memory": view}

    def _check_content(self, content: str, type: str | None, strength: float) -> None:
        if len(content) < self.params.min_content_chars:
            raise Refused(
                f"content too short to remember ({len(content)} characters; "
                f"at least {self.params.min_content_chars})"
            )
        if len(content) > self.params.max_content_chars:
            raise Refused(
                f"content too long for one memory ({len(content)} characters; at most "
                f"{self.params.max_content_chars}): save it as a regular note instead"
            )
        if type is not None and type not in MEMORY_TYPES:
            kinds = ", ".join(MEMORY_TYPES)
            raise InvalidInput(f"unknown memory type {type!r}: use one of {kinds}")
        if not 0.0 <= strength <= 2.0:
            raise InvalidInput("strength must be between 0 and 2")

    def _exact_duplicate(self, content: str) -> MemoryNote | None:
        wanted = normalise_text(content)
        for memory in self.engine.memories.iter_memories():
            if memory.state.status == ARCHIVED:
                continue
            if normalise_text(_content_of(memory)) == wanted:
                return memory
        return None

    def _reinforce_instead(self, memory: MemoryNote, now: datetime, why: str) -> JSON:
        new = touch(memory.state, now, self.params.reinforce)
        updated = self.engine.memories.write_state(memory, new)
        view = self.engine.view(updated, now)
        return {"created": False, "reinforced": {"id": memory.state.id, "reason": why},
                "memory": view}

    # sweep: forget and promote ------------------------------------------------------------

    def plan(self, now: datetime) -> tuple[list[MemoryNote], Any]:
        memories = [m for m in self.engine.memories.iter_memories()]
        active = [(m.path, m.state) for m in memories if m.state.status == ACTIVE]
        return memories, plan_sweep(active, now, self.params.decay, self.params.policy)

    def gc(self, now: datetime, *, apply: bool = False) -> JSON:
        memories, plan = self.plan(now)
        by_path = {m.path: m for m in memories}
        done = [self._archive(by_path[item.path], item.decision, now)
                for item in (plan.archive if apply else ())]
        return {
            "dry_run": not apply,
            "archive": [_item_json(item) for item in plan.archive],
            "archived": done,
            "kept": len(plan.keep) + len(plan.promote),
        }

    def promote(self, ref: str | None, now: datetime, *, dry_run: bool = False) -> JSON:
        if ref is not None:
            memory = self.engine.memories.load(ref)
            if memory.state.status != ACTIVE:
                raise InvalidInput(f"{memory.path} is {memory.state.status}, not active")
            decision = Decision("promote", "promoted on request", 0.0)
            items = [SweepItem(memory.path, memory.state.id, decision)]
            by_path = {memory.path: memory}
        else:
            memories, plan = self.plan(now)
            items = list(plan.promote)
            by_path = {m.path: m for m in memories}
        done = [] if dry_run else [self._promote(by_path[i.path], i.decision, now) for i in items]
        return {"dry_run": dry_run, "promote": [_item_json(i) for i in items], "promoted": done}

    def sweep(self, now: datetime, *, dry_run: bool = True) -> JSON:
        """Forget and promote together (the scheduled job), after finishing interrupted moves."""
        finished = [] if dry_run else self.finish_moves()
        memories, plan = self.plan(now)
        by_path = {m.path: m for m in memories}
        archived = [] if dry_run else [
            self._archive(by_path[i.path], i.decision, now) for i in plan.archive]
        promoted = [] if dry_run else [
            self._promote(by_path[i.path], i.decision, now) for i in plan.promote]
        return {
            "dry_run": dry_run,
            "archive": [_item_json(i) for i in plan.archive],
            "promote": [_item_json(i) for i in plan.promote],
            "keep": len(plan.keep),
            "archived": archived, "promoted": promoted, "finished_moves": finished,
        }

    def finish_moves(self) -> list[JSON]:
        """Archived or promoted memories still outside their folder (a crash between the
        state write and the move) are moved now."""
        done = []
        for memory in self.engine.memories.iter_memories():
            folder = {ARCHIVED: self.params.archive_folder,
                      PROMOTED: self.params.promoted_folder}.get(memory.state.status)
            if folder and not _inside(memory.path, folder):
                done.append({"id": memory.state.id, "from": memory.path,
                             "to": self._move(memory.path, folder)})
        return done

    # applying -----------------------------------------------------------------------------

    def _archive(self, memory: MemoryNote, decision: Decision, now: datetime) -> JSON:
        new = _with(memory.state, status=ARCHIVED)
        self.engine.memories.write_state_now(memory, new)
        target = self._move(memory.path, self.params.archive_folder)
        return {"id": memory.state.id, "from": memory.path, "to": target,
                "reason": decision.reason}

    def _promote(self, memory: MemoryNote, decision: Decision, now: datetime) -> JSON:
        links = self._related_links(memory)
        new = _with(memory.state, status=PROMOTED, promoted_at=now)
        full = self.engine.root / memory.path
        with self.engine.memories.lock:
            raw = full.read_bytes()
            if sha256_bytes(raw) != memory.note.file_hash:
                memory = self.engine.memories.load(memory.path)
                raw = full.read_bytes()
            text = raw.decode("utf-8")
            text = splice_stm(text, self.engine.memories.file_updates(memory, new))
            if links:
                text = set_related_section(text, links)
            guarded_write(full, text.encode("utf-8"), sha256_bytes(raw))
            self.engine.memories.written(memory.state.id)
        target = self._move(memory.path, self.params.promoted_folder)
        return {"id": memory.state.id, "from": memory.path, "to": target,
                "reason": decision.reason, "links": links}

    def _related_links(self, memory: MemoryNote) -> list[str]:
        records = self.engine.catalog.records()
        all_paths = list(records)
        targets: list[str] = []
        try:
            neighbours = self.engine._index().related(memory.path, self.params.related_links)
        except Exception:
            neighbours = []
        targets += [p for p, _ in neighbours if p != memory.path]
        by_stem = {PurePosixPath(p).stem.casefold(): p for p in all_paths}
        for link in memory.note.links:
            resolved = by_stem.get(PurePosixPath(link.target).name.casefold())
            if resolved and resolved not in targets and resolved != memory.path:
                targets.append(resolved)
        links = []
        for target in targets:
            title = records[target].title if target in records else PurePosixPath(target).stem
            links.append(wikilink(target, all_paths, alias=title))
        return links

    def move_to_archive(self, path: str) -> str:
        """Move a note whose state already says archived into the archive folder (never
        overwriting; the index follows). Returns its new vault-relative path."""
        return self._move(path, self.params.archive_folder)

    def _move(self, path: str, folder: str) -> str:
        name = PurePosixPath(path).name
        target = _free_path(self.engine.root, folder, name)
        move_file(self.engine.root / path, self.engine.root / target)
        self.engine.sync_paths([path, target])
        return target


def _free_path(root: Path, folder: str, name: str) -> str:
    stem, suffix = name[:-3], name[-3:]
    candidate = f"{folder}/{name}"
    n = 2
    while (root / candidate).exists():
        candidate = f"{folder}/{stem} {n}{suffix}"
        n += 1
    return candidate


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.strip("/") + "/")


def _with(state: MemoryState, **changes: Any) -> MemoryState:
    return replace(state, **changes)


def _item_json(item: SweepItem) -> JSON:
    return {"id": item.id, "path": item.path, "decision": item.decision.action,
            "reason": item.decision.reason, "score": round(item.decision.score, 6)}


def _title_from(content: str) -> str:
    first = content.strip().splitlines()[0].lstrip("#").strip()
    words = first.split()
    title = " ".join(words[:8])
    return title if len(words) <= 8 else title + "…"


def _clean_tags(tags: Sequence[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        clean = tag.strip().lstrip("#").replace(" ", "-")
        if clean and clean.casefold() not in {t.casefold() for t in out}:
            out.append(clean)
    return out


def _content_of(memory: MemoryNote) -> str:
    """The remembered text: the body without its leading `# Title` line and Related section."""
    body = memory.note.body
    body = re.sub(r"<!-- vaultmem:related -->.*?<!-- /vaultmem:related -->", "", body, flags=re.S)
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines)
