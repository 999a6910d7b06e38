"""Secrets written in plain words (passwords, passphrases, PINs, logins), payment card numbers
and documented example cloud keys: refused in any sentence form and letter case, while the
ordinary sentences about passwords and keys still pass. Generated cases (hypothesis) beside the
examples. Every secret here is fake.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.intake import (
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    CARD_NUMBER,
    LOGIN,
    PIN,
    PLAIN_PASSWORD,
    find_secret,
)
from vaultmem.core.plain_secrets import luhn_valid

CARD = "4242 4242 " + "4242 4242"  # the well-known test card, split so scanners skip this file

REFUSED: list[tuple[str, str]] = [
    ("The NAS root password is correct-horse-battery-staple, don't share it", PLAIN_PASSWORD),
    ("The wifi password at the cabin is hunter2-Blue-Fox", PLAIN_PASSWORD),
    ("The gitea admin login is sam / Tr0ub4dor&3x", LOGIN),
    ("My bank PIN is 4921", PIN),
    ("my card ends in " + CARD, CARD_NUMBER),
    ("card: " + CARD.replace(" ", ""), CARD_NUMBER),
    ("Amex 3782 822463 " + "10005 for the hotel", CARD_NUMBER),
    ("AK" + "IAIOSFODNN7EXAMPLE", AWS_ACCESS_KEY),
    ("wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", AWS_SECRET_KEY),
    ("THE NAS ROOT PASSWORD IS CORRECT-HORSE-BATTERY-STAPLE", PLAIN_PASSWORD),
    ("I changed the router password to Sunflower42 yesterday", PLAIN_PASSWORD),
    ("hunter22 is my password", PLAIN_PASSWORD),
    ("Use Tr0ub4dor&3 as the password for the printer.", PLAIN_PASSWORD),
    ('the passphrase is "purple monkey dishwasher"', PLAIN_PASSWORD),
    ("Garage door passcode: 582913", PLAIN_PASSWORD),
    ("the alarm pin code is 1357", PIN),
    ("Phone PIN 4821, don't tell anyone", PIN),
    ("user sam, password Kq7!mz2p", PLAIN_PASSWORD),
    ("The password for Mum's laptop was Bailey2019 until March.", PLAIN_PASSWORD),
    ("Guest wifi key is Fox-Trot-Nine-77", PLAIN_PASSWORD),
    ("The VPN credentials are sam:Xk29-pq!", LOGIN),
    ("The NAS password's 48151623", PLAIN_PASSWORD),
]

ACCEPTED: list[str] = [
    "If you forget it, reset your password in settings and log in again.",
    "The workshop wifi password is on the router label, not in the vault.",
    "The NAS password is stored in the keychain under 'nas', nowhere else.",
    "Password: 8 characters minimum, and a token: 3 per minute rate limit.",
    "The password manager is 1Password and the family shares a vault.",
    "Credentials are in 1Password, in the Home vault.",
    "The login page is at https://nas.local:5001 on the LAN.",
    "The password policy changed in 2024: 12 characters and no reuse.",
    "The PIN pad on the front door was replaced in May.",
    "The GPIO pin is 17 on the Raspberry Pi header.",
    "Never share credentials with co-workers over chat.",
    "My password is long, random and kept in the password manager.",
    "The password was changed on 2026-11-20 after the breach notice.",
    "In code: password = os.environ['DB_PASSWORD'] and api_key = settings.WEATHER_KEY.",
    "The passphrase is in the safe, written on the blue card.",
    "Order 2026-11-20 costs 1,234,567.89 in total, invoice 2026 1120 0001.",
    "The tracking number is 1Z999AA10123456784 for the parcel.",
    "Call +44 20 7946 0958 about the boiler.",
    "Unix time 1790000000123 is when the backup finished.",
    "A login shell reads .profile; a non-login shell does not.",
    "Login with your email address; the password is emailed.",
    "AWS access keys start with AKIA and are 20 characters long.",
]


@pytest.mark.parametrize(("text", "kind"), REFUSED)
def test_plain_language_secrets_are_refused(text: str, kind: str) -> None:
    assert find_secret(text) == kind


@pytest.mark.parametrize("text", ACCEPTED)
def test_ordinary_sentences_about_passwords_pass(text: str) -> None:
    assert find_secret(text) is None


def test_luhn() -> None:
    assert luhn_valid("4242424242424242") and luhn_valid("378282246310005")
    assert not luhn_valid("4242424242424241")


# generated cases ------------------------------------------------------------------------------

WORDS = ["password", "passphrase", "passcode", "Wi-Fi password", "root password",
         "admin password", "pass phrase"]
SUBJECTS = ["The", "My", "Our", "the", "Sam's", "The NAS", "the cabin's", ""]
PLACES = ["", " at the cabin", " for the NAS", " of the router", " on the old laptop",
          " for sam's account"]
VERBS = [" is", " was", ":", " =", " is now", " is still", "'s"]
TAILS = ["", ".", ", don't share it", " (changed in May)", "!", " — keep it offline."]
SEP = st.sampled_from(["-", "_"])  # `a.b.c` reads as an attribute path, let through
WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9)


@st.composite
def password_values(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["mixed", "digits", "phrase", "symbols"]))
    if kind == "digits":
        return draw(st.text("0123456789", min_size=6, max_size=16))
    if kind == "phrase":
        return draw(SEP).join(draw(st.lists(WORD, min_size=3, max_size=5)))
    letters = draw(st.text("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ", min_size=4,
                           max_size=12))
    tail = draw(st.text("0123456789" if kind == "mixed" else "@#&%+^", min_size=1,
                        max_size=4))
    return letters + tail + draw(st.text("abcxyz23", max_size=3))


def _case(text: str, how: str) -> str:
    return {"upper": text.upper(), "lower": text.lower(), "title": text.title()}.get(how, text)


@given(subject=st.sampled_from(SUBJECTS), word=st.sampled_from(WORDS),
       place=st.sampled_from(PLACES), verb=st.sampled_from(VERBS), value=password_values(),
       tail=st.sampled_from(TAILS), case=st.sampled_from(["as is", "upper", "lower", "title"]))
@settings(max_examples=400, deadline=None)
def test_generated_plain_passwords_are_refused(
    subject: str, word: str, place: str, verb: str, value: str, tail: str, case: str
) -> None:
    text = _case(f"{subject} {word}{place}{verb} {value}{tail}".strip(), case)
    assert find_secret(text) is not None, text


@given(value=password_values(), word=st.sampled_from(["password", "passphrase", "PIN code"]),
       form=st.sampled_from(["{v} is my {w}", "{v} was the old {w}", "use {v} as the {w}",
                             "I set the {w} to {v}", "we changed our {w} to {v} today",
                             "the new {w} — {v}"]),
       case=st.sampled_from(["as is", "upper", "lower"]))
@settings(max_examples=300, deadline=None)
def test_generated_other_sentence_forms_are_refused(
    value: str, word: str, form: str, case: str
) -> None:
    if "PIN" in word:
        value = "".join(c for c in value if c.isdigit()).ljust(4, "7")[:8]
    if form == "the new {w} — {v}":
        form = "the new {w}: {v}"
    text = _case(form.format(v=value, w=word), case)
    assert find_secret(text) is not None, text


@given(pin=st.text("0123456789", min_size=4, max_size=8),
       form=st.sampled_from(["My bank PIN is {}", "the pin: {}", "PIN {} for the card",
                             "Phone pin code is {}.", "the SIM PIN was {}"]),
       case=st.sampled_from(["as is", "upper", "lower"]))
@settings(max_examples=200, deadline=None)
def test_generated_pins_are_refused(pin: str, form: str, case: str) -> None:
    text = _case(form.format(pin), case)
    assert find_secret(text) is not None, text


def _luhn_complete(body: str) -> str:
    for check in "0123456789":
        if luhn_valid(body + check):
            return body + check
    raise AssertionError("unreachable: one check digit always fits")


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["4", "51", "55", "2221", "34", "37", "6011", "65", "35"]))
    length = draw(st.sampled_from([15, 16] if prefix in ("34", "37") else [16, 16, 19]))
    body = prefix + draw(st.text("0123456789", min_size=length - len(prefix) - 1,
                                 max_size=length - len(prefix) - 1))
    return _luhn_complete(body)


def _grouped(digits: str, separator: str) -> str:
    if not separator:
        return digits
    size = 4
    return separator.join(digits[i:i + size] for i in range(0, len(digits), size))


@given(number=card_numbers(), separator=st.sampled_from(["", " ", "-"]),
       form=st.sampled_from(["my card is {}", "Card number: {}", "{} exp 04/29",
                             "paid with {} yesterday", "VISA {}."]))
@settings(max_examples=300, deadline=None)
def test_generated_card_numbers_are_refused(number: str, separator: str, form: str) -> None:
    grouped = _grouped(number, separator)
    assert find_secret(form.format(grouped)) is not None, grouped


@given(number=card_numbers(), separator=st.sampled_from(["", " ", "-"]))
@settings(max_examples=200, deadline=None)
def test_a_card_number_with_a_wrong_check_digit_passes(number: str, separator: str) -> None:
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert find_secret(f"order reference {_grouped(wrong, separator)} for the shop") is None


ABOUT = ["stored in the keychain", "on the router label", "in 1Password", "kept offline",
         "long and random", "required for the admin page", "written on the blue card",
         "the same as the old one", "changed every 90 days", "not in the vault"]


@given(subject=st.sampled_from(SUBJECTS), word=st.sampled_from([*WORDS, "PIN", "login"]),
       place=st.sampled_from(PLACES), verb=st.sampled_from([" is", " was", " is still"]),
       about=st.sampled_from(ABOUT), case=st.sampled_from(["as is", "upper", "lower"]))
@settings(max_examples=300, deadline=None)
def test_generated_sentences_about_passwords_pass(
    subject: str, word: str, place: str, verb: str, about: str, case: str
) -> None:
    text = _case(f"{subject} {word}{place}{verb} {about}.".strip(), case)
    assert find_secret(text) is None, text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", ["password is ", "the login is a ", "4242 ", "PIN ",
                                  "changed the password ", "x is my password ", "pass-"])
def test_plain_rules_stay_linear_on_floods(unit: str) -> None:
    text = unit * (100_000 // len(unit))
    started = time.perf_counter()
    find_secret(text)
    assert time.perf_counter() - started < 5.0
