"""MemoryState <-> frontmatter fields."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from vaultmem.core.memory import (
    ACTIVE,
    ARCHIVED,
    PROMOTED,
    STM_KEYS,
    MemoryState,
    is_memory,
    new_state,
    state_from_fields,
    state_to_fields,
)

from ._support import NOW

BASE = {"stm_id": "abc", "stm_created": "2026-11-20T12:00:00+00:00"}


def test_is_memory() -> None:
    assert is_memory({"stm_id": "x"})
    assert not is_memory({})
    assert not is_memory({"stm_id": ""})
    assert not is_memory({"stm_id": None, "title": "note"})


def test_minimal_fields_get_defaults() -> None:
    state = state_from_fields(BASE, tags=["a", "b"])
    assert state == MemoryState(id="abc", created=NOW, last_used=NOW, tags=("a", "b"))


def test_full_round_trip() -> None:
    state = MemoryState(
        id="abc",
        created=NOW - timedelta(days=3),
        last_used=NOW,
        use_count=4,
        spaced_uses=3,
        strength=1.25,
        status=PROMOTED,
        type="decision",
        pinned=True,
        source="chat",
        promoted_at=NOW,
        merged_into="other",
        review_count=2,
        cross_domain_count=1,
        tags=("x",),
        uses_by=(("laptop-1a2b", 2),),
        superseded_by="newer",
        supersedes="older",
        possible_update_of="maybe",
    )
    fields = state_to_fields(state)
    assert list(fields) == list(STM_KEYS)
    assert state_from_fields(fields, tags=("x",)) == state


def test_to_fields_omits_defaults_and_formats() -> None:
    state = new_state("abc", NOW, strength=1.23456)
    assert state_to_fields(state) == {
        "stm_id": "abc",
        "stm_created": "2026-11-20T12:00:00+00:00",
        "stm_last_used": "2026-11-20T12:00:00+00:00",
        "stm_use_count": 1,
        "stm_strength": 1.2346,
        "stm_status": ACTIVE,
    }


def test_to_fields_keeps_offset_and_drops_microseconds() -> None:
    plus_two = timezone(timedelta(hours=2))
    when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=plus_two)
    fields = state_to_fields(new_state("abc", when))
    assert fields["stm_created"] == "2026-01-02T03:04:05+02:00"


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-20T12:00:00Z",
        "2026-11-20T12:00:00",
        "2026-11-20T13:00:00+01:00",
        datetime(2026, 11, 20, 12, 0),
        datetime(2026, 11, 20, 12, 0, tzinfo=UTC),
    ],
)
def test_datetime_forms(value: object) -> None:
    state = state_from_fields({**BASE, "stm_created": value})
    assert state.created == NOW
    assert state.created.utcoffset() is not None


def test_date_is_midnight_utc() -> None:
    state = state_from_fields({**BASE, "stm_created": date(2026, 11, 20)})
    assert state.created == datetime(2026, 11, 20, tzinfo=UTC)


def test_lenient_scalar_forms() -> None:
    fields = {
        **BASE,
        "stm_use_count": "3",
        "stm_strength": "1.5",
        "stm_pinned": "yes",
        "stm_review_count": 2.0,
        "stm_type": "",
    }
    state = state_from_fields(fields)
    assert (state.use_count, state.strength, state.pinned, state.review_count) == (3, 1.5, True, 2)
    assert state.type is None


@pytest.mark.parametrize(("raw", "expected"), [(5, 2.0), (-1, 0.0), (0.7, 0.7)])
def test_strength_is_clamped(raw: float, expected: float) -> None:
    assert state_from_fields({**BASE, "stm_strength": raw}).strength == expected


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"stm_id": None}, "stm_id"),
        ({"stm_created": None}, "stm_created"),
        ({"stm_created": "yesterday"}, "stm_created"),
        ({"stm_last_used": 12}, "stm_last_used"),
        ({"stm_use_count": "many"}, "stm_use_count"),
        ({"stm_use_count": 1.5}, "stm_use_count"),
        ({"stm_use_count": True}, "stm_use_count"),
        ({"stm_use_count": -1}, "stm_use_count"),
        ({"stm_strength": "strong"}, "stm_strength"),
        ({"stm_strength": float("nan")}, "stm_strength"),
        ({"stm_status": "sleeping"}, "stm_status"),
        ({"stm_pinned": "maybe"}, "stm_pinned"),
        ({"stm_review_count": "x"}, "stm_review_count"),
    ],
)
def test_invalid_values_name_the_key(changes: dict[str, object], key: str) -> None:
    with pytest.raises(ValueError, match=key):
        state_from_fields({**BASE, **changes})


def test_missing_id_entirely() -> None:
    with pytest.raises(ValueError, match="stm_id"):
        state_from_fields({"stm_created": "2026-11-20T12:00:00Z"})


def test_status_values() -> None:
    assert state_from_fields({**BASE, "stm_status": ARCHIVED}).status == ARCHIVED


def test_new_state() -> None:
    state = new_state("abc", NOW, type="fact", pinned=True, source="cli", tags=["t"])
    assert (state.created, state.last_used, state.use_count) == (NOW, NOW, 1)
    assert (state.type, state.pinned, state.source, state.tags) == ("fact", True, "cli", ("t",))


def test_state_rejects_naive_datetimes() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        new_state("abc", datetime(2026, 1, 1))
