"""A credential given a value, whatever words surround it: the intake gate's plain-words rule.

A sentence is a secret when it names a credential -- a password, passphrase, passcode, PIN, a
door / alarm / safe / gate code or lock combination, a login or an account's user and secret --
AND gives it a value: after a binding ("is", "was", ":", "=", "set to", "opens with", …), in the
same clause, a value made of characters ("Tr0ub4dor&3", "4821", "#2580", "2 5 8 0") or of words
("purple monkey dishwasher", "one two three four"). A sentence ABOUT a credential gives none:
what follows the binding says where it is, what it must be or what happened to it ("is stored
in …", "must be 12 characters", "is on the router", "was changed yesterday", "the same as").

Each credential word is found by one pattern; the accept function reads the rest of its clause
(bounded: at most `_REACH` characters), so scanning stays linear. English, German, French,
Spanish, Russian, Chinese, Japanese and Korean credential words; the value judgement is the same.
"""

from __future__ import annotations

import re

from vaultmem.core.lazy_re import lazy_compile

# the kinds of value a credential takes
WORDS = "words"     # password, passphrase, passcode, secret word: characters or words
DIGITS = "digits"   # PIN, door/alarm/safe code, combination: digits (or digit words)
PAIR = "pair"       # login, account, credentials: a user and a secret

_REACH = 160
_LOCKS = frozenset({"safe", "lock", "keypad", "lockbox", "padlock"})
_PASSWORDS = (r"pass(?:word|wd|phrase|code)s?|pass[ \-](?:phrase|code|word)|pwd?"
              r"|wi-?fi[ \-]key|wlan[ \-]key|wpa2?[ \-]key|network[ \-]key|secret[ \-]word"
              r"|[\w\-]{0,12}passwort|kennwort|mot[ \-]de[ \-]passe|contrase(?:ñ|n)a"
              r"|пароль|пароля|senha|wachtwoord")
_DIGIT_WORDS = (r"pins?(?:[ \-]?(?:code|number))?|codes?|combination|combo|lockbox|padlock"
                r"|keypad|safe|lock")
_PAIRS = r"log-?ins?|logons?|sign-?ins?|credentials|creds|accounts?"
_WORD = lazy_compile(
    rf"(?i)(?<![\w\-])(?:(?P<pw>{_PASSWORDS})|(?P<dg>{_DIGIT_WORDS})|(?P<pr>{_PAIRS})"
    rf"|(?P<pass>pass)(?=[ \t]{{0,2}}[:=]))(?![\w\-])")
_CJK_WORD = lazy_compile(
    r"(?P<w>密码|密碼|口令|パスワード|暗証番号|暗号|비밀번호|암호|PIN码)"
    r"[^。．.!?！？\n]{0,12}?(?:是|为|為|は|：|:|는|은|=)[ \t]{0,4}(?P<v>[^\s。．,，、]{3,80})")

# what follows a credential word when the sentence is about the thing, not its value
_COMPOUND = lazy_compile(
    r"(?i)[ \t\-]{1,3}(?:manager|managers|policy|policies|reset|resets|field|fields|hint|hints"
    r"|rules?|length|prompt|strength|requirements?|change|changes|hash|hashes|store|vault"
    r"|pad|page|pages|screen|form|flow|button|url|name|names|server|node|attempts?|protected"
    r"|protection|less|expiry|history|generator|recovery|entry|dialog|box|file|files|shell"
    r"|window|method|methods|provider|helper|prompts|auth|game|fatigue|number|numbers"
    r"|balance|level|manager|holder|owner|settings?|review|of[ \t]conduct|of[ \t]silence"
    r"|panel|lock|locks|details|info|sessions?|feature|type|id|details|problems?|issues?)\b")

# a binding: the value comes next
_BIND = lazy_compile(
    r"(?i)(?:[ \t]{0,4}(?P<colon>[:=＝：]|->|=>|—|–)"
    r"|[ \t]{1,4}(?:is|was|are|were|'s|’s|remains|stays|reads|equals|becomes|ist|lautet|war"
    r"|est|était|es|era|é|это)(?:[ \t]{1,4}(?:now|still|just|currently|always|actually))?"
    r"(?:[ \t]{1,4}(?:set|changed|reset|updated)[ \t]{1,4}to)?"
    r"|[ \t]{1,4}(?:set|changed|reset|updated|switched)[ \t]{1,4}to"
    r"|[ \t]{1,4}(?:opens|unlocks|works|disarms)[ \t]{1,4}with"
    r"(?:[ \t]{1,4}(?:code|the[ \t]{1,4}code))?"
    r"|[ \t]{1,4}(?:takes|accepts))(?![\w\-])")
_CLAUSE_END = lazy_compile(r"[;\n]|[.,!?](?=\s)|\s(?:but|so|because|which|if|when)\s")
_SENTENCE_END = lazy_compile(r"\n|[.!?](?=\s)")
_TO = lazy_compile(r"[ \t]{1,4}to(?![\w\-])")
_SETTING = lazy_compile(
    r"(?i)(?<![\w])(?:set|changed?|reset|updated?|rotated?|switched)(?![\w])")
_FILLER_WORD = lazy_compile(r"[ \t]{1,4}[^\s:=;,.!?]{1,30}")
_MAX_FILLER = 7



def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# words that open a value-less predicate: where the credential is, what it must be, what happened
_ABOUT = _word_set(
    'in on at under inside into onto behind near next beside from via with without within by '
    'for to of about after before since until during between like than as not no never none '
    'nothing stored kept saved written listed shared managed handled sent emailed texted '
    'printed posted known needed required set reset changed updated rotated expired locked '
    'disabled enabled used hidden given shown found lost forgotten taped stuck pinned attached '
    'printed generated the a an this that these those my our your their his her its same '
    'different another other also too very quite rather pretty really so what whatever who '
    'which where how why when there here it one something someone somewhere see ask check use '
    'call get find look contact text email enter type try change reset must should can could '
    'will would may might has have had does did do be been being only just still now always '
    'currently usually probably already either neither both all any some each every many much '
    'more most less least few several expires expiring changes changing works working stays '
    'rotates yesterday today tomorrow again last next once twice later soon earlier')
_JOINS = _word_set(
    'and or but not too very enough nor yet')
# adjectives that say what a credential is like: about-words when they are most of the value
_SOFT_ABOUT = _word_set(
    'long short weak strong correct wrong incorrect invalid valid secure insecure easy hard '
    'simple complicated complex unique random new old fine ok okay good bad case-sensitive '
    'mandatory optional empty blank unchanged default usual different same')
# after a colon the value is given literally: a leading article is part of a passphrase
_ABOUT_AFTER_COLON = _ABOUT - {"the", "a", "an", "my", "our", "your", "this", "that"}
_UNITS = lazy_compile(
    r"(?i)[ \t\-]{0,3}(?:digits?|characters?|chars?|letters?|numbers?|symbols?|words?|times?"
    r"|tries|attempts?|minutes?|hours?|days?|weeks?|months?|years?|long|max(?:imum)?"
    r"|min(?:imum)?|euros?|dollars?|%|percent|seconds?|am|pm|st|nd|rd|th|v|mb|gb|kb|iu|mg|g|kg"
    r"|inch(?:es)?|cm|mm|m|ft|feet|lbs?|x)\b")
_NUMBER_WORDS = _word_set(
    'zero oh one two three four five six seven eight nine ten eleven twelve')
_DIGIT_VALUE = lazy_compile(r"[#*]?\d(?:[ \t\-*#]?\d){2,15}[#*]?(?![\w.,/])")
_LOCK_CONTEXT = lazy_compile(
    r"(?i)(?<![\w])(?:doors?|gates?|alarms?|safes?|locks?|lockbox|padlock|keypad|garage|shed"
    r"|closet|locker|building|entry|entrance|access|unlock|disarm|vault|mailbox|briefcase"
    r"|storage|room|office|phone|tablet|ipad|card|sim|voicemail|atm|bank|app|house|home"
    r"|club|gym|bike|cabin|unit|suitcase|front|back|security)(?![\w])")
_NOT_VALUES = frozenset({
    "password", "passwords", "passphrase", "pin", "none", "null", "nil", "true", "false",
    "required", "optional", "hidden", "empty", "undefined", "unknown", "n/a", "tbd", "todo",
    "xxxx", "****", "secret", "blank",
})
_REFERENCE = lazy_compile(
    r"(?:[$%~<]|\.{1,2}/|/|https?://|[A-Za-z]:\\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\[|\(|$)")
_STRIP = ".,;:!?)]}\"'`*_"
_TRAIL = ".,;:)]}\"'`"


def clause_after(text: str, start: int) -> str:
    """The rest of the clause that begins at `start` (bounded)."""
    window = text[start: start + _REACH]
    end = _CLAUSE_END.search(window)
    return window[: end.start()] if end else window


def _bound_value(text: str, end: int) -> tuple[str, bool] | None:
    """After a credential word ending at `end`: skip a few words of filler ("for the NAS",
    "I set") to a binding; the value after it and whether the binding was a colon."""
    position = end
    setting = _SETTING.search(text, max(0, end - 60), end) is not None
    for _ in range(_MAX_FILLER + 1):
        bind = _BIND.match(text, position)
        if bind is not None:
            return clause_after(text, bind.end()).strip(), bind.group("colon") is not None
        to = _TO.match(text, position) if setting else None
        if to is not None:  # "I set the laptop password to …"
            return clause_after(text, to.end()).strip(), False
        filler = _FILLER_WORD.match(text, position)
        if filler is None:
            return None
        position = filler.end()
    return None


def _colon_later(text: str, end: int) -> str | None:
    """A colon later in the same sentence: "… password is in capitals: GRANDMALOVESYOU"."""
    window = text[end: end + _REACH]
    stop = _SENTENCE_END.search(window)
    sentence = window[: stop.start()] if stop else window
    colon = sentence.find(":")
    return clause_after(text, end + colon + 1).strip() if colon >= 0 else None


def _bare_value(text: str, start: int, end: int) -> str | None:
    """A credential word opening its clause, the value right after it: "PIN 4821",
    "…, password espresso2024", "Alarm disarm code 9090"."""
    before = text[max(0, start - 40): start]
    opener = re.search(r"(?:^|[,;:(]|[.!?]\s)\s*(?:[\w'’\-]+\s+){0,3}$", before) is not None
    if not opener and not re.search(r"(?i)\b(?:with|use|the)\s+$", before):
        return None
    value = clause_after(text, end)
    return value.strip() if value[:1] in " \t" else None


def _first_token(value: str) -> str:
    token = value.split()[0] if value.split() else ""
    quoted = token[:1] in "\"'`“«" and len(token) > 1
    return token if quoted else token.rstrip(_TRAIL)


def _quoted(value: str) -> str | None:
    match = re.match(r"[\"'`“«](?P<q>[^\"'`”»\n]{3,120})[\"'`”»]", value)
    return match.group("q") if match else None


def characters_like(token: str) -> bool:
    """One token that looks like a password: letters with digits or symbols, long digits."""
    token = token.rstrip(_TRAIL).lstrip("\"'`(")
    if len(token) < 4 or token.casefold() in _NOT_VALUES or _REFERENCE.match(token):
        return False
    if any(mark in token for mark in "([{}") or "..." in token or "…" in token:
        return False  # a call, a template field, an elision: not a value
    if re.search(r"(?i)x{4,}|example|placeholder|redacted|changeme|your", token):
        return False
    letters = any(c.isalpha() for c in token)
    digits = any(c.isdigit() for c in token)
    symbols = any(not c.isalnum() and c not in "'’" for c in token)
    if token.isdigit():
        return len(token) >= 4
    if re.fullmatch(r"[A-Za-z]+(?:[/\-][A-Za-z]+)?", token) and len(token.split("-")) < 3:
        return False
    return (letters and digits) or (letters and symbols and len(token) >= 6)


def words_value(value: str, *, colon: bool) -> bool:
    """A value made of words (or one word): not an about-predicate, not a unit, not a link."""
    quoted = _quoted(value)
    if quoted is not None:
        return quoted.strip().casefold() not in _NOT_VALUES
    words = re.findall(r"[^\s]+", value)
    if not words or len(words) > 8:
        return False
    first = words[0].strip(_STRIP).casefold()
    about = _ABOUT_AFTER_COLON if colon else _ABOUT
    if not first or first in about or first in _NOT_VALUES or _REFERENCE.match(words[0]):
        return False
    if first in _SOFT_ABOUT and all(
            w.strip(_STRIP).casefold() in _SOFT_ABOUT | _JOINS for w in words[:4]):
        return False  # "is long", "was correct", "is long and random"
    if first.endswith(("ed", "ly")) and len(words) > 1:
        return False  # "is printed on the label", "is usually the same"
    if characters_like(words[0]):
        return True
    if _UNITS.match(value, len(words[0])) and words[0].strip(_STRIP).isdigit():
        return False  # "8 characters", "12 long"
    alpha = [w.strip(_STRIP) for w in words]
    if not all(re.fullmatch(r"[\w'’&!@#$%^*+\-]+", w) for w in alpha if w):
        return False
    return len(first) >= 3


def digits_value(value: str) -> bool:
    """A code's value: 3-16 digits, spaced or dashed ("2 5 8 0", "12-34-56", "#2580"), or
    number words ("one two three four"); never followed by a unit ("4 digits")."""
    match = _DIGIT_VALUE.match(value)
    if match is not None:
        return _UNITS.match(value, match.end()) is None
    words = [w.strip(_STRIP).casefold() for w in value.split()[:6]]
    run = 0
    for word in words:
        if word not in _NUMBER_WORDS:
            break
        run += 1
    return run >= 3 and (run == len(words) or _UNITS.match(" " + words[run]) is None)


_PAIR_SPLIT = lazy_compile(
    r"[ \t]{0,4}(?:/|,|\bwith\b|\band\b|\bpw\b|\bpass(?:word)?\b)[ \t]{0,4}|[ \t]{1,4}"
    r"|(?<=\w):(?=\S)")


def pair_value(value: str) -> bool:
    """A login's value: a user and a secret ("dmdave / Tr0ub4dor&3", "admin:Sup3rS3cret",
    "ftpuser with ftp2024pass", "sarah.draws / ArtIsLife22")."""
    if value.split() and value.split()[0].strip(_STRIP).casefold() in _ABOUT:
        return False
    parts = _PAIR_SPLIT.split(value.strip())
    parts = [p.rstrip(_TRAIL) for p in parts if p and p.strip(_STRIP)]
    if len(parts) < 2:
        return False
    return any(characters_like(p) for p in parts[1:4])


def _has_lock_context(text: str, start: int, end: int) -> bool:
    window = text[max(0, start - 60): end + 60]
    return _LOCK_CONTEXT.search(window) is not None


def credential_given_value(match: re.Match[str]) -> bool:
    """Whether this credential word is given a value in its clause."""
    text = match.string
    if _COMPOUND.match(text, match.end()):
        return False
    kind = PAIR if match.group("pr") else DIGITS if match.group("dg") else WORDS
    word = match.group(0).casefold()
    if kind == DIGITS and word.startswith(("code", "combination", "combo")) \
            and not _has_lock_context(text, match.start(), match.end()):
        return False
    bound = _bound_value(text, match.end())
    bare = _bare_value(text, match.start(), match.end()) if bound is None else None
    if bound is None and bare is None:
        return False
    value, colon = bound if bound is not None else (bare or "", False)
    if not value:
        return False
    if _judge(kind, word, value, colon=colon, bare=bound is None, text=text,
              start=match.start()):
        return True
    later = _colon_later(text, match.end())
    return later is not None and later != value and _judge(
        kind, word, later, colon=True, bare=False, text=text, start=match.start())


def _judge(kind: str, word: str, value: str, *, colon: bool, bare: bool, text: str,
           start: int) -> bool:
    if kind == DIGITS and word in _LOCKS:  # "safe = 600 IU": a lock takes 4 digits or more
        return digits_value(value) and sum(c.isdigit() for c in value.split(",")[0]) >= 4
    if kind == DIGITS:
        return digits_value(value) or (word.startswith("pin") and characters_like(
            _first_token(value)) and _first_token(value).isdigit())
    if kind == PAIR:
        return pair_value(value)
    if bare:  # no binding: a value of characters, or words after a comma or "the"
        before = text[:start].rstrip()
        return characters_like(_first_token(value)) or (
            not word.startswith("pw") and words_value(value, colon=False) and (
                (len(value.split()) >= 2 and before[-1:] == ",")
                or (len(value.split()) >= 3 and before.casefold().endswith(" the"))))
    if word == "pass" or word.startswith("pw"):
        return characters_like(_first_token(value)) or (colon and words_value(value, colon=True))
    return words_value(value, colon=colon) or digits_value(value)


def cjk_credential(match: re.Match[str]) -> bool:
    value = match.group("v")
    if any(mark in value for mark in "{}()[]<>") or match.string[max(0, match.start() - 2):
                                                            match.start()].endswith("{"):
        return False  # a template field ("-p{{密码}}"), not a value
    return characters_like(value) or (value.isascii() and len(value) >= 4
                                      and value.casefold() not in _NOT_VALUES)


CREDENTIAL_WORD = _WORD
CJK_CREDENTIAL = _CJK_WORD


def _kind(match: re.Match[str]) -> str:
    return PAIR if match.group("pr") else DIGITS if match.group("dg") else WORDS


def words_credential(match: re.Match[str]) -> bool:
    return _kind(match) == WORDS and credential_given_value(match)


def digits_credential(match: re.Match[str]) -> bool:
    return _kind(match) == DIGITS and credential_given_value(match)


def pair_credential(match: re.Match[str]) -> bool:
    return _kind(match) == PAIR and credential_given_value(match)


# "Dave logs into Roll20 as dmdave with Tr0ub4dor&3", "I log in to the laptop with jdoe and …"
LOGS_IN = lazy_compile(
    r"(?i)(?<![\w\-])(?:log|logs|logged|logging|sign|signs|signed|signing)[ \t]{1,4}"
    r"(?:in|into|on|onto)(?![\w\-])(?P<v>[^;.!?\n]{1,120})")


_USER_AND_SECRET = lazy_compile(
    r"(?i)\b(?:as|with|using)[ \t]{1,4}(?P<u>\S{2,60})[ \t]{1,4}(?:with|and|/|using)[ \t]{1,4}"
    r"(?:the[ \t]{1,4}password[ \t]{1,4}|password[ \t]{1,4})?(?P<s>\S{3,80})")


def logs_in_with(match: re.Match[str]) -> bool:
    """A login stated as an action: "… as <user> with <secret>", "… with <user> and <secret>"."""
    tail = match.group("v")
    pair = _USER_AND_SECRET.search(tail)
    return pair is not None and characters_like(pair.group("s"))
