"""A newer memory supersedes a stale one: the links, the checks, and search's preference.

The stale memory keeps its note and history and gains `stm_superseded_by: <new id>`; its
successor gains `stm_supersedes: <old id>`. A superseded memory fades like a forgotten one and
is never promoted (`core.decisions`); restoring it or `unsupersede` drops both links.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from .memory import ARCHIVED, MemoryState


class SupersedeRefused(ValueError):
    """Why these two memories cannot be linked (the message is for the user)."""


def check_supersede(old: MemoryState, new: MemoryState) -> None:
    """Raise SupersedeRefused unless `new` may supersede `old` now."""
    if old.id == new.id:
        raise SupersedeRefused("a memory cannot supersede itself")
    if old.superseded_by == new.id and new.supersedes == old.id:
        return  # already linked: applying it again changes nothing
    if old.superseded_by is not None:
        raise SupersedeRefused(f"memory {old.id} is already superseded by "
                               f"{old.superseded_by}; unsupersede it first")
    if new.supersedes is not None and new.supersedes != old.id:  # == : a half-written link
        raise SupersedeRefused(f"memory {new.id} already supersedes {new.supersedes}; "
                               "unsupersede that first")
    if new.superseded_by is not None:
        raise SupersedeRefused(f"memory {new.id} is itself superseded by "
                               f"{new.superseded_by}: supersede with the current one")
    if new.status == ARCHIVED:
        raise SupersedeRefused(f"memory {new.id} is archived: restore it before it can "
                               "supersede another")
    if old.supersedes == new.id:
        raise SupersedeRefused(f"memory {old.id} supersedes {new.id}: a memory cannot "
                               "supersede its own successor")


def supersede(old: MemoryState, new: MemoryState) -> tuple[MemoryState, MemoryState]:
    """The two states linked (checked first)."""
    check_supersede(old, new)
    return (replace(old, superseded_by=new.id),
            replace(new, supersedes=old.id, possible_update_of=None))  # confirmed: no longer


def dismissed(state: MemoryState) -> MemoryState:
    """`state` without its proposed update (the user said it is not one)."""
    return replace(state, possible_update_of=None)


def released(stale: MemoryState) -> MemoryState:
    """The superseded memory current again (unsupersede, restore): its successor link gone."""
    return replace(stale, superseded_by=None)


def forget_predecessor(successor: MemoryState, stale_id: str) -> MemoryState:
    """The successor's side of `released`: its `stm_supersedes` dropped when it names
    `stale_id` (a link to another memory stays)."""
    return successor if successor.supersedes != stale_id else replace(successor, supersedes=None)


T = TypeVar("T")


def prefer_successors(ranked: Sequence[T], path_of: Callable[[T], str],
                      successor: Mapping[str, str]) -> list[T]:
    """`ranked` (best first) with every superseded item moved just below its successor when
    both are listed and the successor ranks lower; nothing else moves.

    `path_of` gives an item's path; `successor` maps a superseded memory's path to its
    successor's path. Chains (A superseded by B superseded by C) end with C first.
    """
    order = list(range(len(ranked)))
    paths = [path_of(item) for item in ranked]
    for _ in range(len(order)):  # each pass settles at least one item; chains need several
        moved = False
        for stale, newer in successor.items():
            if stale not in paths or newer not in paths:
                continue
            s, n = paths.index(stale), paths.index(newer)
            if s < n:
                item = order.pop(s)
                paths.pop(s)
                order.insert(n, item)  # n shifted by one: this is just below the successor
                paths.insert(n, stale)
                moved = True
        if not moved:
            break
    return [ranked[i] for i in order]
