"""Provider key formats, generated: every kind is refused in any letter case and named right;
public fingerprints, content ids, hashes, UUIDs and commit ids pass.

Every key here is FAKE: drawn from a seeded generator (hypothesis picks the seed) and assembled
by concatenation, so that repository secret scanners do not take this file for a leak.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.intake import (
    ANTHROPIC_KEY,
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    COHERE_KEY,
    GITHUB_TOKEN,
    GITLAB_TOKEN,
    GOOGLE_KEY,
    GROQ_KEY,
    HUGGING_FACE_TOKEN,
    MISTRAL_KEY,
    NPM_TOKEN,
    OPENAI_KEY,
    PRIVATE_KEY,
    PYPI_TOKEN,
    SLACK_TOKEN,
    STRIPE_KEY,
    find_secret,
)

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
URL_SAFE = ALNUM + "-_"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def draw(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(rng: random.Random) -> str:
    body = "\n".join(draw(rng, 64, ALNUM + "+/") for _ in range(3))
    dashes = "-" * 5
    label = rng.choice(["RSA ", "EC ", "OPENSSH ", ""]) + "PRIVATE " + "KEY"
    return f"{dashes}BEGIN {label}{dashes}\n{body}\n{dashes}END {label}{dashes}"


# kind -> a generator of one key; the prefixes are split so scanners do not match this file
KEYS: dict[str, Callable[[random.Random], str]] = {
    OPENAI_KEY: lambda r: "s" + "k-" + r.choice(["", "proj-", "svcacct-"]) + draw(
        r, r.choice([48, 51, 100, 156]), r.choice([ALNUM, LOWER_ALNUM, URL_SAFE])),
    ANTHROPIC_KEY: lambda r: "s" + "k-ant-api03-" + draw(r, 93, URL_SAFE) + "AA",
    GOOGLE_KEY: lambda r: "AI" + "za" + draw(r, 35, URL_SAFE),
    HUGGING_FACE_TOKEN: lambda r: "h" + "f_" + draw(r, 34, string.ascii_letters),
    GROQ_KEY: lambda r: "g" + "sk_" + draw(r, 52),
    MISTRAL_KEY: lambda r: "MISTRAL_API_" + "KEY=" + draw(r, 32),
    COHERE_KEY: lambda r: "my cohere key is " + draw(r, 40),
    AWS_ACCESS_KEY: lambda r: "AK" + "IA" + draw(r, 16, string.ascii_uppercase + string.digits),
    AWS_SECRET_KEY: lambda r: "aws_secret_" + "access_key = " + draw(r, 40, ALNUM + "+/"),
    GITHUB_TOKEN: lambda r: "g" + "h" + r.choice("pousr") + "_" + draw(r, 36),
    GITLAB_TOKEN: lambda r: "gl" + "pat-" + draw(r, 20, URL_SAFE),
    SLACK_TOKEN: lambda r: "xo" + "xb-" + draw(r, 12, string.digits) + "-"
    + draw(r, 13, string.digits) + "-" + draw(r, 24),
    STRIPE_KEY: lambda r: r.choice(["s", "r"]) + "k_" + r.choice(["live", "test"]) + "_"
    + draw(r, 24),
    NPM_TOKEN: lambda r: "n" + "pm_" + draw(r, 36),
    PYPI_TOKEN: lambda r: "py" + "pi-AgEIcHlwaS5vcmc" + draw(r, 70, URL_SAFE),
    PRIVATE_KEY: _pem,
}
CASES: dict[str, Callable[[str], str]] = {"as is": str, "lower": str.lower, "upper": str.upper}
SENTENCES = ("Here is the key: {} keep it safe", "{}", "token for the bot — {}.",
             "config line\n  value: {}\n")


def test_every_provider_the_issue_names_has_a_kind() -> None:
    assert len(KEYS) >= 15 and len(set(KEYS)) == len(KEYS)


@pytest.mark.parametrize("kind", sorted(KEYS))
@given(seed=st.integers(0, 2**32), case=st.sampled_from(sorted(CASES)),
       sentence=st.sampled_from(SENTENCES))
@settings(max_examples=12, deadline=None)
def test_generated_keys_are_refused_in_any_case_and_named(
    kind: str, seed: int, case: str, sentence: str
) -> None:
    key = KEYS[kind](random.Random(seed))
    if kind == PRIVATE_KEY and case != "as is":
        case = "as is"  # a private key block's base64 body only means something as written
    text = sentence.format(CASES[case](key))
    assert find_secret(text) == kind


@pytest.mark.parametrize(("text", "kind"), [
    ("s" + "k-proj-abc123def456ghi789jkl012mno345pqr678stu901vwx", OPENAI_KEY),
    ("s" + "k-" + "abcdefghij0123456789abcdefghij0123456789abcdefgh", OPENAI_KEY),
    ("s" + "k-ant-api03-" + "abcdefghij0123456789" * 4 + "abcdefghijklmAA", ANTHROPIC_KEY),
    ("S" + "K-PROJ-ABC123DEF456GHI789JKL012MNO345PQR678STU901VWX", OPENAI_KEY),
])
def test_the_keys_of_the_report_are_refused_and_named(text: str, kind: str) -> None:
    assert find_secret(text) == kind


# harmless look-alikes, generated --------------------------------------------------------------

def _fingerprint(r: random.Random) -> str:
    digest = base64.b64encode(r.randbytes(32)).decode().rstrip("=")
    return f"The NAS host key is SHA256:{digest} (ED25519), check it on first connect."


def _cid(r: random.Random) -> str:
    return f"The dataset is pinned on IPFS as Qm{draw(r, 44, BASE58)} on the gateway."


def _cid_v1(r: random.Random) -> str:
    return f"Pinned as baf{'y'}{draw(r, 55, string.ascii_lowercase + '234567')} this morning."


def _hex_hash(r: random.Random) -> str:
    return f"sha256sum gave {hashlib.sha256(r.randbytes(16)).hexdigest()} for the ISO."


def _uuid(r: random.Random) -> str:
    return f"Journal entry {uuid.UUID(int=r.getrandbits(128), version=4)} was replayed."


def _git_sha(r: random.Random) -> str:
    return f"Fixed in {hashlib.sha1(r.randbytes(8)).hexdigest()}, see the changelog."


LOOKALIKES: dict[str, Callable[[random.Random], str]] = {
    "ssh fingerprint": _fingerprint, "ipfs cid v0": _cid, "ipfs cid v1": _cid_v1,
    "hex hash": _hex_hash, "uuid": _uuid, "git sha": _git_sha,
}


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
@given(seed=st.integers(0, 2**32))
@settings(max_examples=25, deadline=None)
def test_generated_lookalikes_pass(name: str, seed: int) -> None:
    assert find_secret(LOOKALIKES[name](random.Random(seed))) is None


@pytest.mark.parametrize("text", [
    "ssh-keygen -lf shows 256 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s sam@nas (ED25519)",
    "Content id QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG for the docs folder.",
    "The scikit-learn wrapper is called sk-learn-pipeline-wrapper-for-everything in the repo.",
    "Mistral released mistral-large-latest; Cohere has command-r-plus-08-2024.",
])
def test_known_lookalikes_pass(text: str) -> None:
    assert find_secret(text) is None
