"""The intake gate's pure checks: secrets found by kind, harmless look-alikes left alone, tags.

Every secret below is FAKE: format-valid strings from a seeded random generator, assembled by
concatenation so that repository secret scanners do not take this file for a leak.
"""

from __future__ import annotations

import base64
import json
import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultmem.core.intake import (
    ANTHROPIC_KEY,
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    CONNECTION_STRING,
    GITHUB_TOKEN,
    GITLAB_TOKEN,
    GOOGLE_KEY,
    HIGH_ENTROPY,
    HUGGING_FACE_TOKEN,
    JWT,
    NPM_TOKEN,
    OPENAI_KEY,
    PASSWORD,
    PRIVATE_KEY,
    SLACK_TOKEN,
    SLACK_WEBHOOK,
    STRIPE_KEY,
    check_content,
    find_secret,
    normalise_tags,
    numbers_agree,
    shannon_entropy,
)

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
B64URL = B62 + "-_"


def fake(n: int, seed: int, alphabet: str = B62) -> str:
    """A deterministic random-looking string with every character class of `alphabet` in it
    (as a real key has)."""
    rng = random.Random(seed)
    wanted = [str.isupper, str.islower, str.isdigit]
    wanted = [test for test in wanted if any(test(c) for c in alphabet)]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if all(any(test(c) for c in value) for test in wanted):
            return value


def upper_fake(n: int, seed: int) -> str:
    return fake(n, seed, string.ascii_uppercase + string.digits)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def pem(label: str, seed: int) -> str:
    body = "\n".join(fake(64, seed + i, B64) for i in range(4))
    dashes = "-" * 5
    return f"{dashes}BEGIN {label}{dashes}\n{body}\n{dashes}END {label}{dashes}"


def jwt(seed: int) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": "sam", "iat": 1790000000}).encode())
    return f"{header}.{payload}.{fake(43, seed, B64URL)}"


GH = "gh"  # split so that scanners do not see whole token prefixes in this file
SK = "sk"
XOX = "xo" + "x"

SECRETS: list[tuple[str, str]] = [
    (PRIVATE_KEY, "Deploy key for the NAS backups:\n" + pem("RSA " + "PRIVATE KEY", 1)
     + "\nkeep it off the wiki."),
    (PRIVATE_KEY, "The laptop's key, in case I lose it:\n" + pem("OPENSSH " + "PRIVATE KEY", 2)),
    (PRIVATE_KEY, "TLS key for the intranet: " + pem("EC " + "PRIVATE KEY", 3)),
    (PRIVATE_KEY, "PKCS8 export from the old server\n" + pem("PRIVATE " + "KEY", 4)),
    (PRIVATE_KEY, "Signing key:\n" + pem("PGP PRIVATE " + "KEY BLOCK", 5)),
    (PRIVATE_KEY, "PuTTY-User-" + "Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\n"
     + fake(40, 6, B64) + "\nPrivate-Lines: 1\n" + fake(40, 7, B64)),
    (AWS_ACCESS_KEY, "Sam's staging key is AK" + "IA" + upper_fake(16, 8) + " — rotate monthly."),
    (AWS_ACCESS_KEY, "AWS's docs use AK" + "IAIOSFODNN7EXAMPLE as the sample access key."),
    (AWS_ACCESS_KEY, "temporary creds from the role: AS" + "IA" + upper_fake(16, 9)
     + " (expires at noon)"),
    (AWS_SECRET_KEY, "aws_secret_" + "access_key = " + fake(40, 10, B64)),
    (AWS_SECRET_KEY, "The AWS backup user's secret key is " + fake(40, 11, B64) + ", don't share."),
    (GITHUB_TOKEN, "CI pushes with " + GH + "p_" + fake(36, 12) + " until we move to an app."),
    (GITHUB_TOKEN, "oauth token from the device flow: " + GH + "o_" + fake(36, 13)),
    (GITHUB_TOKEN, "user-to-server " + GH + "u_" + fake(36, 14) + " for the bot"),
    (GITHUB_TOKEN, "the app installation uses " + GH + "s_" + fake(36, 15)),
    (GITHUB_TOKEN, "refresh with " + GH + "r_" + fake(76, 16) + " when it expires"),
    (GITHUB_TOKEN, "fine-grained one: github_" + "pat_" + fake(22, 17) + "_" + fake(59, 18)),
    (GITLAB_TOKEN, "GitLab mirror token glp" + "at-" + fake(20, 19) + " (read only)"),
    (SLACK_TOKEN, "The standup bot posts with " + XOX + "b-" + "1234567890-9876543210-"
     + fake(24, 20) + "."),
    (SLACK_TOKEN, "my user token " + XOX + "p-" + "1234567890-1234567890-1234567890-"
     + fake(32, 21).lower()),
    (SLACK_TOKEN, "legacy app token " + XOX + "a-2-" + fake(30, 22)),
    (SLACK_TOKEN, "socket mode needs xa" + "pp-1-A0" + fake(9, 23).upper() + "-1234567890-"
     + fake(40, 24).lower()),
    (SLACK_WEBHOOK, "alerts go to https://hooks.sl" + "ack.com/services/T0" + upper_fake(8, 25)
     + "/B0" + upper_fake(8, 26) + "/" + fake(24, 27)),
    (OPENAI_KEY, "The summariser script uses " + SK + "-" + fake(48, 28) + " for now."),
    (OPENAI_KEY, "project key " + SK + "-proj-" + fake(100, 29, B64URL) + " in the notebook"),
    (ANTHROPIC_KEY, "Claude key: " + SK + "-ant-api03-" + fake(93, 30, B64URL) + "AA"),
    (GOOGLE_KEY, "Maps embed key AI" + "za" + fake(35, 31, B64URL) + " restricted to the site."),
    (STRIPE_KEY, "billing uses " + SK + "_live_" + fake(24, 32) + " in production"),
    (STRIPE_KEY, "restricted key rk" + "_live_" + fake(32, 33) + " for reporting"),
    (HUGGING_FACE_TOKEN, "download models with h" + "f_" + fake(34, 34, string.ascii_letters)),
    (NPM_TOKEN, "publish token np" + "m_" + fake(36, 35) + " lives in CI"),
    (JWT, "the admin session cookie was " + jwt(36) + " — it expires in a day"),
    (PASSWORD, "NAS login:\nuser: sam\npassword: Tr0ub4dor&3xK"),
    (PASSWORD, "The .env for the wiki has DB_PASSWORD=kT9vLq2mPz and nothing else."),
    (PASSWORD, "my router password is hunter22 (yes, really)"),
    (PASSWORD, 'config.json has "api_key": "' + fake(32, 37).lower() + '" for the weather API'),
    (PASSWORD, "token = '" + fake(28, 38) + "' # the bot"),
    (PASSWORD, "Vault unseal secret: \"correct horse battery staple\""),
    (PASSWORD, "mysql -u root --pwd=Winter2026! on the old box"),
    (PASSWORD, "The API key is 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for the geocoder."),
    (PASSWORD, "Guest Wi-Fi: SSID HomeNet-5G, the password: Sunflower-River-42"),
    (CONNECTION_STRING, "The app connects to postgres://wiki:s3cr3t-Pa55@db.internal:5432/wiki"),
    (CONNECTION_STRING, "Atlas: mongodb+srv://admin:" + fake(16, 39) + "@cluster0.mongodb.net/app"),
    (CONNECTION_STRING, "cache at redis://:Xy7pQ2rT@10.0.0.5:6379/0 for sessions"),
    (HIGH_ENTROPY, "The vendor's webhook signing value we got by mail: " + fake(40, 40)),
    (HIGH_ENTROPY, "backup encryption blob " + fake(44, 41, B64) + " (store offline)"),
    (HIGH_ENTROPY, "The dashboard's embed credential — " + fake(32, 42, B64URL) + " — don't lose"),
]


def _image_b64() -> str:
    return base64.b64encode(random.Random(7).randbytes(900)).decode()


LOOKALIKES: list[str] = [
    "Sam's memory id is 550e8400-e29b-41d4-a716-446655440000, see the journal.",
    "Both runs share trace 9B2E4F1A-7C3D-4E5F-8A9B-0C1D2E3F4A5B and "
    "1c9d3f0e-5b2a-4f8e-9d7c-6a5b4c3d2e1f.",
    "Fixed in commit 3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a; reverted in 9f0e1d2.",
    "The ISO's sha256 is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.",
    "Pinned the image to sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
    "Screenshot of the panel: ![](data:image/png;base64," + _image_b64() + ")",
    'Inline logo <img src="data:image/jpeg;base64,' + _image_b64() + '" alt="logo"> in the README',
    "Search was https://example.com/search?q=vaultmem&page=2&sort=recent#results, bookmarked.",
    "Design doc: https://docs.google.com/document/d/1aBcD3fGhIjK4lMnOpQ5rStUvWxYz6AbCdEfGh/edit"
    "#heading=h.4kx8s7q2m1",
    "The talk is at https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s (skip the intro).",
    "Campaign link https://shop.example.org/p/42?utm_source=newsletter&utm_medium=email"
    "&utm_campaign=AutumnSale2026&fbclid=IwAR2xYz9QpLm7KdV3bNc8TfRg1HsJ0WuE5o",
    "The vault lives in /Users/Sam/Library/Mobile Documents/iCloud~md~obsidian/Documents/Vault2024"
    " and the index in ~/.local/share/vaultmem/Vault2024/lance.",
    r"On Windows it is C:\Users\Sam\AppData\Roaming\obsidian\Vault2024\plugins\vaultmem-bridge.",
    "Subresource integrity: integrity=\"sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPz"
    "Qho1wx4JwY8wC\" on the CDN script tag.",
    "Upgraded to v2.14.3-rc.1+build.20261120 then Python 3.11.9 and lancedb 0.17.0.",
    "Deployed 2026-11-20T12:00:00+00:00, rolled back at 2026-11-20T13:45:10Z.",
    "See [[Homelab#^a1b2c3]] and the block ^d4e5f6 for the wiring.",
    "Mail sam.jones+newsletter@example.com or ops-team@mail.example.co.uk about it.",
    "If you forget it, reset your password in settings and log in again.",
    "The workshop wifi password is on the router label, not in the vault.",
    "The docs say to write password: <your password> in the config.",
    "Put API_KEY=xxxx in .env and never commit it.",
    "OpenAI keys look like sk-... and go into the keychain.",
    "CI reads token: ${GITHUB_TOKEN} from the secrets store.",
    "In code: password = os.environ['DB_PASSWORD'] and api_key = settings.WEATHER_KEY.",
    "Slack's docs show https://hooks.sl" + "ack.com/services/T00000000/B00000000/"
    "XXXXXXXXXXXXXXXXXXXXXXXX as the webhook format.",
    "The handler is getUserById2FactorAuthenticationHandler in AuthService2024Controller.",
    "Add my laptop: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fake(43, 43, B64) + " sam@laptop",
    "The public cert for the proxy:\n" + pem("CERTIFICATE", 44),
    "An OpenSSH key file starts with the line -----BEGIN OPENSSH PRIVATE KEY----- and nothing "
    "else should be shared.",
    "Renamed memories/2026-11-06 sam-prefers-restic-over-borg.md to the new scheme.",
    "Settings: max_tokens: 4096, token_limit=8000, password_min_length: 12.",
    "The secret is to knead the dough longer and rest it overnight.",
    "pwd: /home/sam/projects/vaultmem after the cd.",
    "Local dev uses postgres://user:password@localhost:5432/app as in the README.",
    "Prod connects as postgres://app@db.internal:5432/app with a client certificate.",
    "The access token is short-lived; refresh it every hour.",
    "Open it with obsidian://open?vault=Work&file=Projects%2FVaultmem%2FRoadmap in one click.",
    "Password: 8 characters minimum, and a token: 3 per minute rate limit.",
    "Invoice INV-2026-000123 was paid on 2026-11-02 by transfer.",
    "JWTs start with eyJ because that is how base64 of {\" begins.",
    "The scikit-learn (sk-learn) pipeline notes are in ML/Pipelines.",
    "Secret santa: Sam draws Alex, budget 30 EUR.",
    "OAuth redirect: https://app.example.com/callback?code=4%2F0AX4XfWh&state=xyz#done",
    "In the shell: export GITHUB_TOKEN=$(gh auth token) before the release script.",
    "The schema says api_key: string (required) and token: Bearer <jwt>.",
    "The K8s secret is named db-credentials-v2 in namespace prod.",
    "Renamed TestHelperForUserAccountMigration2024Q3Part2 to something shorter.",
    "The tracking number is 1Z999AA10123456784 for the parcel.",
    "npm install --save-dev @types/node@20.11.5 fixed the build.",
    "The NAS password is stored in the keychain under 'nas', nowhere else.",
]


def test_the_table_is_big_enough() -> None:
    kinds = {kind for kind, _ in SECRETS}
    assert len(SECRETS) >= 30 and len(LOOKALIKES) >= 30
    assert {PRIVATE_KEY, AWS_ACCESS_KEY, AWS_SECRET_KEY, GITHUB_TOKEN, SLACK_TOKEN,
            SLACK_WEBHOOK, OPENAI_KEY, GOOGLE_KEY, STRIPE_KEY, JWT, PASSWORD,
            CONNECTION_STRING, HIGH_ENTROPY} <= kinds


def test_gate_has_no_false_positives_or_negatives() -> None:
    negatives = [i for i, (_, text) in enumerate(SECRETS) if find_secret(text) is None]
    positives = [i for i, text in enumerate(LOOKALIKES) if find_secret(text) is not None]
    fp, fn = len(positives), len(negatives)
    print(f"intake gate: {fp} false positives, {fn} false negatives over "
          f"{len(SECRETS)} secrets and {len(LOOKALIKES)} look-alikes")
    assert (positives, negatives) == ([], [])


@pytest.mark.parametrize(("kind", "text"), SECRETS, ids=[f"{k}-{i}" for i, (k, _) in
                                                        enumerate(SECRETS)])
def test_each_secret_is_found_as_its_kind(kind: str, text: str) -> None:
    assert find_secret(text) == kind


@pytest.mark.parametrize("text", LOOKALIKES, ids=[f"lookalike-{i}" for i in range(len(LOOKALIKES))])
def test_each_lookalike_is_accepted(text: str) -> None:
    assert find_secret(text) is None


@pytest.mark.parametrize(("kind", "text"), SECRETS[::7])
def test_the_refusal_names_the_kind_but_never_the_secret(kind: str, text: str) -> None:
    reason = check_content(text, min_chars=12, max_chars=20_000)
    assert reason is not None and f"({kind})" in reason
    for word in text.split():
        if len(word) >= 16:
            assert word not in reason


@pytest.mark.parametrize(("text", "expected"), [
    ("", "content is empty"),
    ("   \n\t ", "content is empty"),
    ("tiny", "too short to remember (4 characters; at least 12)"),
    ("x" * 101, "too long for one memory (101 characters; at most 100)"),
    ("Sam keeps the spare bike keys in the blue tin.", None),
])
def test_check_content_reasons(text: str, expected: str | None) -> None:
    reason = check_content(text, min_chars=12, max_chars=100)
    assert reason == expected if expected is None else expected in (reason or "")


def test_length_limits_count_the_stripped_text() -> None:
    assert check_content("  " + "a" * 12 + "  ", min_chars=12, max_chars=12) is None


def test_numbers_must_agree_for_a_near_duplicate() -> None:
    assert numbers_agree("port 5433 on staging", "staging runs on port 5433")
    assert not numbers_agree("port 5433 on staging", "port 5432 on staging")
    assert not numbers_agree("replaced in 2025", "replaced")


def test_entropy_of_simple_strings() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


# tags ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("tags", "expected"), [
    (["#home", " Home ", "HOME"], ["home"]),
    (["my tag", "  two   words "], ["my-tag", "two-words"]),
    (["c#", "a+b", "tag!?", "émigré", "日本語"], ["c", "ab", "tag", "émigré", "日本語"]),
    (["/project/web/", "a//b", "///"], ["project/web", "a/b"]),
    (["1984", "2024/11", "y1984", "#", "", "  ", "🎉"], ["y1984"]),
    (["Project/Web", "project/web", "project/mobile"], ["Project/Web", "project/mobile"]),
    (["snake_case", "kebab-case"], ["snake_case", "kebab-case"]),
])
def test_normalise_tags_examples(tags: list[str], expected: list[str]) -> None:
    assert normalise_tags(tags) == expected


def _valid_tag(tag: str) -> bool:
    return (
        bool(tag)
        and all(ch.isalnum() or ch in "_-/" for ch in tag)
        and not tag.startswith("/") and not tag.endswith("/") and "//" not in tag
        and not all(ch.isdecimal() or ch == "/" for ch in tag)
    )


@given(st.lists(st.text(max_size=30), max_size=12))
@settings(max_examples=400, deadline=None)
def test_normalised_tags_always_follow_obsidians_rules(tags: list[str]) -> None:
    out = normalise_tags(tags)
    assert all(_valid_tag(tag) for tag in out)
    assert len({tag.casefold() for tag in out}) == len(out)
    assert normalise_tags(out) == out


# robustness ----------------------------------------------------------------------------------

@given(st.text(max_size=3000))
@settings(max_examples=300, deadline=None)
def test_find_secret_never_raises(text: str) -> None:
    assert find_secret(text) in (None, *{kind for kind, _ in SECRETS})


FRAGMENTS = [
    "AKIA", "ASIA", "-----BEGIN ", " PRIVATE KEY-----", "eyJ", "eyJhbGciOi.", ".", "sk-",
    "sk-proj-", "ghp_", "github_pat_", "xoxb-1", "hooks.slack.com/services/", "AIza", "://",
    ":", "@", "a", "A1", "/", "=", "+", "-", "_", " ", "\n", "password", "password: ",
    " is ", "token=", "\"", "'", "data:image/png;base64,", "https://x.io/", "www.", "0",
    "sha256-", "ssh-ed25519 AAAA", "-----END ", "x", "aws secret ", "PuTTY-User-Key-File-2",
]


@pytest.mark.timeout(300)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), min_size=1, max_size=40))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_find_secret_is_linear_on_100_kb_inputs(pieces: list[str]) -> None:
    unit = "".join(pieces) or "a"
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    started = time.perf_counter()
    find_secret(text)
    # catastrophic backtracking would take minutes; a linear scan takes well under a second
    assert time.perf_counter() - started < 5.0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("unit", ["a", "A1", "eyJ", "AKIA", "password: ", "-----BEGIN ",
                                  "aws secret is ", "x@", "http://", "aB3/", "sk-", " "])
def test_single_fragment_floods_are_fast(unit: str) -> None:
    text = unit * (100_000 // len(unit))
    started = time.perf_counter()
    find_secret(text)
    assert time.perf_counter() - started < 5.0
