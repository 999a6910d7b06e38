"""Secrets written in plain words: a password, passphrase, PIN or login stated in a sentence
("the NAS root password is …", "changed the wifi password to …", "… is my password"), and
payment card numbers (Luhn-valid, with or without spaces or hyphens).

A sentence ABOUT a password ("the password is stored in the keychain", "Password: 8 characters
minimum") names no value: the value is the word after the verb, and it counts only when it looks
like a credential (letters with digits or symbols, digits alone for a PIN, a passphrase of
hyphen-joined words, a quoted phrase). Every pattern is bounded, so scanning stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vaultmem.core.credential_values import (
    CJK_CREDENTIAL,
    CREDENTIAL_WORD,
    LOGS_IN,
    cjk_credential,
    digits_credential,
    logs_in_with,
    pair_credential,
    words_credential,
)
from vaultmem.core.lazy_re import lazy_compile

PLAIN_PASSWORD = "password in plain words"
LOGIN = "login in plain words"
PIN = "PIN"
CARD_NUMBER = "payment card number"

_PASSWORD_WORD = (r"pass(?:word|wd|phrase|code)s?|pass[ \-](?:phrase|code)"
                  r"|pins?(?:[ \-]?(?:code|number))?|wi-?fi[ \-]key|wpa2?[ \-]key|network[ \-]key")
_LOGIN_WORD = r"log-?ins?|logons?|sign-?ins?|credentials|creds"
# what follows a credential word when the sentence is about the thing, not its value
_COMPOUND = (r"manager|managers|policy|policies|reset|resets|field|fields|hint|hints|rules?"
             r"|length|prompt|strength|requirements?|change|changes|hash|hashes|store|vault"
             r"|pad|page|pages|screen|form|flow|button|url|name|names|server|node|attempts?"
             r"|protected|protection|less|expiry|history|generator|recovery|entry|dialog|box"
             r"|file|files|shell|window|method|methods|provider|helper|prompts|auth")
_FILLER = r"(?:[ \t]{1,4}[^\s.!?;:=\"`]{1,30}){0,6}?"
_VERB = (r"(?:[ \t]{1,4}(?:is|was|are|were|reads|equals|becomes|stays)"
         r"(?:[ \t]{1,4}(?:now|still|set[ \t]to|changed[ \t]to|just))?"
         r"|[ \t]{0,4}(?:=|:|->|=>)|'s)")
_VALUE = r"[ \t]{0,4}(?P<v>\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|`[^`\n]{1,120}`|[^\s\"'`]{1,120})"

_STATED = lazy_compile(
    rf"(?i)(?<![A-Za-z0-9_\-])(?P<w>{_PASSWORD_WORD}|{_LOGIN_WORD})(?![A-Za-z0-9_\-])"
    rf"(?![ \t]{{1,4}}(?:{_COMPOUND})\b){_FILLER}{_VERB}{_VALUE}")
_BARE = lazy_compile(  # "password Tr0ub4dor&3", "PIN 4921": no verb, the value right after
    rf"(?i)(?<![A-Za-z0-9_\-])(?P<w>{_PASSWORD_WORD})[ \t]{{1,3}}(?P<v>[^\s\"'`]{{4,120}})")
_CHANGED = lazy_compile(
    rf"(?i)(?<![A-Za-z0-9_\-])(?:set|changed?|reset|updated?|rotated?)[ \t]{{1,4}}"
    rf"[^\n.!?]{{0,60}}?(?P<w>{_PASSWORD_WORD}|{_LOGIN_WORD})(?![A-Za-z0-9_\-])"
    rf"{_FILLER}[ \t]{{1,4}}to{_VALUE}")
_NAMED_AFTER = lazy_compile(  # "hunter22 is my password", "use Tr0ub4dor&3 as the password"
    rf"(?i)(?<![^\s\"'`(])(?P<v>[^\s\"'`]{{4,120}})[ \t]{{1,4}}(?:is|was|as)[ \t]{{1,4}}"
    rf"(?:the|my|our|his|her|their|your)(?:[ \t]{{1,4}}[A-Za-z0-9'\-]{{1,20}}){{0,3}}?"
    rf"[ \t]{{1,4}}(?P<w>{_PASSWORD_WORD}|{_LOGIN_WORD})(?![A-Za-z0-9_\-])"
    rf"(?![ \t]{{1,4}}(?:{_COMPOUND})\b)")

_TRAILING = ".,;:!?)]}"
_NOT_VALUES = frozenset({
    "password", "passwords", "passphrase", "pin", "none", "null", "nil", "true", "false",
    "required", "optional", "hidden", "empty", "undefined", "unknown", "n/a", "tbd",
})
_PARTS = lazy_compile(r"[A-Za-z]{3,20}(?:[-_.][A-Za-z]{3,20}){2,9}")


def _is_reference(value: str) -> bool:
    """A pointer to where a secret is kept, not the secret: `$VAR`, a path, a URL, a call."""
    return (value.startswith(("$", "%", "/", "~/", "./", "../", "http://", "https://", "<"))
            or any(mark in value for mark in "([{") or "..." in value
            or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.?", value) is not None
            or "…" in value or re.match(r"[A-Za-z]:\\", value) is not None)


def credential_like(raw: str, *, pin: bool = False) -> bool:
    """Whether `raw`, the word stated as a password's (or PIN's) value, looks like one."""
    quoted = raw[:1] in "\"'`" and raw[-1:] == raw[:1] and len(raw) >= 2
    value = raw[1:-1].strip() if quoted else raw.rstrip(_TRAILING).strip("*_")
    if not value or value.casefold() in _NOT_VALUES or _is_reference(value):
        return False
    if re.search(r"(?i)\b(?:x{4,}|your|example|placeholder|redacted|changeme)\b", value):
        return False
    if value.isdigit():
        return 4 <= len(value) <= 12 if pin else 4 <= len(value) <= 64
    if pin:
        return False
    if quoted:
        return len(value) >= 4 and len(value.split()) <= 6
    if len(value) < 5:
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() and c not in "'’" for c in value)
    return ((letters and digits) or (letters and symbols and not _words(value))
            or _PARTS.fullmatch(value) is not None)


def _words(value: str) -> bool:
    """`and/or`, `e-mail`, `TCP/IP`: two short words joined, not a password."""
    pieces = re.split(r"[/\-]", value)
    return len(pieces) == 2 and all(p.isalpha() and len(p) <= 12 for p in pieces)


def _is_pin_word(word: str) -> bool:
    return word.casefold().startswith("pin")


def _stated_ok(match: re.Match[str]) -> bool:
    word = match.group("w")
    if re.fullmatch(f"(?i){_LOGIN_WORD}", word):
        return False  # logins are checked by `_login_ok`
    return credential_like(match.group("v"), pin=_is_pin_word(word))


def _pin_bare_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    return (_is_pin_word(match.group("w")) and value.rstrip(_TRAILING).isdigit()
            and credential_like(value, pin=True))


def _bare_ok(match: re.Match[str]) -> bool:
    word, value = match.group("w"), match.group("v")
    if _is_pin_word(word):
        return False  # `_pin_bare_ok`
    plain = value.rstrip(_TRAILING)
    return len(plain) >= 6 and not plain.isdigit() and credential_like(value)


_LOGIN_STATED = lazy_compile(
    rf"(?i)(?<![A-Za-z0-9_\-])(?:{_LOGIN_WORD})(?![A-Za-z0-9_\-])"
    rf"(?![ \t]{{1,4}}(?:{_COMPOUND})\b){_FILLER}{_VERB}"
    rf"(?P<v>[ \t]{{0,4}}[^\s.!?;]{{1,80}}(?:[ \t]{{1,4}}[^\s.!?;]{{1,80}}){{0,4}})")


_ABOUT = frozenset({
    "in", "on", "at", "under", "inside", "stored", "kept", "saved", "from", "via", "the", "a",
    "an", "not", "no", "managed", "handled", "shared", "written", "listed", "available", "my",
    "our", "your", "their", "his", "her", "its", "this", "that", "same", "different", "also",
})


def _login_ok(match: re.Match[str]) -> bool:
    """A login states a user and a password: one of its next few words is a credential."""
    tokens = re.split(r"[ \t]+|(?<=\w)[/:](?=\S)", match.group("v").strip())
    if not tokens or tokens[0].casefold().rstrip(_TRAILING) in _ABOUT:
        return False  # "credentials are in 1Password": where they are, not what
    return any(credential_like(token) and not token.isdigit() for token in tokens if token)


def _pin_stated_ok(match: re.Match[str]) -> bool:
    return _is_pin_word(match.group("w")) and credential_like(match.group("v"), pin=True)


def _named_after_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    if _is_pin_word(match.group("w")):
        return credential_like(value, pin=True)
    plain = value.rstrip(_TRAILING)
    return credential_like(value) and (not plain.isdigit() or len(plain) >= 6)


# payment cards --------------------------------------------------------------------------------

_CARD = lazy_compile(
    r"(?<![\w.,\-/])(?:\d{13,19}|\d{3,6}(?:(?P<s>[ \-])\d{3,6}){2,4})(?!\w)(?!\.\d|,\d)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, ch in enumerate(reversed(digits)):
        value = int(ch)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_ok(match: re.Match[str]) -> bool:
    text = match.group(0)
    separator = match.group("s")
    if separator and text.count(separator) != len(re.findall(r"[ \-]", text)):
        return False  # mixed separators: a date or a phone number, not a card
    digits = re.sub(r"[ \-]", "", text)
    return (13 <= len(digits) <= 19 and digits[0] in "23456" and len(set(digits)) > 1
            and luhn_valid(digits))


PlainRule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]]

PLAIN_RULES: tuple[PlainRule, ...] = (
    (CARD_NUMBER, _CARD, _card_ok),
    (PIN, _STATED, _pin_stated_ok),
    (PLAIN_PASSWORD, _STATED, _stated_ok),
    (PLAIN_PASSWORD, _CHANGED, _stated_ok),
    (PIN, _BARE, _pin_bare_ok),
    (PLAIN_PASSWORD, _BARE, _bare_ok),
    (PLAIN_PASSWORD, _NAMED_AFTER, _named_after_ok),
    (LOGIN, _LOGIN_STATED, _login_ok),
    (PIN, CREDENTIAL_WORD, digits_credential),
    (PLAIN_PASSWORD, CREDENTIAL_WORD, words_credential),
    (LOGIN, CREDENTIAL_WORD, pair_credential),
    (LOGIN, LOGS_IN, logs_in_with),
    (PLAIN_PASSWORD, CJK_CREDENTIAL, cjk_credential),
)
