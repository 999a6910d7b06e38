"""Supersede links: the state keys, the checks, the decisions, and search's preference."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core._params import decay, lifecycle_policy
from vaultmem.core.decisions import decide
from vaultmem.core.device_sync import merge_copies, rebase
from vaultmem.core.memory import ARCHIVED, state_from_fields, state_to_fields
from vaultmem.core.supersede import (
    SupersedeRefused,
    check_supersede,
    forget_predecessor,
    prefer_successors,
    released,
    supersede,
)

from ._support import NOW, memory

POLICY = lifecycle_policy()
DECAY = decay()


def test_the_links_round_trip_through_the_frontmatter_keys() -> None:
    old, new = supersede(memory("old"), memory("new"))
    fields = state_to_fields(old)
    assert fields["stm_superseded_by"] == "new" and "stm_supersedes" not in fields
    assert state_from_fields(fields) == old
    assert state_to_fields(new)["stm_supersedes"] == "old"
    assert state_from_fields(state_to_fields(new)) == new
    assert "stm_superseded_by" not in state_to_fields(memory("plain"))


def test_a_memory_cannot_name_itself() -> None:
    with pytest.raises(ValueError, match="itself"):
        replace(memory("a"), superseded_by="a")


@pytest.mark.parametrize(("old", "new", "why"), [
    (memory("a", superseded_by="x"), memory("b"), "already superseded"),
    (memory("a"), memory("b", supersedes="x"), "already supersedes"),
    (memory("a"), memory("b", superseded_by="x"), "itself superseded"),
    (memory("a"), memory("b", status=ARCHIVED), "archived"),
    (memory("a", supersedes="b"), memory("b"), "own successor"),
    (memory("a"), memory("a"), "itself"),
])
def test_refusals(old: object, new: object, why: str) -> None:
    with pytest.raises(SupersedeRefused, match=why):
        check_supersede(old, new)  # type: ignore[arg-type]


def test_linking_again_is_allowed_and_changes_nothing() -> None:
    old, new = supersede(memory("a"), memory("b"))
    assert supersede(old, new) == (old, new)


def test_release_and_forget_predecessor_undo_exactly_one_link() -> None:
    middle = memory("b", superseded_by="c", supersedes="a")
    assert released(middle) == replace(middle, superseded_by=None)
    assert forget_predecessor(middle, "a") == replace(middle, supersedes=None)
    assert forget_predecessor(middle, "z") == middle


def test_a_superseded_memory_fades_and_is_never_promoted() -> None:
    strong = dict(use_count=6, idle_hours=1, strength=2.0, age_hours=400)
    assert decide(memory(**strong), NOW, DECAY, POLICY).action == "promote"  # type: ignore
    stale = decide(memory(superseded_by="new", **strong), NOW, DECAY, POLICY)  # type: ignore
    assert stale.action == "forget" and "superseded by new" in stale.reason
    pinned = decide(memory(superseded_by="new", pinned=True, **strong), NOW, DECAY,  # type: ignore
                    POLICY)
    assert pinned.action == "keep" and "never promoted" in pinned.reason


def test_sync_merges_and_rebases_keep_the_links() -> None:
    linked = memory("a", superseded_by="b")
    assert merge_copies(linked, memory("a")).superseded_by == "b"
    assert merge_copies(memory("a"), linked).superseded_by == "b"
    # a pending use computed before the link was written does not drop it
    assert rebase(memory("a", use_count=3), linked).superseded_by == "b"
    assert rebase(linked, memory("a")).superseded_by is None  # the note's own is the latest


def test_prefer_successors_moves_the_stale_item_just_below_its_successor() -> None:
    ranked = ["stale", "other", "new", "last"]
    assert prefer_successors(ranked, str, {"stale": "new"}) == ["other", "new", "stale", "last"]
    assert prefer_successors(ranked, str, {"other": "stale"}) == ranked  # already below
    assert prefer_successors(ranked, str, {"stale": "gone"}) == ranked  # successor not listed
    chain = ["a", "b", "c"]
    assert prefer_successors(chain, str, {"a": "b", "b": "c"}) == ["c", "b", "a"]


@given(st.permutations(list("abcdef")),
       st.dictionaries(st.sampled_from("abcdef"), st.sampled_from("abcdef"), max_size=4))
def test_prefer_successors_keeps_every_item_and_settles_acyclic_links(
        ranked: list[str], links: dict[str, str]) -> None:
    links = {k: v for k, v in links.items() if k != v}
    out = prefer_successors(ranked, str, links)
    assert sorted(out) == sorted(ranked)
    if not _cyclic(links):
        assert all(out.index(stale) > out.index(new) for stale, new in links.items())


def _cyclic(links: dict[str, str]) -> bool:
    for start in links:
        seen, node = set(), start
        while node in links:
            if node in seen:
                return True
            seen.add(node)
            node = links[node]
    return False
