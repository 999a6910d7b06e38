"""The secret formats the intake gate knows, as data: one row per provider format.

The rows follow the public formats that maintained scanners (gitleaks' rules, detect-secrets'
plugins) document, extended with the AI providers an assistant user pastes keys of. They are
kept here, in the pure core, rather than taken from a scanner library: detect-secrets' OpenAI
plugin only knows keys with the legacy `T3BlbkFJ` marker and it has no Anthropic, Google,
Hugging Face, Groq, Mistral or Cohere plugin, and the core must stay stdlib-only.

Rules hold for any letter case (a key typed or pasted in capitals is still a key) and ask
nothing of the key's character mix: real keys need not mix upper case, lower case and digits.
Every pattern is bounded (no nested unbounded repetition), so scanning stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vaultmem.core.lazy_re import lazy_compile

PRIVATE_KEY = "private key block"
AWS_ACCESS_KEY = "AWS access key"
AWS_SECRET_KEY = "AWS secret key"
AZURE_KEY = "Azure storage key"
DIGITALOCEAN_TOKEN = "DigitalOcean token"
ALIBABA_KEY = "Alibaba Cloud access key"
GITHUB_TOKEN = "GitHub token"
GITLAB_TOKEN = "GitLab token"
SLACK_TOKEN = "Slack token"
SLACK_WEBHOOK = "Slack webhook URL"
OPENAI_KEY = "OpenAI API key"
ANTHROPIC_KEY = "Anthropic API key"
GOOGLE_KEY = "Google API key"
GOOGLE_OAUTH_TOKEN = "Google OAuth token"
GROQ_KEY = "Groq API key"
MISTRAL_KEY = "Mistral API key"
COHERE_KEY = "Cohere API key"
STRIPE_KEY = "Stripe key"
HUGGING_FACE_TOKEN = "Hugging Face token"
NPM_TOKEN = "npm token"
PYPI_TOKEN = "PyPI token"
JWT = "JWT"

_PLACEHOLDER_WORDS = ("example", "your", "placeholder", "redacted", "dummy", "sample")
_SAME_CHAR_RUN = lazy_compile(r"(.)\1{4}")
_LONG_SAME_CHAR_RUN = lazy_compile(r"(.)\1{7}")
# a placeholder word that starts or ends the body or one of its `-`/`_`/`.` parts (`YOUR_KEY`,
# `...EXAMPLE`); inside a random run (`…bYourkbz…`) it is chance, not a placeholder
_PLACEHOLDER_WORD = lazy_compile(
    r"(?:^|[-_.])(?:example|your|placeholder|redacted|dummy|sample)"
    r"|(?:example|your|placeholder|redacted|dummy|sample)(?:$|[-_.])")
_WORD_CHAIN = lazy_compile(r"[A-Za-z]{1,15}(?:[-_][A-Za-z]{1,15})*")

Rule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]]


def placeholder(value: str) -> bool:
    """`xxxx`, `<your key>`, `sk-...`, `${TOKEN}`, AWS's documented EXAMPLE keys and the like."""
    lower = value.casefold()
    return (
        any(word in lower for word in _PLACEHOLDER_WORDS)
        or "..." in value or "…" in value
        or any(mark in value for mark in ("<", ">", "${", "{{"))
        or _SAME_CHAR_RUN.search(value) is not None
    )


def placeholder_key(value: str) -> bool:
    """A provider key's body that only pretends to be one: placeholder words or marks, a long
    run of one character or very few distinct characters. A random body may hold a short run
    (`aaaaa`); that alone does not make it a placeholder."""
    lower = value.casefold()
    return (
        _PLACEHOLDER_WORD.search(lower) is not None
        or "..." in value or "…" in value
        or any(mark in value for mark in ("<", ">", "${", "{{"))
        or _LONG_SAME_CHAR_RUN.search(lower) is not None
        or len(set(lower)) < 8
    )


def classes(value: str) -> set[str]:
    kinds = set()
    for ch in value:
        kinds.add("upper" if ch.isupper() else "lower" if ch.islower()
                  else "digit" if ch.isdigit() else "symbol")
    return kinds


def mixed(value: str) -> bool:
    """Upper case, lower case and digits: what random keys have and words do not."""
    return {"upper", "lower", "digit"} <= classes(value)


def _key_ok(match: re.Match[str]) -> bool:
    return not placeholder_key(match.group("v"))


def _sk_key_ok(match: re.Match[str]) -> bool:
    """`sk-` also starts hyphenated names (`sk-learn-pipeline-…`): a body made of short
    letter-only words is a name, not a key (real bodies are long or hold digits)."""
    value = match.group("v")
    return not placeholder_key(value) and _WORD_CHAIN.fullmatch(value) is None


def _digit_key_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    return any(ch.isdigit() for ch in value) and not placeholder_key(value)


def _keyed_value_ok(match: re.Match[str]) -> bool:
    """A value of the key's exact length named by its provider (`mistral key: …`)."""
    return not placeholder_key(match.group("v"))


def _aws_secret_ok(match: re.Match[str]) -> bool:
    return not placeholder_key(match.group("v"))


def _cloud_key_ok(match: re.Match[str]) -> bool:
    """A cloud key in its exact format is refused even when it is a provider's documented
    example (`AKIA…EXAMPLE`): a pasted example key is indistinguishable from a real one in a
    note, and the gate must not teach that a key with a friendly word in it passes. Only an
    obvious template (`AKIAXXXXXXXXXXXXXXXX`) is let through."""
    value = match.group("v").casefold()
    return _LONG_SAME_CHAR_RUN.search(value) is None and len(set(value)) >= 6


def _private_key_ok(match: re.Match[str]) -> bool:
    """A real block has key material after its header (a header alone is documentation)."""
    window = match.string[match.end(): match.end() + 600]
    if match.group(0).casefold().startswith("putty"):
        return "private-lines:" in window.casefold()
    body = re.search(r"[A-Za-z0-9+/]{40}", window)
    return body is not None and not placeholder(body.group(0))


_B64URL = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}


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
    return header.startswith("{") and '"alg"' in header and not placeholder(match.group("s"))


def _prefixed(prefix: str, body: str, *, left: str = "A-Za-z0-9_\\-",
              right: str = "A-Za-z0-9_\\-") -> re.Pattern[str]:
    """`prefix` then the key body `(?P<v>body)`, not inside a longer token, any letter case."""
    return lazy_compile(f"(?i)(?<![{left}])(?:{prefix})(?P<v>{body})(?![{right}])")


def _named(provider: str, length: int) -> re.Pattern[str]:
    """A key without a prefix, named by its provider within the same line (`MISTRAL_API_KEY=…`,
    `my Cohere key is …`)."""
    return lazy_compile(
        f"(?i)(?<![A-Za-z0-9]){provider}[^\\n]{{0,60}}?(?<![A-Za-z0-9])"
        f"(?P<v>[A-Za-z0-9]{{{length}}})(?![A-Za-z0-9])")


RULES: tuple[Rule, ...] = (
    (PRIVATE_KEY, lazy_compile(
        r"(?i)-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d"),
     _private_key_ok),
    (AWS_ACCESS_KEY, _prefixed("AKIA|ASIA|ABIA|ACCA", "[A-Z0-9]{16}", left="A-Za-z0-9",
                               right="A-Za-z0-9"), _cloud_key_ok),
    (AWS_SECRET_KEY, _prefixed("", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY[A-Z0-9]{10}",
                               left="A-Za-z0-9/+", right="A-Za-z0-9/+="), _cloud_key_ok),
    (AZURE_KEY, lazy_compile(
        r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature[^\n]{0,20}?sig)[ \t]{0,3}="
        r"[ \t]{0,3}(?P<v>[A-Za-z0-9+/%]{30,120}={0,2})"), _cloud_key_ok),
    (DIGITALOCEAN_TOKEN, _prefixed("do[opr]_v1_", "[a-f0-9]{64}"), _cloud_key_ok),
    (ALIBABA_KEY, _prefixed("LTAI", "[A-Za-z0-9]{12,20}", left="A-Za-z0-9",
                            right="A-Za-z0-9"), _digit_key_ok),
    (AWS_SECRET_KEY, lazy_compile(
        r"(?i)aws[a-z_' \-]{0,30}?secret[a-z_ \-]{0,20}?[\"']?[ \t]{0,3}(?::|=|is\b)[ \t]{0,3}"
        r"[\"'`]?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
     _aws_secret_ok),
    (GITHUB_TOKEN, _prefixed("gh[pousr]_", "[A-Za-z0-9]{36,251}", left="A-Za-z0-9_",
                             right="A-Za-z0-9_"), _key_ok),
    (GITHUB_TOKEN, _prefixed("github_pat_", "[A-Za-z0-9_]{22,244}", left="A-Za-z0-9_",
                             right="A-Za-z0-9_"), _key_ok),
    (GITLAB_TOKEN, _prefixed("gl(?:pat|dt|rt|ptt|soat|cbt|ft)-", "[A-Za-z0-9_\\-]{20,60}"),
     _key_ok),
    (SLACK_TOKEN, _prefixed("xox[abposre]-|xapp-\\d-", "[A-Za-z0-9\\-]{10,250}",
                            left="A-Za-z0-9", right="A-Za-z0-9"), _digit_key_ok),
    (SLACK_WEBHOOK, lazy_compile(
        r"(?i)hooks\.slack\.com/services/(?P<v>[A-Za-z0-9_/]{20,120})"),
     lambda m: not placeholder(m.group("v"))),
    (ANTHROPIC_KEY, _prefixed("sk-ant-(?:(?:api|admin|oat|sid)\\d\\d-)?",
                              "[A-Za-z0-9_\\-]{20,300}"), _sk_key_ok),
    (OPENAI_KEY, _prefixed("sk-(?!ant-)(?:proj-|svcacct-|admin-|none-)?",
                           "[A-Za-z0-9_\\-]{20,300}"), _sk_key_ok),
    (GROQ_KEY, _prefixed("gsk_", "[A-Za-z0-9]{48,60}"), _key_ok),
    (GOOGLE_KEY, _prefixed("AIza", "[0-9A-Za-z_\\-]{35}"), _key_ok),
    (GOOGLE_OAUTH_TOKEN, _prefixed("ya29\\.", "[0-9A-Za-z_\\-]{30,300}"), _key_ok),
    (STRIPE_KEY, _prefixed("(?:sk|rk)_(?:live|test)_|whsec_", "[0-9A-Za-z]{16,247}",
                           left="A-Za-z0-9_", right="A-Za-z0-9"), _key_ok),
    (HUGGING_FACE_TOKEN, _prefixed("hf_|api_org_", "[A-Za-z]{34,40}", left="A-Za-z0-9_",
                                   right="A-Za-z0-9_"), _key_ok),
    (NPM_TOKEN, _prefixed("npm_", "[A-Za-z0-9]{36}", left="A-Za-z0-9_", right="A-Za-z0-9_"),
     _key_ok),
    (PYPI_TOKEN, _prefixed("pypi-AgE", "[A-Za-z0-9_\\-]{50,400}"), _key_ok),
    (MISTRAL_KEY, _named("mistral", 32), _keyed_value_ok),
    (COHERE_KEY, _named("cohere", 40), _keyed_value_ok),
    (JWT, lazy_compile(
        r"(?<![A-Za-z0-9_\-])(?P<h>eyJ[A-Za-z0-9_\-]{5,1000})\.[A-Za-z0-9_\-]{5,10000}\."
        r"(?P<s>[A-Za-z0-9_\-]{10,4000})"),
     _jwt_ok),
)
