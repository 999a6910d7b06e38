"""Vaults that sync between devices: conflict copies, duplicate ids and merging two states.

Pure decisions only (no files, no clock):

* `conflict_kind` / `conflict_original`: does a note's name look like a copy a sync tool made
  when both devices changed it (Syncthing, Dropbox, OneDrive, Google Drive, iCloud, Obsidian
  Sync)?
* `canonical_order`: which of several notes carrying one `stm_id` is *the* memory.
* Use counting that survives sync. `use_count` is split into a shared part and one counter per
  device (`stm_uses_by`); each device only ever raises its own counter (`credit_uses`). Two
  copies of a memory then merge like a grow-only counter: per device the larger count, the
  shared part the larger one. That merge is commutative, associative and idempotent, so it can
  run on either device, twice, or on a copy of a copy, and no use is lost or counted twice.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date

from .memory import ACTIVE, ARCHIVED, PROMOTED, MemoryState

# Names a sync tool gives the copy it keeps when both sides changed a file (the stem, without
# `.md`). Strict forms are unmistakable; loose forms (` (1)`, ` 2`, `-DEVICE`) are ordinary
# names too, so they only count when a note with the same id has the name without the suffix.
_STRICT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("syncthing", re.compile(r"^(?P<stem>.+)\.sync-conflict-\d{8}-\d{6}(?:-[A-Z0-9]{7})?$")),
    ("obsidian-sync", re.compile(
        r"^(?P<stem>.+?) \(conflicted copy [^()]*?\d{12}\)$", re.I)),
    ("dropbox", re.compile(
        r"^(?P<stem>.+?) \((?:[^()]*?'s )?conflicted copy(?: [^()]*)?\)(?: \(\d+\))?$", re.I)),
)
_LOOSE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("google-drive", re.compile(r"^(?P<stem>.+?) \(\d{1,3}\)$")),
    ("icloud", re.compile(r"^(?P<stem>.+?) \d{1,3}$")),
    ("onedrive", re.compile(r"^(?P<stem>.+?)-[A-Za-z0-9][A-Za-z0-9_-]{0,30}$")),
)
GIT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")
STATUS_RANK = {ARCHIVED: 0, ACTIVE: 1, PROMOTED: 2}


def conflict_kind(path: str, siblings: Iterable[str] = ()) -> str | None:
    """The sync tool whose conflict-copy name `path` has, or None. A loose form (` (1)`,
    ` 2`, `-DEVICE`) only counts when one of `siblings` (paths carrying the same memory id)
    is named without it."""
    stem = _stem(path)
    if stem is None:
        return None
    for kind, pattern in _STRICT:
        if pattern.match(stem):
            return kind
    stems = {(_stem(s) or "").casefold() for s in siblings if s != path}
    for kind, pattern in _LOOSE:
        match = pattern.match(stem)
        if match and match.group("stem").casefold() in stems:
            return kind
    return None


def conflict_original(path: str) -> str | None:
    """The name the original of a strict conflict copy has (same folder), or None."""
    folder, _, name = path.rpartition("/")
    stem = _stem(name)
    for _, pattern in _STRICT:
        match = pattern.match(stem or "")
        if match:
            original = match.group("stem") + name[-3:]
            return f"{folder}/{original}" if folder else original
    return None


def _stem(path: str) -> str | None:
    """The file name without `.md`, or None when it is not a Markdown note."""
    name = path.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") and len(name) > 3 else None


def has_git_markers(frontmatter_text: str) -> bool:
    """True when a note's frontmatter holds git merge-conflict markers."""
    lines = frontmatter_text.splitlines()
    return any(line.startswith("<<<<<<< ") or line == "<<<<<<<" for line in lines) and any(
        line.startswith(">>>>>>> ") or line == ">>>>>>>" for line in lines)


def canonical_order(paths: Sequence[str], archive_folder: str = "") -> list[str]:
    """Paths carrying one memory id, the canonical note first: a name that is not a conflict
    copy's, then outside the archive folder, then the shorter name, then the path's order.
    Depends on the paths only, so every device picks the same note."""
    folder = archive_folder.strip("/") + "/" if archive_folder.strip("/") else None

    def key(path: str) -> tuple[bool, bool, int, str]:
        archived = folder is not None and path.startswith(folder)
        copy = conflict_kind(path, paths) is not None
        return (copy, archived, len(path.rpartition("/")[2]), path)

    return sorted(set(paths), key=key)


# counting uses per device ----------------------------------------------------------------------


def shared_uses(state: MemoryState) -> int:
    """The uses not attributed to a device (the save, and uses from before device counts)."""
    return max(0, state.use_count - sum(count for _, count in state.uses_by))


def credit_uses(
    old: MemoryState, new: MemoryState, device: str, known: int = 0
) -> MemoryState:
    """`new` (computed from `old` on this device) with the uses it added credited to `device`,
    so that a later merge with another device's copy counts them exactly once.

    `known` is the highest count this device ever credited itself for this memory (its
    ledger): the note may show an older count when sync replaced it with another device's
    version while this device's latest count sits in a conflict copy. The new uses continue
    from the higher of the two, so no two uses ever carry the same number; the uses the note
    did not show yet are counted in it now (the copy, merged later, adds nothing twice)."""
    added = new.use_count - old.use_count
    if added <= 0 or not device:
        return new
    counts = dict(old.uses_by)
    counts[device] = max(counts.get(device, 0), known) + added
    return replace(new, use_count=shared_uses(old) + sum(counts.values()),
                   uses_by=tuple(sorted(counts.items())))


def own_count(state: MemoryState, device: str) -> int:
    """The uses `state` credits to `device`."""
    return dict(state.uses_by).get(device, 0)


def _merged_counts(a: MemoryState, b: MemoryState) -> tuple[int, tuple[tuple[str, int], ...]]:
    counts = dict(a.uses_by)
    for device, count in b.uses_by:
        counts[device] = max(counts.get(device, 0), count)
    uses_by = tuple(sorted((d, c) for d, c in counts.items() if c > 0))
    total = max(shared_uses(a), shared_uses(b)) + sum(c for _, c in uses_by)
    return total, uses_by


def merge_copies(a: MemoryState, b: MemoryState) -> MemoryState:
    """Two copies of one memory (a sync conflict) as one state. Symmetric: neither side is
    preferred, so `merge_copies(a, b) == merge_copies(b, a)`, and merging a state into itself
    changes nothing.

    Uses: per device the larger count plus the larger shared part (no use recorded on either
    side is lost; a use both copies carry counts once). Last use and review counts: the later
    / larger. Created: the earlier. Strength: the higher. Pinned: on either side. Status: the
    furthest along (promoted > active > archived: a use or a promotion on one device outweighs
    a forget on the other). Type, source and tags: either side's (tags: the union)."""
    if a.id != b.id:
        raise ValueError(f"merge_copies needs one memory's copies, got {a.id!r} and {b.id!r}")
    total, uses_by = _merged_counts(a, b)
    status = max((a.status, b.status), key=lambda s: STATUS_RANK[s])
    promoted = [s.promoted_at for s in (a, b) if s.promoted_at is not None]
    merged_into = sorted(s.merged_into for s in (a, b) if s.merged_into)
    superseded_by = sorted(s.superseded_by for s in (a, b) if s.superseded_by)
    supersedes = sorted(s.supersedes for s in (a, b) if s.supersedes)
    proposed = sorted(s.possible_update_of for s in (a, b) if s.possible_update_of)
    return MemoryState(
        id=a.id,
        created=min(a.created, b.created),
        last_used=max(a.last_used, b.last_used),
        use_count=total,
        strength=max(a.strength, b.strength),
        status=status,
        type=_either(a.type, b.type),
        pinned=a.pinned or b.pinned,
        source=_either(a.source, b.source),
        promoted_at=min(promoted) if promoted else None,
        merged_into=merged_into[0] if merged_into else None,
        review_count=max(a.review_count, b.review_count),
        cross_domain_count=max(a.cross_domain_count, b.cross_domain_count),
        tags=tuple(sorted(set(a.tags) | set(b.tags))),
        uses_by=uses_by,
        superseded_by=superseded_by[0] if superseded_by else None,
        supersedes=supersedes[0] if supersedes else None,
        possible_update_of=proposed[0] if proposed and not supersedes else None,
    )


def rebase(mine: MemoryState, theirs: MemoryState) -> MemoryState:
    """This device's pending state `mine` laid over the note's current state `theirs` (which
    another device may have changed through sync since `mine` was computed): the use counts
    merge as in `merge_copies`, last use and review counts keep the later / larger, and every
    other field is this device's latest decision (an unpin or a lowered strength stays),
    except the supersede links: those are written to the note at once, never left pending, so
    the note's own are the latest."""
    if mine.id != theirs.id:
        return mine
    total, uses_by = _merged_counts(mine, theirs)
    return replace(
        mine, use_count=total, uses_by=uses_by, last_used=max(mine.last_used, theirs.last_used),
        created=min(mine.created, theirs.created),
        review_count=max(mine.review_count, theirs.review_count),
        cross_domain_count=max(mine.cross_domain_count, theirs.cross_domain_count),
        superseded_by=theirs.superseded_by, supersedes=theirs.supersedes,
        possible_update_of=theirs.possible_update_of,
    )


def _either(a: str | None, b: str | None) -> str | None:
    values = sorted(v for v in (a, b) if v)
    return values[0] if values else None


@dataclass(frozen=True)
class CopyPlan:
    """What reconciling one duplicate id does: merge `copies` into `canonical`."""

    memory_id: str
    canonical: str
    copies: tuple[str, ...]
    merged: MemoryState
    body_differs: tuple[str, ...]  # copies whose text (not stm_* lines) differs


def plan_copies(
    memory_id: str, states: dict[str, MemoryState], texts: dict[str, str],
    archive_folder: str = "",
) -> CopyPlan | None:
    """The merge of every note carrying `memory_id` (path → state, path → its text without
    stm_* lines), or None when only one note carries it."""
    paths = canonical_order(list(states), archive_folder)
    if len(paths) < 2:
        return None
    canonical, copies = paths[0], tuple(paths[1:])
    merged = states[canonical]
    for path in copies:
        merged = merge_copies(merged, states[path])
    differs = tuple(p for p in copies if texts.get(p) != texts.get(canonical))
    return CopyPlan(memory_id, canonical, copies, merged, differs)


def copy_id(memory_id: str, path: str) -> str:
    """The id an archived conflict copy gets (so it no longer shares the memory's id): derived
    from both, so every device that reconciles the same copy writes the same bytes."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"vaultmem:{memory_id}:{path}"))


def consolidated_id(cluster_id: str, day: date) -> str:
    """The id of the memory a cluster is merged into: two devices that merge the same cluster
    on the same day before sync carries either result write one memory twice (a conflict
    copy that reconciling folds into one), not two memories that say the same thing."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"vaultmem:consolidated:{cluster_id}:{day}"))
