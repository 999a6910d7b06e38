"""The update detector's text rule: values, cue words, scope, and the best candidate."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from vaultmem.core.updates import best_update, cue, same_scope, value_change, values

PAIRS = json.loads((REPO / "tests" / "data" / "updates" / "pairs.json").read_text("utf-8"))


def test_values_read_numbers_versions_dates_and_times() -> None:
    assert values("Ubuntu 22.04 on port 5,000 since 2026-09-15 at 09:30.") == {
        "22.04", "5000", "2026-09-15", "09:30"}
    assert values("no numbers here") == frozenset()


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("The NAS admin page is on port 5000.", "The NAS admin page moved to port 5001.",
     "5000 → 5001"),
    ("We use Docker Swarm.", "We no longer use Docker Swarm; we use Nomad.", "no longer"),
    ("Gitea sits behind nginx.", "Gitea sits behind Caddy instead of nginx.", "instead of"),
])
def test_a_changed_value_or_a_cue_with_something_new_is_an_update(
        old: str, new: str, expected: str) -> None:
    reason = value_change(old, new)
    assert reason is not None and expected in reason


@pytest.mark.parametrize(("old", "new"), [
    ("The NAS admin page is on port 5000.", "Port 5000 is where the NAS admin page lives."),
    ("Sam prefers restic.", "Sam prefers restic."),
    ("The NAS is on port 5000.", "The NAS is on port 5000 and port 443."),  # a value added
    ("Gitea is now behind Caddy.", "Gitea is now behind Caddy."),  # the same cue on both
])
def test_a_restatement_is_not_an_update(old: str, new: str) -> None:
    assert value_change(old, new) is None


def test_cue_words() -> None:
    assert cue("It MOVED TO the attic") == "moved to"
    assert cue("nowhere to be seen") is None  # whole words only


def test_scope_is_a_shared_tag_or_the_save_folder() -> None:
    assert same_scope(["homelab"], ["Homelab"], "elsewhere", "memories")
    assert not same_scope(["homelab"], ["work"], "memories", "memories")
    assert same_scope([], ["work"], "memories", "memories")
    assert not same_scope([], [], "Projects", "memories")


def test_best_update_takes_the_closest_candidate_that_changes_a_value() -> None:
    new = "The NAS admin page moved to port 5001."
    candidates = [("a", "The NAS admin page is on port 5000.", 0.8),
                  ("b", "The NAS admin page is on port 5000, says the manual.", 0.9),
                  ("c", "The NAS admin page moved to port 5001.", 0.99),  # a restatement
                  ("d", "The router admin page is on port 80.", 0.5)]  # below the threshold
    found = best_update(candidates, new, 0.6)
    assert found is not None and found[0] == "b" and found[2] == 0.9
    assert best_update(candidates[2:], new, 0.6) is None


def test_the_judged_set_is_large_enough_and_the_rule_alone_finds_every_update() -> None:
    kinds = [pair["kind"] for pair in PAIRS]
    assert len(PAIRS) >= 40 and set(kinds) == {"update", "paraphrase", "unrelated"}
    missed = [p["new"] for p in PAIRS if p["kind"] == "update"
              and value_change(p["old"], p["new"]) is None]
    # the text rule alone finds every judged update; the cosine threshold is what keeps the
    # paraphrases and unrelated facts out (measured by bench/eval_updates.py)
    assert missed == []
