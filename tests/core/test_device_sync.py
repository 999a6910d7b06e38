"""Synced vaults, pure part: conflict-copy names, the canonical note, and merging two copies of
one memory without losing or double-counting a use."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core._params import reinforce
from tests.core._support import NOW, memory
from vaultmem.core.device_sync import (
    canonical_order,
    conflict_kind,
    conflict_original,
    credit_uses,
    has_git_markers,
    merge_copies,
    plan_copies,
    rebase,
)
from vaultmem.core.memory import (
    ACTIVE,
    ARCHIVED,
    PROMOTED,
    MemoryState,
    state_from_fields,
    state_to_fields,
)
from vaultmem.core.reinforce import touch

PARAMS = reinforce()
DEVICES = ("laptop-1a2b", "desk-9f8e", "phone-77aa")

# names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "kind"), [
    ("memories/Tea.sync-conflict-20261124-101010-ABCDEFG.md", "syncthing"),
    ("memories/Tea.sync-conflict-20261124-101010.md", "syncthing"),
    ("memories/Tea (conflicted copy 2026-11-24).md", "dropbox"),
    ("memories/Tea (Ana's conflicted copy 2026-11-24).md", "dropbox"),
    ("memories/Tea (Ana's conflicted copy 2026-11-24) (1).md", "dropbox"),
    ("memories/Tea (Conflicted copy MacBook 202611241010).md", "obsidian-sync"),
])
def test_strict_conflict_names_are_recognised_alone(path: str, kind: str) -> None:
    assert conflict_kind(path) == kind
    assert conflict_original(path) == "memories/Tea.md"


@pytest.mark.parametrize(("path", "kind"), [
    ("notes/Tea (1).md", "google-drive"),
    ("notes/Tea 2.md", "icloud"),
    ("notes/Tea-DESKTOP-4B2K9QX.md", "onedrive"),
])
def test_loose_names_count_only_beside_the_original(path: str, kind: str) -> None:
    assert conflict_kind(path) is None  # "Meeting 2.md" alone is just a name
    assert conflict_kind(path, ["notes/Tea.md", path]) == kind


@pytest.mark.parametrize("path", ["notes/Tea.md", "notes/Tea party.md", "notes/x.txt",
                                  "notes/Tea.sync-conflict-2026.md"])
def test_ordinary_names_are_not_copies(path: str) -> None:
    assert conflict_kind(path, ["notes/Tea.md"]) is None


def test_git_markers() -> None:
    assert has_git_markers("a: 1\n<<<<<<< HEAD\nb: 2\n=======\nb: 3\n>>>>>>> other\n")
    assert not has_git_markers("a: 1\nb: '<<<<<<< not a marker'\n")


def test_the_canonical_note_is_the_one_without_a_conflict_name() -> None:
    paths = ["m/Tea.sync-conflict-20261124-101010-ABCDEFG.md",
             "m/Tea (conflicted copy 2026-11-24).md", "m/Tea.md"]
    assert canonical_order(paths)[0] == "m/Tea.md"
    assert canonical_order(list(reversed(paths))) == canonical_order(paths)


def test_without_a_plain_name_the_rule_is_stable_and_skips_the_archive() -> None:
    paths = ["m/archive/Tea.md", "m/Tea one.md", "m/Tea two.md"]
    assert canonical_order(paths, "m/archive")[0] == "m/Tea one.md"
    assert canonical_order(paths[::-1], "m/archive") == canonical_order(paths, "m/archive")


# the per-device counter ------------------------------------------------------------------------


def test_uses_by_round_trips_through_the_frontmatter() -> None:
    state = replace(memory(), use_count=7, uses_by=(("desk-9f8e", 2), ("laptop-1a2b", 4)))
    fields = state_to_fields(state)
    assert fields["stm_uses_by"] == "desk-9f8e=2 laptop-1a2b=4"
    assert state_from_fields(fields) == state


def test_bad_uses_by_is_refused_with_its_key() -> None:
    fields = state_to_fields(memory())
    with pytest.raises(ValueError, match="stm_uses_by"):
        state_from_fields({**fields, "stm_uses_by": "laptop=three"})


def test_a_touch_is_credited_to_the_device() -> None:
    old = memory(use_count=3)
    new = credit_uses(old, touch(old, NOW, PARAMS), "laptop-1a2b")
    assert new.use_count == 4 and new.uses_by == (("laptop-1a2b", 1),)


def test_a_device_continues_from_its_own_highest_count() -> None:
    """Sync replaced the note with another device's version (this device's count 2) while
    this device's count 3 sits in a conflict copy: the next use is number 4, never a second
    number 3 that a merge would swallow."""
    base = memory(use_count=1)
    mine = use(base, "laptop-1a2b", 3)  # lives on in the conflict copy
    theirs = use(use(base, "laptop-1a2b", 2), "desk-9f8e", 1)  # the note now
    new = credit_uses(theirs, touch(theirs, NOW, PARAMS), "laptop-1a2b", known=3)
    assert dict(new.uses_by) == {"laptop-1a2b": 4, "desk-9f8e": 1}
    assert new.use_count == 6 and merge_copies(new, mine).use_count == 6  # 1 + 4 + 1


def test_the_issue_example_two_devices_touch_one_memory() -> None:
    base = memory(use_count=5)
    a = use(base, "laptop-1a2b", 1)
    b = use(base, "desk-9f8e", 2)
    assert merge_copies(a, b).use_count == 8  # 5 + 1 + 2: nothing lost, nothing doubled


def test_the_other_fields_merge_sensibly() -> None:
    a = replace(memory(), strength=1.4, pinned=True, status=ARCHIVED, tags=("x",))
    b = replace(memory(), strength=0.9, status=ACTIVE, tags=("y",), type="fact",
                created=memory().created - timedelta(days=1))
    merged = merge_copies(a, b)
    assert (merged.strength, merged.pinned, merged.status) == (1.4, True, ACTIVE)
    assert merged.tags == ("x", "y") and merged.type == "fact"
    assert merged.created == b.created
    assert merge_copies(a, replace(b, status=PROMOTED)).status == PROMOTED


def test_rebase_keeps_this_devices_decisions_and_everyones_uses() -> None:
    base = memory(use_count=2, strength=1.0, pinned=True)
    mine = replace(use(base, "laptop-1a2b", 1), strength=0.8, pinned=False)
    theirs = use(base, "desk-9f8e", 3)
    out = rebase(mine, theirs)
    assert out.use_count == 6 and (out.strength, out.pinned) == (0.8, False)
    assert rebase(mine, base) == mine  # over its own ancestor, nothing changes


def test_plan_copies_names_the_canonical_and_the_differing_bodies() -> None:
    base = memory(use_count=2)
    states = {"m/Tea.md": use(base, "a", 1),
              "m/Tea.sync-conflict-20261124-101010-ABCDEFG.md": use(base, "b", 2),
              "m/Tea (conflicted copy 2026-11-24).md": use(base, "c", 1)}
    texts = {"m/Tea.md": "x", "m/Tea.sync-conflict-20261124-101010-ABCDEFG.md": "x",
             "m/Tea (conflicted copy 2026-11-24).md": "y"}
    plan = plan_copies("m1", states, texts)
    assert plan is not None and plan.canonical == "m/Tea.md"
    assert plan.merged.use_count == 6
    assert plan.body_differs == ("m/Tea (conflicted copy 2026-11-24).md",)
    assert plan_copies("m1", {"m/Tea.md": base}, {}) is None


# properties ------------------------------------------------------------------------------------


def use(state: MemoryState, device: str, times: int) -> MemoryState:
    for step in range(times):
        state = credit_uses(state, touch(state, NOW + timedelta(minutes=step), PARAMS), device)
    return state


@st.composite
def copies(draw: st.DrawFn) -> tuple[MemoryState, list[MemoryState], int]:
    """An ancestor and copies that diverged from it: each device's uses are one history, and
    each copy carries some prefix of every device's history. Returns them with the number of
    distinct uses recorded in all (the ancestor's plus each device's longest prefix)."""
    ancestor = memory(use_count=draw(st.integers(1, 20)))
    longest: dict[str, int] = {}
    result = []
    for _ in range(draw(st.integers(1, 4))):
        state = ancestor
        for device, times in draw(st.dictionaries(st.sampled_from(DEVICES),
                                                  st.integers(0, 6))).items():
            state = use(state, device, times)
            longest[device] = max(longest.get(device, 0), times)
        result.append(state)
    return ancestor, result, ancestor.use_count + sum(longest.values())


states = st.builds(
    lambda n, shared, strength, pinned, status, days, by: replace(
        memory(), use_count=shared + sum(c for _, c in by), strength=strength, pinned=pinned,
        status=status, last_used=NOW - timedelta(days=days), uses_by=tuple(sorted(by))),
    st.integers(0, 3), st.integers(0, 20), st.floats(0, 2), st.booleans(),
    st.sampled_from((ACTIVE, ARCHIVED, PROMOTED)), st.integers(0, 30),
    st.dictionaries(st.sampled_from(DEVICES), st.integers(1, 9)).map(lambda d: list(d.items())),
)


@settings(max_examples=200, deadline=None)
@given(copies())
def test_merging_copies_counts_every_use_exactly_once(case: tuple) -> None:
    _, diverged, distinct = case
    merged = diverged[0]
    for state in diverged[1:]:
        merged = merge_copies(merged, state)
    assert merged.use_count == distinct


@settings(max_examples=200, deadline=None)
@given(states, states)
def test_merge_is_commutative_and_never_loses_a_use(a: MemoryState, b: MemoryState) -> None:
    assert merge_copies(a, b) == merge_copies(b, a)
    merged = merge_copies(a, b)
    assert merged.use_count >= max(a.use_count, b.use_count)
    assert merged.last_used == max(a.last_used, b.last_used)
    for device, count in a.uses_by + b.uses_by:
        assert dict(merged.uses_by)[device] >= count


@settings(max_examples=200, deadline=None)
@given(states, states, states)
def test_merge_is_idempotent_and_associative(a: MemoryState, b: MemoryState,
                                             c: MemoryState) -> None:
    assert merge_copies(merge_copies(a, b), b) == merge_copies(a, b)
    assert merge_copies(merge_copies(a, b), c) == merge_copies(a, merge_copies(b, c))


@settings(max_examples=200, deadline=None)
@given(states, st.sampled_from(DEVICES), st.integers(0, 5))
def test_rebase_over_an_older_self_is_the_identity(base: MemoryState, device: str,
                                                   times: int) -> None:
    mine = use(base, device, times)
    assert rebase(mine, base) == mine
