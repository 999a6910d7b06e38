"""SPEC §3.5: uses count toward promotion only when spaced in time. A use counts when it comes at
least `spaced_use_hours` (default 12) after the memory's previous use; uses within one span (a
save and a touch a minute apart, one conversation) count once. Pure: explicit `now`."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core._params import decay, lifecycle_policy, reinforce
from vaultmem.core.consolidation import merge_states
from vaultmem.core.decisions import PROMOTE, decide
from vaultmem.core.memory import counted_uses, new_state, state_from_fields, state_to_fields
from vaultmem.core.reinforce import touch

NOW = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
PARAMS = reinforce()


def test_the_reported_case_a_save_and_a_touch_a_minute_later_does_not_promote() -> None:
    saved = new_state("m1", NOW)
    used = touch(saved, NOW + timedelta(minutes=1), PARAMS)
    assert used.use_count == 2 and counted_uses(used) == 1
    decision = decide(used, NOW + timedelta(hours=1), decay(), lifecycle_policy())
    assert decision.action != PROMOTE
    assert "1 use(s) spaced in time (< 2; 2 in all)" in decision.reason


def test_a_use_the_next_day_counts_and_promotes() -> None:
    used = touch(new_state("m1", NOW), NOW + timedelta(days=1), PARAMS)
    assert counted_uses(used) == 2 and used.spaced_uses is None  # no extra key: all counted
    later = NOW + timedelta(days=1, hours=1)
    assert decide(used, later, decay(), lifecycle_policy()).action == PROMOTE


def test_a_whole_conversation_of_uses_counts_once() -> None:
    state = new_state("m1", NOW)
    for minute in range(1, 30):
        state = touch(state, NOW + timedelta(minutes=minute), PARAMS)
    assert state.use_count == 30 and counted_uses(state) == 1
    # five uses in a conversation never reach the fast promotion (5 uses within 14 days)
    assert decide(state, NOW + timedelta(hours=1), decay(), lifecycle_policy()).action != PROMOTE


def test_the_spacing_is_measured_from_the_previous_use() -> None:
    state = new_state("m1", NOW)
    state = touch(state, NOW + timedelta(hours=11, minutes=59), PARAMS)
    assert counted_uses(state) == 1
    state = touch(state, NOW + timedelta(hours=24), PARAMS)  # 12 h 1 min after that use
    assert counted_uses(state) == 2


def test_zero_hours_counts_every_use() -> None:
    state = touch(new_state("m1", NOW), NOW, reinforce(spaced_use_hours=0.0))
    assert counted_uses(state) == 2


def test_the_count_round_trips_through_frontmatter_and_is_omitted_when_all_count() -> None:
    burst = touch(new_state("m1", NOW), NOW + timedelta(minutes=1), PARAMS)
    fields = state_to_fields(burst)
    assert fields["stm_spaced_uses"] == 1 and fields["stm_use_count"] == 2
    assert state_from_fields(fields) == burst
    assert "stm_spaced_uses" not in state_to_fields(new_state("m2", NOW))
    # a memory written before the rule has no key: all its uses count, as they did
    old = {k: v for k, v in state_to_fields(burst).items() if k != "stm_spaced_uses"}
    assert counted_uses(state_from_fields(old)) == 2


def test_a_merge_sums_the_members_counted_uses() -> None:
    burst = touch(new_state("m1", NOW), NOW + timedelta(minutes=1), PARAMS)
    spaced = touch(new_state("m2", NOW), NOW + timedelta(days=1), PARAMS)
    merged = merge_states([burst, spaced], 0.9, "m3", NOW + timedelta(days=2),
                          strength_max=2.0, decay=decay())
    assert merged.use_count == 4 and counted_uses(merged) == 3


@given(gaps=st.lists(st.floats(0, 72), min_size=1, max_size=30))
@settings(max_examples=200, deadline=None)
def test_counted_uses_are_the_gaps_of_at_least_the_spacing(gaps: list[float]) -> None:
    state, now = new_state("m1", NOW), NOW
    for gap in gaps:
        now += timedelta(hours=gap)
        state = touch(state, now, PARAMS)
    assert state.use_count == len(gaps) + 1
    assert counted_uses(state) == 1 + sum(1 for gap in gaps if gap >= 12.0)
    assert 1 <= counted_uses(state) <= state.use_count
