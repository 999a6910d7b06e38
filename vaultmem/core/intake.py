"""The intake gate's pure checks: what a memory may not contain, and tags as Obsidian takes them.

`find_secret` names the KIND of secret it found, never the secret: callers put the kind in an
error message and nothing of the text anywhere. Every pattern is bounded or anchored to the
start of a run (no nested unbounded repetition), so a 100 KB input is scanned in linear time.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import pairwise

PRIVATE_KEY = "private key block"
AWS_ACCESS_KEY = "AWS access key"
AWS_SECRET_KEY = "AWS secret key"
GITHUB_TOKEN = "GitHub token"
GITLAB_TOKEN = "GitLab token"
SLACK_TOKEN = "Slack token"
SLACK_WEBHOOK = "Slack webhook URL"
OPENAI_KEY = "OpenAI-style API key"
GOOGLE_KEY = "Google API key"
STRIPE_KEY = "Stripe key"
HUGGING_FACE_TOKEN = "Hugging Face token"
NPM_TOKEN = "npm token"
JWT = "JWT"
PASSWORD = "password assignment"
CONNECTION_STRING = "connection string with password"
HIGH_ENTROPY = "high-entropy token"

_PLACEHOLDER_WORDS = ("example", "your", "placeholder", "redacted", "dummy", "sample")
_NOT_SECRETS = frozenset({
    "password", "passwd", "pass", "pwd", "secret", "token", "none", "null", "nil", "true",
    "false", "string", "required", "optional", "hidden", "empty", "undefined", "changeit",
})
_SAME_CHAR_RUN = re.compile(r"(.)\1{4}")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_B64URL = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}


def _placeholder(value: str) -> bool:
    """`xxxx`, `<your key>`, `sk-...`, `${TOKEN}`, AWS's documented EXAMPLE keys and the like."""
    lower = value.casefold()
    return (
        any(word in lower for word in _PLACEHOLDER_WORDS)
        or "..." in value or "…" in value
        or any(mark in value for mark in ("<", ">", "${", "{{"))
        or _SAME_CHAR_RUN.search(value) is not None
    )


def _classes(value: str) -> set[str]:
    kinds = set()
    for ch in value:
        kinds.add("upper" if ch.isupper() else "lower" if ch.islower()
                  else "digit" if ch.isdigit() else "symbol")
    return kinds


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits: what random keys have and words do not."""
    return {"upper", "lower", "digit"} <= _classes(value)


# specific formats -----------------------------------------------------------------------------

_Rule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]]


def _value_ok(match: re.Match[str]) -> bool:
    return not _placeholder(match.group("v"))


def _mixed_value_ok(match: re.Match[str]) -> bool:
    return _mixed(match.group("v")) and not _placeholder(match.group("v"))


def _digit_value_ok(match: re.Match[str]) -> bool:
    return any(ch.isdigit() for ch in match.group("v")) and not _placeholder(match.group("v"))


def _private_key_ok(match: re.Match[str]) -> bool:
    """A real block has key material after its header (a header alone is documentation)."""
    window = match.string[match.end(): match.end() + 600]
    if match.group(0).startswith("PuTTY"):
        return "Private-Lines:" in window
    body = re.search(r"[A-Za-z0-9+/]{40}", window)
    return body is not None and not _placeholder(body.group(0))


def _b64url_decode(text: str) -> bytes | None:
    bits = count = 0
    out = bytearray()
    for ch in text:
        value = _B64URL.get(ch)
        if value is None:
            return None
        bits, count = (bits << 6) | value, count + 6
        if count >= 8:
            count -= 8
            out.append((bits >> count) & 0xFF)
            bits &= (1 << count) - 1
    return bytes(out)


def _jwt_ok(match: re.Match[str]) -> bool:
    """The header decodes to a JSON object naming its algorithm."""
    raw = _b64url_decode(match.group("h"))
    try:
        header = raw.decode("utf-8").strip() if raw is not None else ""
    except UnicodeDecodeError:
        return False
    return header.startswith("{") and '"alg"' in header and not _placeholder(match.group("s"))


_RULES: tuple[_Rule, ...] = (
    (PRIVATE_KEY, re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d"),
     _private_key_ok),
    (AWS_ACCESS_KEY, re.compile(
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)(?P<v>[A-Z0-9]{16})(?![A-Za-z0-9])"),
     _value_ok),
    (AWS_SECRET_KEY, re.compile(
        r"(?i)aws[a-z_' \-]{0,30}?secret[a-z_ \-]{0,20}?[\"']?[ \t]{0,3}(?::|=|is\b)[ \t]{0,3}"
        r"[\"'`]?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
     _mixed_value_ok),
    (GITHUB_TOKEN, re.compile(
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_(?P<v>[A-Za-z0-9]{36,251})"
        r"|github_pat_(?P<w>[A-Za-z0-9_]{22,244}))(?![A-Za-z0-9_])"),
     lambda m: not _placeholder(m.group("v") or m.group("w"))),
    (GITLAB_TOKEN, re.compile(r"(?<![A-Za-z0-9_\-])glpat-(?P<v>[A-Za-z0-9_\-]{20,60})"),
     _value_ok),
    (SLACK_TOKEN, re.compile(
        r"(?<![A-Za-z0-9])(?:xox[abposre]-|xapp-\d-)(?P<v>[A-Za-z0-9\-]{10,250})"),
     _digit_value_ok),
    (SLACK_WEBHOOK, re.compile(r"hooks\.slack\.com/services/(?P<v>[A-Za-z0-9_/]{20,120})"),
     _value_ok),
    (OPENAI_KEY, re.compile(
        r"(?<![A-Za-z0-9_\-])sk-(?:proj-|ant-(?:api\d\d-|admin\d\d-)?|svcacct-|admin-)?"
        r"(?P<v>[A-Za-z0-9_\-]{20,300})(?![A-Za-z0-9_\-])"),
     _mixed_value_ok),
    (GOOGLE_KEY, re.compile(
        r"(?<![A-Za-z0-9_\-])AIza(?P<v>[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])"),
     _value_ok),
    (STRIPE_KEY, re.compile(
        r"(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_|whsec_)(?P<v>[0-9A-Za-z]{16,247})"
        r"(?![0-9A-Za-z])"),
     _value_ok),
    (HUGGING_FACE_TOKEN, re.compile(
        r"(?<![A-Za-z0-9_])hf_(?P<v>[A-Za-z]{34,40})(?![A-Za-z0-9_])"),
     lambda m: {"upper", "lower"} <= _classes(m.group("v")) and _value_ok(m)),
    (NPM_TOKEN, re.compile(r"(?<![A-Za-z0-9_])npm_(?P<v>[A-Za-z0-9]{36})(?![A-Za-z0-9_])"),
     _value_ok),
    (JWT, re.compile(
        r"(?<![A-Za-z0-9_\-])(?P<h>eyJ[A-Za-z0-9_\-]{5,1000})\.[A-Za-z0-9_\-]{5,10000}\."
        r"(?P<s>[A-Za-z0-9_\-]{10,4000})"),
     _jwt_ok),
)


# assignments and connection strings ----------------------------------------------------------

_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|passphrase|pwd|secret(?:[ _\-]?key)?|api[ _\-]?key|apikey"
    r"|(?:access|auth|bearer|refresh|api)[ _\-]?token|token|private[ _\-]?key)"
    r"(?![A-Za-z0-9_\-])[\"']?[ \t]{0,4}(?P<sep>:=|=>|=|:|is\b)[ \t]{0,4}"
    r"(?:\"(?P<dq>[^\"\n]{0,200})\"|'(?P<sq>[^'\n]{0,200})'|`(?P<bq>[^`\n]{0,200})`"
    r"|(?P<bare>[^\s\"'`,;]{1,200}))"
)
_CONNECTION = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\[\]]{0,100}:"
    r"(?P<v>[^\s/?#@\[\]]{1,200})@(?=[^\s@])"
)


def _reference(value: str) -> bool:
    """A value that points at a secret instead of being one: `$VAR`, `env("X")`, a path, a URL."""
    return (
        value.startswith(("$", "%", "/", "~/", "./", "../", "http://", "https://"))
        or any(mark in value for mark in "([{")
        or _DOTTED_NAME.fullmatch(value) is not None
        or re.match(r"[A-Za-z]:\\", value) is not None
    )


def _assignment_ok(match: re.Match[str]) -> bool:
    quoted = next((g for g in ("dq", "sq", "bq") if match.group(g) is not None), None)
    value = match.group(quoted) if quoted else match.group("bare").rstrip(".,;:!?)]}")
    value = value.strip()
    if not 6 <= len(value) <= 200 or value.casefold() in _NOT_SECRETS:
        return False
    if _placeholder(value) or _reference(value):
        return False
    if quoted and match.group("sep").casefold() != "is":
        return len(value.split()) <= 4  # a passphrase, not a quoted sentence
    if any(ch.isspace() for ch in value):
        return False
    kinds = _classes(value)
    return ("digit" in kinds and bool(kinds & {"upper", "lower"})) or len(kinds) >= 3


def _connection_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    return (len(value) >= 3 and value.casefold() not in _NOT_SECRETS
            and not _placeholder(value) and not _reference(value))


_CONTEXT_RULES: tuple[_Rule, ...] = (
    (CONNECTION_STRING, _CONNECTION, _connection_ok),
    (PASSWORD, _ASSIGNMENT, _assignment_ok),
)


# generic high-entropy tokens -----------------------------------------------------------------

# Harmless spans that look random: masked out before the entropy scan (specific rules above
# still see them, so a key inside a URL is found).
_MASKS = (
    re.compile(r"data:[\w.+\-]{1,100}/[\w.+\-]{1,100};base64,[A-Za-z0-9+/=]*"),
    re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s<>\"'`)\]]{1,8000}"),
    re.compile(r"(?<![A-Za-z0-9.])www\.[^\s<>\"'`)\]]{1,8000}"),
    re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}"
               r"(?:\.[A-Za-z0-9\-]{1,63}){1,8}"),
    re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}"
               r"-[0-9A-Fa-f]{12}(?![0-9A-Fa-f])"),
    re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521)"
               r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]{1,4}"
               r"AAAA[A-Za-z0-9+/]{16,16000}={0,3}"),
)
_PUBLIC_PEM = re.compile(r"-----BEGIN (?P<label>[A-Z0-9 ]{1,40})-----")
_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{24,}")
_HEX_ONLY = re.compile(r"[0-9A-Fa-f\-]+")
_HASH_LABEL = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[\-_=]")
_WORD_LIKE = re.compile(r"[A-Za-z][a-z]{3,}")
MIN_TOKEN = 24


def _masked(text: str) -> str:
    for pattern in _MASKS:
        text = pattern.sub(" ", text)
    return _mask_public_pem(text)


def _mask_public_pem(text: str) -> str:
    """Certificates and public keys are high-entropy but not secret."""
    pieces, position = [], 0
    for match in _PUBLIC_PEM.finditer(text):
        if match.start() < position or "PRIVATE" in match.group("label"):
            continue
        end_marker = f"-----END {match.group('label')}-----"
        end = text.find(end_marker, match.end(), match.end() + 20_000)
        if end >= 0:
            pieces.append(text[position: match.start()])
            position = end + len(end_marker)
    pieces.append(text[position:])
    return " ".join(pieces)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


def _class_changes(value: str) -> float:
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s"
             for c in value]
    return sum(a != b for a, b in pairwise(kinds)) / max(len(value) - 1, 1)


def _wordiness(value: str) -> float:
    """The share of `value` made of word-like letter runs (identifiers and paths are wordy)."""
    return sum(len(m.group(0)) for m in _WORD_LIKE.finditer(value)) / len(value)


def looks_random(token: str) -> bool:
    """A long token with mixed classes and high entropy that is not a hash, id or name."""
    core = token.strip("=-_/+")
    if len(core) < MIN_TOKEN or _HEX_ONLY.fullmatch(core) or _HASH_LABEL.match(core):
        return False
    if not _mixed(core) or _placeholder(core):
        return False
    if _wordiness(core) >= 0.6 or _class_changes(core) < 0.3:
        return False
    return shannon_entropy(core) >= 0.75 * math.log2(min(len(core), 64))


def _high_entropy(text: str) -> bool:
    return any(looks_random(m.group(0)) for m in _RUN.finditer(_masked(text)))


# the gate ------------------------------------------------------------------------------------


def find_secret(text: str) -> str | None:
    """The kind of secret `text` seems to contain (e.g. "GitHub token"), or None.

    Never returns, logs or keeps any part of the secret itself.
    """
    for kind, pattern, accept in (*_RULES, *_CONTEXT_RULES):
        if any(accept(match) for match in pattern.finditer(text)):
            return kind
    return HIGH_ENTROPY if _high_entropy(text) else None


def check_content(text: str, *, min_chars: int, max_chars: int) -> str | None:
    """Why `text` cannot be saved as a memory, or None when it can."""
    content = text.strip()
    if not content:
        return "nothing to remember: the content is empty"
    if len(content) < min_chars:
        return (f"content too short to remember ({len(content)} characters; "
                f"at least {min_chars})")
    if len(content) > max_chars:
        return (f"content too long for one memory ({len(content)} characters; at most "
                f"{max_chars}): save it as a regular note instead")
    kind = find_secret(content)
    if kind is not None:
        return secret_reason("content", kind)
    return None


def secret_reason(what: str, kind: str) -> str:
    return (f"the {what} looks like it contains a secret ({kind}); vaultmem does not store "
            "secrets: remove it (note where it is kept instead) and save again")


# tags ----------------------------------------------------------------------------------------

_TAG_EXTRA = frozenset("_-/")


def normalise_tag(raw: str) -> str:
    """One tag as Obsidian accepts it, or "" when nothing valid is left."""
    tag = unicodedata.normalize("NFC", raw).strip().lstrip("#").strip()
    tag = re.sub(r"\s+", "-", tag)
    tag = "".join(ch for ch in tag if ch.isalnum() or ch in _TAG_EXTRA)
    tag = re.sub(r"/{2,}", "/", tag).strip("/")
    if all(ch.isdecimal() or ch == "/" for ch in tag):
        return ""  # empty or purely numeric: Obsidian needs one non-numeric character
    return tag


def normalise_tags(tags: Iterable[str]) -> list[str]:
    """Valid Obsidian tags, deduplicated case-insensitively (first spelling kept); invalid
    tags are dropped, never refused."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in tags:
        tag = normalise_tag(raw)
        if tag and tag.casefold() not in seen:
            seen.add(tag.casefold())
            out.append(tag)
    return out


def numbers_agree(a: str, b: str) -> bool:
    """Whether two texts mention the same numbers (port 5432 and port 5433 are two facts)."""
    return _numbers(a) == _numbers(b)


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,:]\d+)*", text))
