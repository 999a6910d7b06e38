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
from collections.abc import Iterable
from itertools import pairwise

from vaultmem.core.lazy_re import lazy_compile
from vaultmem.core.plain_secrets import CARD_NUMBER, LOGIN, PIN, PLAIN_PASSWORD, PLAIN_RULES
from vaultmem.core.secret_rules import (
    ANTHROPIC_KEY,
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    COHERE_KEY,
    GITHUB_TOKEN,
    GITLAB_TOKEN,
    GOOGLE_KEY,
    GOOGLE_OAUTH_TOKEN,
    GROQ_KEY,
    HUGGING_FACE_TOKEN,
    JWT,
    MISTRAL_KEY,
    NPM_TOKEN,
    OPENAI_KEY,
    PRIVATE_KEY,
    PYPI_TOKEN,
    RULES,
    SLACK_TOKEN,
    SLACK_WEBHOOK,
    STRIPE_KEY,
    Rule,
    classes,
    mixed,
    placeholder,
)

__all__ = [
    "ANTHROPIC_KEY", "AWS_ACCESS_KEY", "AWS_SECRET_KEY", "CARD_NUMBER", "COHERE_KEY",
    "CONNECTION_STRING", "GITHUB_TOKEN", "GITLAB_TOKEN", "GOOGLE_KEY", "GOOGLE_OAUTH_TOKEN",
    "GROQ_KEY", "HIGH_ENTROPY", "HUGGING_FACE_TOKEN", "JWT", "LOGIN", "MISTRAL_KEY",
    "NPM_TOKEN", "OPENAI_KEY", "PASSWORD", "PIN", "PLAIN_PASSWORD", "PRIVATE_KEY",
    "PYPI_TOKEN", "SLACK_TOKEN", "SLACK_WEBHOOK", "STRIPE_KEY",
    "check_content", "find_secret", "looks_random", "normalise_tag", "normalise_tags",
    "numbers_agree", "secret_reason", "shannon_entropy", "tag_key",
]

PASSWORD = "password assignment"
CONNECTION_STRING = "connection string with password"
HIGH_ENTROPY = "high-entropy token"

_NOT_SECRETS = frozenset({
    "password", "passwd", "pass", "pwd", "secret", "token", "none", "null", "nil", "true",
    "false", "string", "required", "optional", "hidden", "empty", "undefined", "changeit",
})
_DOTTED_NAME = lazy_compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_placeholder = placeholder
_classes = classes
_mixed = mixed
_Rule = Rule


# assignments and connection strings ----------------------------------------------------------

_ASSIGNMENT = lazy_compile(
    r"(?i)(?:password|passwd|passphrase|pwd|secret(?:[ _\-]?key)?|api[ _\-]?key|apikey"
    r"|(?:access|auth|bearer|refresh|api)[ _\-]?token|token|private[ _\-]?key)"
    r"(?![A-Za-z0-9_\-])[\"']?[ \t]{0,4}(?P<sep>:=|=>|=|:|is\b)[ \t]{0,4}"
    r"(?:\"(?P<dq>[^\"\n]{0,200})\"|'(?P<sq>[^'\n]{0,200})'|`(?P<bq>[^`\n]{0,200})`"
    r"|(?P<bare>[^\s\"'`,;]{1,200}))"
)
_CONNECTION = lazy_compile(
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
    lazy_compile(r"data:[\w.+\-]{1,100}/[\w.+\-]{1,100};base64,[A-Za-z0-9+/=]*"),
    lazy_compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s<>\"'`)\]]{1,8000}"),
    lazy_compile(r"(?<![A-Za-z0-9.])www\.[^\s<>\"'`)\]]{1,8000}"),
    lazy_compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}"
               r"(?:\.[A-Za-z0-9\-]{1,63}){1,8}"),
    lazy_compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}"
               r"-[0-9A-Fa-f]{12}(?![0-9A-Fa-f])"),
    # public-key fingerprints (`SHA256:` + 43 base64 characters, as ssh-keygen -l prints)
    lazy_compile(r"(?i)(?<![A-Za-z0-9])(?:sha(?:1|224|256|384|512)|md5):[A-Za-z0-9+/:=]{16,200}"),
    # IPFS content ids: CIDv0 (`Qm` + 44 base58) and base32 CIDv1 (`bafy…`, `bafk…`)
    lazy_compile(r"(?<![A-Za-z0-9])Qm[1-9A-HJ-NP-Za-km-z]{44}(?![A-Za-z0-9])"),
    lazy_compile(r"(?<![A-Za-z0-9])baf[a-z2-7]{50,120}(?![A-Za-z0-9])"),
    lazy_compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521)"
               r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]{1,4}"
               r"AAAA[A-Za-z0-9+/]{16,16000}={0,3}"),
)
_PUBLIC_PEM = lazy_compile(r"-----BEGIN (?P<label>[A-Z0-9 ]{1,40})-----")
_RUN = lazy_compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{24,}")
_HEX_ONLY = lazy_compile(r"[0-9A-Fa-f\-]+")
_HASH_LABEL = lazy_compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[\-_=]")
_WORD_LIKE = lazy_compile(r"[A-Za-z][a-z]{3,}")
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
    for kind, pattern, accept in (*RULES, *_CONTEXT_RULES, *PLAIN_RULES):
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


def tag_key(tag: str) -> str:
    """A tag as Obsidian compares tags: without its leading '#', ignoring case."""
    return tag.strip().lstrip("#").strip().casefold()


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
        if tag and tag_key(tag) not in seen:
            seen.add(tag_key(tag))
            out.append(tag)
    return out


def numbers_agree(a: str, b: str) -> bool:
    """Whether two texts mention the same numbers (port 5432 and port 5433 are two facts)."""
    return _numbers(a) == _numbers(b)


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,:]\d+)*", text))
