"""The upkeep policy as pure decisions: when an optimise is due, and why."""

from __future__ import annotations

import pytest

from vaultmem.index.upkeep import OPEN_FRAGMENT_LIMIT, Occasion, UpkeepPolicy

EVERY_50 = UpkeepPolicy(every_writes=50)
NEVER_ON_WRITES = UpkeepPolicy(every_writes=0)


def test_a_write_is_due_once_every_writes_have_piled_up() -> None:
    assert EVERY_50.due(Occasion.WRITE, writes=49) is None
    assert EVERY_50.due(Occasion.WRITE, writes=50) == "50 writes since the last optimise"
    assert EVERY_50.due(Occasion.WRITE, writes=51) is not None  # a missed turn is not lost
    assert NEVER_ON_WRITES.due(Occasion.WRITE, writes=10_000) is None


def test_opening_catches_up_on_an_earlier_process_fragments() -> None:
    assert EVERY_50.due(Occasion.OPEN, writes=0, fragments=OPEN_FRAGMENT_LIMIT) is None
    reason = EVERY_50.due(Occasion.OPEN, writes=0, fragments=OPEN_FRAGMENT_LIMIT + 1)
    assert reason == f"opened with {OPEN_FRAGMENT_LIMIT + 1} fragments"
    assert NEVER_ON_WRITES.due(Occasion.OPEN, writes=0, fragments=500) is None


@pytest.mark.parametrize("occasion", [Occasion.INDEXED, Occasion.SCHEDULED, Occasion.SEARCHED])
@pytest.mark.parametrize("policy", [EVERY_50, NEVER_ON_WRITES])
def test_nothing_written_is_never_optimised(occasion: Occasion, policy: UpkeepPolicy) -> None:
    assert policy.due(occasion, writes=0, fragments=40) is None  # idle: nothing to gain


@pytest.mark.parametrize("occasion", [Occasion.INDEXED, Occasion.SEARCHED])
@pytest.mark.parametrize("policy", [EVERY_50, NEVER_ON_WRITES])
def test_indexing_runs_and_searches_optimise_any_pending_write(
    occasion: Occasion, policy: UpkeepPolicy
) -> None:
    # rows written since the last optimise are searched without the full-text index
    reason = policy.due(occasion, writes=1)
    assert reason is not None and reason.startswith("1 writes since the last optimise")
    assert policy.due(Occasion.INDEXED, writes=3) != policy.due(Occasion.SEARCHED, writes=3)


def test_the_daemon_job_leaves_a_small_pile_to_the_next_search_or_write() -> None:
    """An optimise costs about the same however few writes wait: an idle daemon does not
    spend it on a pile the write rule takes in anyway and no search has met yet."""
    assert EVERY_50.due(Occasion.SCHEDULED, writes=1) is None
    assert EVERY_50.due(Occasion.SCHEDULED, writes=49) is None
    # a pile the write rule missed (every_writes reached between two checks) is not small
    assert EVERY_50.due(Occasion.SCHEDULED, writes=50) is not None
    # nor one whose text searches leave out (a large note, lance.FLAT_TEXT_ROWS)
    reason = EVERY_50.due(Occasion.SCHEDULED, writes=1, text_waiting=600)
    assert reason is not None and reason.endswith("by the daemon's optimise job")
    # with no write rule, the job is the one that takes any pile in
    assert NEVER_ON_WRITES.due(Occasion.SCHEDULED, writes=1) is not None


def test_a_sync_ends_with_an_optimise_only_when_text_waits_out_of_the_index() -> None:
    """Rows out of the full-text index beyond lance.FLAT_TEXT_ROWS: searches leave their text
    out until an optimise; a sync's end brings it in, whatever the write count."""
    for policy in (EVERY_50, NEVER_ON_WRITES):
        assert policy.due(Occasion.SYNCED, writes=49, fragments=40) is None
        assert policy.due(Occasion.SYNCED, writes=1, text_waiting=600) == (
            "600 rows' text out of the full-text index after a sync")
    assert EVERY_50.due(Occasion.WRITE, writes=1, text_waiting=600) is None  # not per write
