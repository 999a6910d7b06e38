"""The update detector's text rule: values, cue words, scope, and the best candidate."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from vaultmem.core.update_rule import best_update, cue, same_scope, value_change, values

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


def test_the_reason_names_the_value_the_new_text_says_it_replaces() -> None:
    """Reported: "capped at +4" -> "at +5 ... instead of +4" was explained as "2 → 5"."""
    old = "Sneak attack bonus is capped at +4 for level 2 rogues."
    new = "Sneak attack bonus is now capped at +5 for rogues instead of +4."
    assert value_change(old, new) == "a value changed: 4 → 5"
    assert value_change("The staging database runs on port 5433, not 5432.",
                        "The staging database now runs on port 6543 instead of 5433."
                        ) == "a value changed: 5433 → 6543"
    assert value_change("Backups run at 02:00.", "Backups run at 03:30 (was 02:00).") == (
        "a value changed: 02:00 → 03:30")


@pytest.mark.parametrize(("old", "new", "said"), [
    ("Встречи проходят по вторникам в переговорной А.",
     "Теперь встречи проходят по средам вместо вторников.", "теперь"),
    ("Das Team trifft sich am Dienstag im Raum A.",
     "Das Team trifft sich jetzt am Mittwoch statt am Dienstag.", "jetzt"),
    ("La réunion d'équipe a lieu le mardi.",
     "La réunion d'équipe a désormais lieu le mercredi au lieu du mardi.", "désormais"),
    ("La reunión del equipo es los martes.",
     "La reunión del equipo ahora es los miércoles en lugar de los martes.", "ahora"),
    ("团队会议在周二举行。", "团队会议现在改为周三举行。", "现在"),
    ("チーム会議は火曜日です。", "チーム会議は今は水曜日です。", "今は"),
    ("팀 회의는 화요일입니다.", "팀 회의는 이제 수요일입니다.", "이제"),
])
def test_cues_in_every_supported_language(old: str, new: str, said: str) -> None:
    reason = value_change(old, new)
    assert reason is not None and reason.startswith(f"it says {said!r}"), reason
    assert said not in reason.split("names what is new:")[1]  # the cue is no news


@pytest.mark.parametrize(("old", "new"), [
    ("Встречи проходят по вторникам.", "Встречи проходят по вторникам."),
    ("Das Team trifft sich am Dienstag.", "Am Dienstag trifft sich das Team."),
    ("团队会议在周二举行。", "团队会议在周二举行。"),
])
def test_a_restatement_in_another_language_is_not_an_update(old: str, new: str) -> None:
    assert value_change(old, new) is None
