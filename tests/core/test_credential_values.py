"""The plain-words gate's principle: a credential word GIVEN A VALUE is a secret, whatever words
surround it; a sentence about a credential without a value passes. Judged on the project's set
(tests/data/intake/plain_secrets_judged.tsv, split for good into a dev and a held-out part by
SHA-256; bench/intake_gate.py prints the figures). Every secret here is fake."""

from __future__ import annotations

import pytest

from bench.intake_gate import DEV, HELD_OUT, load, part_of, score
from vaultmem.core.credential_values import digits_value, pair_value, words_value
from vaultmem.core.intake import LOGIN, PIN, PLAIN_PASSWORD, find_secret

# the sentences a new user saved that the gate let through
FROM_THE_REPORT = [
    ("The wifi password at the library is purple monkey dishwasher", PLAIN_PASSWORD),
    ("The wifi passphrase at the game store is correct horse battery staple", PLAIN_PASSWORD),
    ("Dave logs into Roll20 as dmdave with Tr0ub4dor&3", LOGIN),
    ("Roll20 account: dmdave / Tr0ub4dor&3", LOGIN),
    ("the door code to the game room is 4821", PIN),
    ("The password for the group's Discord admin account is purple elephant tuesday",
     PLAIN_PASSWORD),
]


@pytest.mark.parametrize(("text", "kind"), FROM_THE_REPORT)
def test_the_reported_credentials_are_refused(text: str, kind: str) -> None:
    assert find_secret(text) == kind


@pytest.mark.parametrize("text", [
    "Change the wifi password every 90 days",
    "The door code changes on the first of every month",
    "My PIN is four digits long",
    "The password was correct but the account was disabled",
    "Room 4821 is on the fourth floor, next to the door",
    "The combination of 36 x 15 = 540 consonants",
    "Safe = 600 IU a day",
    "`7za a {{archive.7z}} -p{{密码}} -mhe={{on}}`",
])
def test_a_credential_without_a_value_passes(text: str) -> None:
    assert find_secret(text) is None


@pytest.mark.parametrize(("part", "floor"), [(DEV, 0.97), (HELD_OUT, 0.97)])
def test_the_judged_set_meets_the_bar_on_each_part(part: str, floor: float) -> None:
    result, errors = score([row for row in load() if row.part == part])
    assert result.refused / result.secrets >= floor, [r.text for r in errors if r.secret]
    assert result.accepted / result.ordinary >= floor, [r.text for r in errors if not r.secret]


def test_the_judged_set_is_big_balanced_and_split_for_good() -> None:
    rows = load()
    secrets = sum(row.secret for row in rows)
    assert len(rows) >= 150 and 0.4 <= secrets / len(rows) <= 0.6
    held = [row for row in rows if row.part == HELD_OUT]
    assert 0.25 <= len(held) / len(rows) <= 0.42
    assert part_of("The alarm code for the office is 7731") == part_of(
        "The alarm code for the office is 7731")  # a pure function of the text


@pytest.mark.parametrize(("value", "expected"), [
    ("4821", True), ("#2580", True), ("2 5 8 0 and more", True), ("12-34-56", True),
    ("one two three four", True), ("4 digits", False), ("four digits long", False),
    ("0.025 inch", False), ("on the card", False), ("12", False),
])
def test_digit_values(value: str, expected: bool) -> None:
    assert digits_value(value) is expected


@pytest.mark.parametrize(("value", "colon", "expected"), [
    ("purple monkey dishwasher", False, True), ("swordfish", True, True),
    ("the quick brown fox jumps twice", True, True), ("the same as the old one", False, False),
    ("stored in the keychain", False, False), ("long and random", False, False),
    ("on the back of the router", False, False), ("see the family vault entry", True, False),
    ('"moonlight sonata"', False, True), ("8 characters minimum", True, False),
])
def test_word_values(value: str, colon: bool, expected: bool) -> None:
    assert words_value(value, colon=colon) is expected


@pytest.mark.parametrize(("value", "expected"), [
    ("dmdave / Tr0ub4dor&3", True), ("ftpuser with ftp2024pass", True),
    ("admin:Sup3rS3cret", True), ("at the credit union", False), ("your school email", False),
    ("shared with my sister", False), ("jsmith42", False),
])
def test_pair_values(value: str, expected: bool) -> None:
    assert pair_value(value) is expected
