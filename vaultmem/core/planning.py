"""Plans computed from plain values: index sync (disk vs index) and lifecycle sweeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .decay import DecayParams
from .decisions import FORGET, PROMOTE, Decision, Policy, decide, plan_cap
from .memory import ACTIVE, MemoryState


@dataclass(frozen=True)
class Fingerprint:
    body_hash: str
    file_hash: str


@dataclass(frozen=True)
class SyncPlan:
    adds: tuple[str, ...]
    changes: tuple[str, ...]
    meta_changes: tuple[str, ...]
    moves: tuple[tuple[str, str], ...]
    deletes: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not (self.adds or self.changes or self.meta_changes or self.moves or self.deletes)


def plan_sync(disk: Mapping[str, Fingerprint], index: Mapping[str, Fingerprint]) -> SyncPlan:
    """What to do so the index matches the disk.

    changes: body changed (re-chunk, re-embed); meta_changes: only the file changed (metadata);
    moves: (old, new) with the same body, old gone from disk and new not indexed yet — a move
    whose file hash also changed is listed in meta_changes under its new path.
    """
    changes, meta_changes = [], []
    for path in disk.keys() & index.keys():
        if disk[path].body_hash != index[path].body_hash:
            changes.append(path)
        elif disk[path].file_hash != index[path].file_hash:
            meta_changes.append(path)
    new_paths = sorted(disk.keys() - index.keys())
    gone_paths = sorted(index.keys() - disk.keys())
    moves = _pair_moves(new_paths, gone_paths, disk, index)
    moved_new = {new for _, new in moves}
    moved_old = {old for old, _ in moves}
    meta_changes += [new for old, new in moves if disk[new].file_hash != index[old].file_hash]
    return SyncPlan(
        adds=tuple(path for path in new_paths if path not in moved_new),
        changes=tuple(sorted(changes)),
        meta_changes=tuple(sorted(meta_changes)),
        moves=tuple(sorted(moves)),
        deletes=tuple(path for path in gone_paths if path not in moved_old),
    )


def _pair_moves(
    new_paths: Sequence[str],
    gone_paths: Sequence[str],
    disk: Mapping[str, Fingerprint],
    index: Mapping[str, Fingerprint],
) -> list[tuple[str, str]]:
    """Pair new and vanished paths: identical files first, then identical bodies, in path order."""
    pairs: list[tuple[str, str]] = []
    used_old: set[str] = set()
    paired_new: set[str] = set()
    for same_file in (True, False):
        available: dict[str, list[str]] = {}
        for old in gone_paths:
            if old not in used_old:
                available.setdefault(_move_key(index[old], same_file), []).append(old)
        for new in new_paths:
            olds = available.get(_move_key(disk[new], same_file))
            if new in paired_new or not olds:
                continue
            old = olds.pop(0)
            pairs.append((old, new))
            used_old.add(old)
            paired_new.add(new)
    return pairs


def _move_key(fingerprint: Fingerprint, same_file: bool) -> str:
    if same_file:
        return f"{fingerprint.body_hash}\0{fingerprint.file_hash}"
    return fingerprint.body_hash


@dataclass(frozen=True)
class SweepItem:
    path: str
    id: str
    decision: Decision


@dataclass(frozen=True)
class SweepPlan:
    promote: tuple[SweepItem, ...]
    archive: tuple[SweepItem, ...]
    keep: tuple[SweepItem, ...]


def plan_sweep(
    memories: Sequence[tuple[str, MemoryState]],
    now: datetime,
    decay: DecayParams,
    policy: Policy,
) -> SweepPlan:
    """Decide every active memory, then archive the lowest scorers above the cap.

    Items are ordered by path; memories that are not active are left out.
    """
    active = sorted(
        ((path, state) for path, state in memories if state.status == ACTIVE),
        key=lambda pair: (pair[0], pair[1].id),
    )
    items = [SweepItem(path, state.id, decide(state, now, decay, policy)) for path, state in active]
    promote = [item for item in items if item.decision.action == PROMOTE]
    archive = [item for item in items if item.decision.action == FORGET]
    leaving = {item.id for item in promote + archive}
    capped = dict(plan_cap([state for _, state in active], now, decay, policy, exclude=leaving))
    for item in items:
        if item.id in capped and item.id not in leaving:
            reason = capped[item.id]
            archive.append(
                SweepItem(item.path, item.id, Decision(FORGET, reason, item.decision.score))
            )
    keep = [
        item
        for item in items
        if item.decision.action not in (PROMOTE, FORGET) and item.id not in capped
    ]
    return SweepPlan(
        promote=tuple(promote),
        archive=tuple(sorted(archive, key=lambda item: item.path)),
        keep=tuple(keep),
    )
