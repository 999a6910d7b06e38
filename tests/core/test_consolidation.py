"""Clustering similar memories and merging them (SPEC §5)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core._params import DEFAULTS, decay
from vaultmem.core.consolidation import cluster_id, merge_states, plan_clusters
from vaultmem.core.decay import DECAY_MODELS, score
from vaultmem.core.memory import MEMORY_TYPES, MemoryState

from ._support import NOW, memory


def merge(states: list[MemoryState], cohesion: float, new_id: str, **params: Any) -> MemoryState:
    """merge_states at the default strength cap and decay."""
    given = {"strength_max": DEFAULTS.strength_max, "decay": decay()} | params
    return merge_states(states, cohesion, new_id, NOW, **given)


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
    merged = merge([a, b], 0.95, "new")
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
    assert merge(states, 0.9, "n").strength == pytest.approx(1.5)  # bonus capped 0.5
    strong = [memory("a", strength=1.9), memory("b", strength=1.0)]
    assert merge(strong, 0.95, "n").strength == 2.0


def test_merge_mixed_types_and_empty() -> None:
    states = [memory("a", type="issue"), memory("b", type="fact")]
    assert merge(states, 0.9, "n").type == "fact"  # the slowest-fading type
    with pytest.raises(ValueError):
        merge([], 0.9, "n")


@pytest.mark.parametrize(("types", "expected"), [
    (("preference", None), "preference"),
    ((None, "preference"), "preference"),
    ((None, None), None),
    (("decision", "convention", "pattern"), "convention"),
    (("issue", None), "issue"),
])
def test_the_merged_type_is_the_slowest_fading_members(
    types: tuple[str | None, ...], expected: str | None
) -> None:
    states = [memory(str(i), type=t) for i, t in enumerate(types)]
    assert merge(states, 0.95, "n").type == expected


def test_untyped_wins_when_the_default_half_life_is_the_longest() -> None:
    params = decay(half_life_days=400.0)
    states = [memory("a", type="fact"), memory("b")]
    assert merge(states, 0.95, "n", decay=params).type is None


_TYPES = st.sampled_from([None, *MEMORY_TYPES])


@given(
    members=st.lists(st.tuples(_TYPES, st.floats(0, 2000), st.integers(1, 30),
                               st.floats(0, 2)), min_size=2, max_size=6),
    model=st.sampled_from(DECAY_MODELS), cohesion=st.floats(0.75, 1.0),
)
def test_a_merged_memory_never_scores_below_its_best_member(
    members: list[tuple[str | None, float, int, float]], model: str, cohesion: float
) -> None:
    params = decay(model=model)
    states = [memory(f"m{i}", idle_hours=idle, age_hours=idle + 1, type=kind, use_count=uses,
                     strength=strength)
              for i, (kind, idle, uses, strength) in enumerate(members)]
    merged = merge(states, cohesion, "n", decay=params)
    best = max(score(state, NOW, params) for state in states)
    assert score(merged, NOW, params) >= best * (1 - 1e-12)


def test_the_reported_preference_merge_keeps_its_score() -> None:
    """The sample vault's two Restic notes: a preference and an untyped memory."""
    preference = memory("a", idle_hours=14 * 24, type="preference")
    untyped = memory("b", idle_hours=8 * 24)
    params = decay()
    merged = merge([untyped, preference], 0.93, "n", decay=params)
    assert merged.type == "preference"
    assert score(merged, NOW, params) > max(score(preference, NOW, params),
                                          score(untyped, NOW, params))
