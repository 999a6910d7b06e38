"""Clustering similar memories and merging them (SPEC §5)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.consolidation import cluster_id, merge_states, plan_clusters

from ._support import NOW, memory


def sims(pairs: dict[str, float]) -> dict[tuple[str, str], float]:
    return {tuple(sorted(key.split("-"))): value for key, value in pairs.items()}  # type: ignore[misc]


def test_single_linkage_and_actions() -> None:
    similarity = sims({"a-b": 0.95, "b-c": 0.9, "a-c": 0.92, "d-e": 0.84, "f-g": 0.5, "c-d": 0.2})
    clusters = plan_clusters(list("abcdefg"), similarity)
    assert [(c.members, c.action) for c in clusters] == [
        (("a", "b", "c"), "merge"),
        (("d", "e"), "review"),
    ]
    assert clusters[0].cohesion == pytest.approx((0.95 + 0.9 + 0.92) / 3)


def test_chain_lowers_cohesion() -> None:
    # a-b and b-c link, a-c is missing (0): single linkage joins, cohesion drops to "keep".
    clusters = plan_clusters(["a", "b", "c"], sims({"a-b": 0.9, "b-c": 0.9}))
    assert clusters[0].members == ("a", "b", "c")
    assert clusters[0].cohesion == pytest.approx(0.6)
    assert clusters[0].action == "keep"


def test_cluster_id_is_derived_from_members() -> None:
    clusters = plan_clusters(["y", "x"], {("x", "y"): 0.99})
    assert clusters[0].id == cluster_id(["y", "x"]) == cluster_id(["x", "y"])
    assert clusters[0].id.startswith("c-") and len(clusters[0].id) == 14
    assert cluster_id(["x", "z"]) != clusters[0].id


def test_large_components_are_split_at_max_size() -> None:
    ids = [f"m{i:02d}" for i in range(30)]
    similarity = {(a, b): 0.95 for i, a in enumerate(ids) for b in ids[i + 1 :]}
    clusters = plan_clusters(ids, similarity, max_size=12)
    assert sorted(len(c.members) for c in clusters) == [6, 12, 12]
    assert sorted(m for c in clusters for m in c.members) == ids


IDS = st.lists(st.sampled_from([f"m{i}" for i in range(10)]), min_size=2, max_size=10, unique=True)


@given(ids=IDS, data=st.data())
def test_cluster_ids_stable_under_permutation(ids: list[str], data: st.DataObject) -> None:
    pairs = [(a, b) for a in sorted(ids) for b in sorted(ids) if a < b]
    values = data.draw(
        st.lists(
            st.sampled_from([0.0, 0.8, 0.85, 0.9, 0.95]), min_size=len(pairs), max_size=len(pairs)
        )
    )
    similarity = dict(zip(pairs, values, strict=True))
    max_size = data.draw(st.integers(min_value=2, max_value=5))
    expected = plan_clusters(ids, similarity, max_size=max_size)
    shuffled = list(ids)
    random.Random(data.draw(st.integers())).shuffle(shuffled)
    reordered = dict(reversed(list(similarity.items())))
    assert plan_clusters(shuffled, reordered, max_size=max_size) == expected
    assert all(2 <= len(c.members) <= max_size for c in expected)


def test_merge_states() -> None:
    a = memory(
        "a", idle_hours=5, age_hours=100, use_count=3, strength=1.2, tags=("x", "y"), type="fact"
    )
    b = memory(
        "b",
        idle_hours=1,
        age_hours=50,
        use_count=2,
        strength=0.8,
        tags=("#Y", "z"),
        type="fact",
        pinned=True,
    )
    merged = merge_states([a, b], 0.95, "new", NOW)
    assert merged.id == "new"
    assert merged.created == NOW - timedelta(hours=100)
    assert merged.last_used == NOW - timedelta(hours=1)
    assert merged.use_count == 5
    assert merged.strength == pytest.approx(1.2 + 0.95 * 2 * 0.1)
    assert merged.tags == ("x", "y", "z")
    assert merged.type == "fact"
    assert merged.pinned
    assert merged.status == "active"


def test_merge_strength_bonus_and_cap() -> None:
    states = [memory(str(i), strength=1.0) for i in range(8)]
    assert merge_states(states, 0.9, "n", NOW).strength == pytest.approx(1.5)  # bonus capped 0.5
    strong = [memory("a", strength=1.9), memory("b", strength=1.0)]
    assert merge_states(strong, 0.95, "n", NOW).strength == 2.0


def test_merge_mixed_types_and_empty() -> None:
    states = [memory("a", type="fact"), memory("b", type="issue")]
    assert merge_states(states, 0.9, "n", NOW).type is None
    with pytest.raises(ValueError):
        merge_states([], 0.9, "n", NOW)
