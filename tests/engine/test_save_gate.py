"""The intake gate on every save: secrets refused and never stored or logged anywhere, exact and
near duplicates reinforce instead of piling up, tags normalised, file names real slugs.

In-process tests use the fake embedder (a hashed bag of words); one test drives a real daemon
over its socket; one (marked `model`) checks a real paraphrase with the real model.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from bench.intake_gate import load as load_judged
from tests.core.test_intake import B64, fake, jwt, pem, upper_fake
from vaultmem.api.client import Client
from vaultmem.api.ops import Api
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.core.intake import (
    ANTHROPIC_KEY,
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    CARD_NUMBER,
    CONNECTION_STRING,
    GITHUB_TOKEN,
    GOOGLE_KEY,
    GROQ_KEY,
    HIGH_ENTROPY,
    HUGGING_FACE_TOKEN,
    JWT,
    LOGIN,
    OPENAI_KEY,
    PASSWORD,
    PIN,
    PLAIN_PASSWORD,
    PRIVATE_KEY,
    SLACK_TOKEN,
    SLACK_WEBHOOK,
    STRIPE_KEY,
    find_secret,
)
from vaultmem.errors import Refused
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.apps import fake_app
from vaultmem_testing.daemon import REPO, DaemonProcess, wait_until

NOW = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
B52 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SLUG_PATH = re.compile(r"memories/\d{4}-\d{2}-\d{2} [^\W_A-Z]+(?:-[^\W_A-Z]+)*\.md")

# (kind, text to save, the secret part that must never be stored). All fake, built by
# concatenation so that scanners do not flag this file.
_KEY_BODY = pem("OPENSSH " + "PRIVATE KEY", 101)
CASES: list[tuple[str, str, str]] = [
    (PRIVATE_KEY, "The backup host key:\n" + _KEY_BODY, _KEY_BODY.splitlines()[2]),
    (AWS_ACCESS_KEY, "Sam's staging key is {} — rotate monthly.",
     "AK" + "IA" + upper_fake(16, 102)),
    (AWS_SECRET_KEY, "aws_secret_" + "access_key = {}", fake(40, 103, B64)),
    (GITHUB_TOKEN, "CI pushes with {} for now.", "gh" + "p_" + fake(36, 104)),
    (SLACK_TOKEN, "The standup bot token is {} in the old config.",
     "xo" + "xb-1234567890-9876543210-" + fake(24, 105)),
    (SLACK_WEBHOOK, "Alerts post to {} from the NAS.",
     "https://hooks.sl" + "ack.com/services/T0" + upper_fake(8, 106) + "/B0"
     + upper_fake(8, 107) + "/" + fake(24, 108)),
    (OPENAI_KEY, "The summariser uses {} until the budget runs out.",
     "sk" + "-proj-" + fake(80, 109)),
    (OPENAI_KEY, "{}", "sk" + "-proj-abc123def456ghi789jkl012mno345pqr678stu901vwx"),
    (OPENAI_KEY, "old key {}", "sk" + "-" + fake(48, 116).lower()),
    (ANTHROPIC_KEY, "Claude key {}", "sk" + "-ant-api03-" + fake(93, 117).upper() + "AA"),
    (GROQ_KEY, "Groq: {}", "gs" + "k_" + fake(52, 118).lower()),
    (HUGGING_FACE_TOKEN, "models with {}", "h" + "f_" + fake(34, 119, B52).lower()),
    (GOOGLE_KEY, "Maps embed key {} restricted to the site.", "AI" + "za" + fake(35, 110)),
    (STRIPE_KEY, "Billing runs with {} in production.", "sk" + "_live_" + fake(24, 111)),
    (JWT, "The admin session cookie was {} yesterday.", jwt(112)),
    (PASSWORD, "NAS login for the family share: password: {}", "Tr0ub4dor&3" + fake(6, 113)),
    (CONNECTION_STRING, "The wiki connects to postgres://wiki:{}@db.internal:5432/wiki.",
     "s3cr3t-" + fake(10, 114)),
    (HIGH_ENTROPY, "The vendor's webhook signing value, sent by mail: {}", fake(40, 115)),
    (PLAIN_PASSWORD, "The NAS root password is {}, don't share it",
     "correct-horse-" + "battery-staple"),
    (PLAIN_PASSWORD, "The wifi password at the cabin is {}", "hunter2-Blue-" + "Fox"),
    (LOGIN, "The gitea admin login is sam / {}", "Tr0ub4dor&" + "3x"),
    (PIN, "My bank PIN is {} and that is all", "49" + "21"),
    (CARD_NUMBER, "My card is {}", "4242 4242 " + "4242 4242"),
    (AWS_ACCESS_KEY, "{}", "AK" + "IAIOSFODNN7EXAMPLE"),
]


def text_of(case: tuple[str, str, str]) -> str:
    _, template, secret = case
    return template.format(secret) if "{}" in template else template


def files_containing(needle: str, *places: Path) -> list[str]:
    """Every file under `places` (or the file itself) whose bytes contain `needle`."""
    data = needle.encode("utf-8")
    found = []
    for place in places:
        files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
        found += [str(f) for f in files if data in f.read_bytes()]
    return found


def digest(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Bikes.md").write_text("# Bikes\n\nSpare tubes are in the garage.\n",
                                              encoding="utf-8")
    with fake_app(vault, tmp_path / "data") as app:
        yield app


@pytest.fixture
def api(app: App) -> Api:
    return app.api(clock=lambda: NOW)


def memory_files(app: App) -> list[Path]:
    return sorted((app.root / "memories").glob("*.md"))


# secrets -------------------------------------------------------------------------------------

@pytest.mark.timeout(120)
def test_every_secret_kind_is_refused_and_stored_nowhere(
    app: App, api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.call("save", {"content": "A first, harmless memory: the zorblefrump door sticks."})
    stored = files_containing("zorblefrump", app.data_dir)  # the scan sees what is stored
    assert any("catalog" in f for f in stored) and any(".lance" in f for f in stored)
    before = digest(app.root, app.data_dir)
    for case in CASES:
        kind, _, secret = case
        with pytest.raises(Refused) as refused:
            api.call("save", {"content": text_of(case), "tags": ["ops"]})
        assert refused.value.code == "refused" and refused.value.http_status == 422
        assert f"({kind})" in refused.value.message
        assert secret not in refused.value.message
    assert digest(app.root, app.data_dir) == before  # nothing written: no note, index, journal
    for kind, _, secret in CASES:
        assert files_containing(secret, app.root, app.data_dir) == [], kind
        assert secret not in caplog.text, kind


@pytest.mark.timeout(120)
def test_every_judged_plain_words_secret_is_refused_and_stored_nowhere(
    app: App, api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    """The judged set's secrets that the gate refuses (bench/intake_gate.py: all but the few it
    misses) leave no trace: no note, no index row, no journal line, no file name, no log line."""
    caplog.set_level(logging.DEBUG)
    api.call("save", {"content": "A first, harmless memory: the zorblefrump door sticks."})
    before = digest(app.root, app.data_dir)
    refused = [row.text for row in load_judged() if row.secret and find_secret(row.text)]
    assert len(refused) >= 100
    for text in refused:
        with pytest.raises(Refused) as answer:
            api.call("save", {"content": text, "tags": ["home"]})
        assert text not in answer.value.message
    assert digest(app.root, app.data_dir) == before  # paths are the keys: no new file names
    for text in refused:
        assert files_containing(text, app.root, app.data_dir) == []
        assert text not in caplog.text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("field", ["title", "source", "tags"])
def test_a_secret_in_the_title_source_or_tags_is_refused_too(
    app: App, api: Api, field: str
) -> None:
    token = "gh" + "p_" + fake(36, 120)
    value: object = [token] if field == "tags" else f"key {token}"
    before = digest(app.root, app.data_dir)
    what = "tag" if field == "tags" else field
    with pytest.raises(Refused, match=rf"the {what} looks like it contains a secret \(GitHub"):
        api.call("save", {"content": "The CI bot pushes release tags nightly.", field: value})
    assert digest(app.root, app.data_dir) == before


# duplicates ----------------------------------------------------------------------------------

FACT = "The staging database listens on port 5433 behind pgbouncer."
RECASED = "the STAGING database   listens on port 5433\nbehind PGBOUNCER."
PARAPHRASE = "Behind pgbouncer, the staging database listens on port 5433."


@pytest.mark.timeout(60)
def test_the_same_fact_three_ways_is_one_memory_used_three_times(app: App, api: Api) -> None:
    """Identical, re-cased and re-spaced, and a paraphrase. With the fake embedder (a hashed
    bag of words) a paraphrase that reorders the same words has cosine 1.0 with the original;
    `test_a_real_paraphrase_reinforces_with_the_real_model` checks a real paraphrase."""
    first = api.call("save", {"content": FACT, "tags": ["db"]})
    assert first["created"] is True and first["reinforced"] is None
    memory_id = first["memory"]["id"]
    again = later(app, days=1).call("save", {"content": RECASED})
    assert again["created"] is False
    assert again["reinforced"] == {"id": memory_id, "reason": "an identical memory exists",
                                   "counted": True}
    near = later(app, days=2).call("save", {"content": PARAPHRASE})
    assert near["created"] is False and near["reinforced"]["id"] == memory_id
    reason = near["reinforced"]["reason"]
    assert reason.startswith("a near-duplicate memory exists (cosine ")
    assert float(reason.rsplit(" ", 1)[1].rstrip(")")) >= 0.95
    assert near["memory"]["use_count"] == 3
    assert len(memory_files(app)) == 1
    assert api.call("get", {"id": memory_id})["use_count"] == 3


@pytest.mark.timeout(60)
def test_an_identical_save_reinforces_the_same_memory(app: App, api: Api) -> None:
    first = api.call("save", {"content": FACT})
    again = later(app, days=1).call("save", {"content": FACT})
    assert again["reinforced"] == {"id": first["memory"]["id"],
                                   "reason": "an identical memory exists", "counted": True}
    assert again["memory"]["use_count"] == 2 and len(memory_files(app)) == 1


@pytest.mark.timeout(60)
def test_saving_again_within_the_window_is_not_a_use_and_promotes_nothing(
    app: App, api: Api
) -> None:
    """The same text saved twice in one minute is not evidence that it matters: no use is
    counted, nothing is written, and the memory is not promotable; a day later it counts."""
    first = api.call("save", {"content": FACT})
    path = app.root / first["memory"]["path"]
    before = path.read_bytes()
    again = later(app, minutes=1).call("save", {"content": RECASED})
    assert again["created"] is False and again["reinforced"]["counted"] is False
    assert "not counted as a use" in again["reinforced"]["reason"]
    assert again["memory"]["use_count"] == 1 and path.read_bytes() == before
    assert later(app, minutes=2).call("promote", {"dry_run": True})["promote"] == []
    next_day = later(app, days=1).call("save", {"content": FACT})
    assert next_day["reinforced"]["counted"] is True and next_day["memory"]["use_count"] == 2


def later(app: App, **delta: float) -> Api:
    """The app's Api with a clock `delta` after NOW."""
    return app.api(clock=lambda: NOW + timedelta(**delta))


@pytest.mark.timeout(60)
def test_a_different_number_is_a_different_fact_even_at_high_cosine(app: App, api: Api) -> None:
    base = ("The staging database listens on port {} behind pgbouncer and every app in the "
            "homelab reaches it through the internal name db-staging on the office network.")
    one, other = base.format(5433), base.format(5432)
    vectors = app.embedder.embed([one, other])
    assert float(vectors[0] @ vectors[1]) >= 0.95  # the embedder alone would merge them
    api.call("save", {"content": one})
    second = api.call("save", {"content": other})
    assert second["created"] is True and len(memory_files(app)) == 2


@pytest.mark.timeout(60)
def test_an_unrelated_fact_is_a_new_memory(app: App, api: Api) -> None:
    api.call("save", {"content": FACT})
    other = api.call("save", {"content": "Sam prefers restic over borg for the NAS backups."})
    assert other["created"] is True and len(memory_files(app)) == 2


@pytest.mark.timeout(60)
def test_an_archived_memory_is_not_reinforced(app: App, api: Api) -> None:
    first = api.call("save", {"content": FACT})
    path = app.root / first["memory"]["path"]
    path.write_text(path.read_text(encoding="utf-8").replace("stm_status: active",
                                                             "stm_status: archived"),
                    encoding="utf-8")
    app.sync.sync_paths([first["memory"]["path"]])
    again = api.call("save", {"content": PARAPHRASE})
    assert again["created"] is True


# tags and file names -------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_tags_are_normalised_in_the_note_and_the_answer(app: App, api: Api) -> None:
    saved = api.call("save", {"content": FACT, "tags": [
        "#Home Lab", "home-lab", "2024", "/ops/", "c#", "  ", "db!"]})
    expected = ["Home-Lab", "ops", "c", "db"]
    assert saved["memory"]["tags"] == expected
    fields, _, _ = parse((app.root / saved["memory"]["path"]).read_text(encoding="utf-8"))
    assert fields["tags"] == expected


@pytest.mark.timeout(60)
def test_file_names_are_slugs_and_titles_stay_human(app: App, api: Api) -> None:
    derived = api.call("save", {"content": FACT})["memory"]
    assert derived["path"] == ("memories/2026-11-20 "
                               "the-staging-database-listens-on-port-5433-behind-pgbouncer.md")
    titled = api.call("save", {"content": "The UPS battery in the NAS was replaced today.",
                               "title": "Sam's NAS: UPS battery (Crème edition) #2"})["memory"]
    assert titled["path"] == "memories/2026-11-20 sams-nas-ups-battery-creme-edition-2.md"
    text = (app.root / titled["path"]).read_text(encoding="utf-8")
    assert "\n# Sam's NAS: UPS battery (Crème edition) #2\n" in text
    assert titled["title"] == "Sam's NAS: UPS battery (Crème edition) #2"
    twin = api.call("save", {"content": "A second note about batteries in the garage.",
                             "title": "Sam's NAS: UPS battery (Crème edition) #2"})["memory"]
    assert twin["path"] == "memories/2026-11-20 sams-nas-ups-battery-creme-edition-2-2.md"
    for path in (derived["path"], titled["path"]):
        assert SLUG_PATH.fullmatch(path)


# the real model ------------------------------------------------------------------------------

@pytest.mark.model
@pytest.mark.timeout(600)
def test_a_real_paraphrase_reinforces_with_the_real_model(tmp_path: Path) -> None:
    original = "Sam prefers restic over borg for the NAS backups."
    paraphrase = "For the NAS backups, Sam prefers restic over borg."
    vault = tmp_path / "vault"
    vault.mkdir()
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "default"})
    app = build_app(settings)
    try:
        vectors = app.embedder.embed([original, paraphrase])
        assert float(np.dot(vectors[0], vectors[1])) >= 0.95  # a paraphrase the model agrees on
        api = app.api(clock=lambda: NOW)
        first = api.call("save", {"content": original})
        near = api.call("save", {"content": paraphrase})
        assert near["created"] is False and near["reinforced"]["id"] == first["memory"]["id"]
        assert near["reinforced"]["reason"].startswith("a near-duplicate memory exists")
        other = api.call("save", {"content": "The production database runs on port 5432."})
        assert other["created"] is True
        assert len(list((vault / "memories").glob("*.md"))) == 2
    finally:
        app.close()


# through a real daemon -----------------------------------------------------------------------

class LoggedDaemon(DaemonProcess):
    """A daemon logging at debug level into a file (a pipe nobody reads could fill up)."""

    def __init__(self, vault: Path, data: Path, log: Path) -> None:
        super().__init__(vault, data)
        self.log = log

    def start(self, timeout: float = 60.0) -> Client:
        (self.data / "daemon.json").unlink(missing_ok=True)
        with self.log.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vaultmem", "run", "--log-level", "debug"],
                env=self.env, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT,
            )
        info = self._wait_for_daemon_file(timeout)
        token = (self.data / "token").read_text(encoding="utf-8").strip()
        self.client = Client(info["url"], token, timeout=30)
        wait_until(lambda: not self.status()["daemon"]["indexing"]["running"]
                   and self.status()["daemon"]["indexing"]["last"] is not None, timeout)
        return self.client


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[LoggedDaemon]:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Bikes.md").write_text("# Bikes\n\nSpare tubes are in the garage.\n",
                                              encoding="utf-8")
    process = LoggedDaemon(vault, tmp_path / "data", tmp_path / "daemon.log")
    try:
        process.start()
        yield process
    finally:
        process.stop()


def raw_save(client: Client, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    conn = http.client.HTTPConnection(client._host, client._port, timeout=30)
    try:
        conn.request("POST", "/v1/memories", body=json.dumps(body).encode(),
                     headers={"Authorization": f"Bearer {client.token}",
                              "Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.timeout(180)
def test_the_daemon_refuses_secrets_and_keeps_them_out_of_vault_data_and_log(
    daemon: LoggedDaemon,
) -> None:
    client = daemon.client
    assert client is not None
    for case in CASES:
        kind, _, secret = case
        with pytest.raises(Refused) as refused:
            client.call_op("save", {"content": text_of(case)})
        assert f"({kind})" in refused.value.message and secret not in refused.value.message
    status, body = raw_save(client, {"content": text_of(CASES[3])})
    assert status == 422 and body["error"]["code"] == "refused"  # type: ignore[index]
    saved = client.call_op("save", {"content": FACT, "tags": ["#Home Lab"]})
    again = client.call_op("save", {"content": RECASED})
    near = client.call_op("save", {"content": PARAPHRASE})
    assert saved["created"] and not again["created"] and not near["created"]
    # saved again at once: the same memory, not counted as a use (the resave window)
    assert not again["reinforced"]["counted"] and not near["reinforced"]["counted"]
    assert near["memory"]["use_count"] == 1 and near["memory"]["tags"] == ["Home-Lab"]
    assert SLUG_PATH.fullmatch(saved["memory"]["path"])
    assert any(".lance" in f for f in files_containing("pgbouncer", daemon.data))
    assert daemon.stop() == 0
    log = daemon.log.read_text(encoding="utf-8", errors="replace")
    assert "\"POST /v1/memories HTTP/1.1\" 422" in log  # the capture holds the requests
    for kind, _, secret in CASES:
        assert files_containing(secret, daemon.vault, daemon.data, daemon.log) == [], kind


# titles --------------------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize(("content", "heading"), [
    ("Sam's NAS scrub runs every first Sunday of the month at 02:00, after the backup.",
     "Sam's NAS scrub runs every first Sunday of the month at 02:00, after the backup"),
    ("Restic beats Borg for the NAS. Dedup is better and restores are faster.",
     "Restic beats Borg for the NAS"),
    ("The staging database listens on port 5433 behind pgbouncer in the lab rack\nsince May.",
     "The staging database listens on port 5433 behind pgbouncer in the lab rack"),
])
def test_a_saved_memorys_title_is_its_whole_first_sentence(
    app: App, api: Api, content: str, heading: str
) -> None:
    saved = api.call("save", {"content": content})
    text = (app.root / saved["memory"]["path"]).read_text(encoding="utf-8")
    assert f"\n# {heading}\n" in text
    assert "…" not in text


# spaced uses (SPEC §3.5) ---------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_save_and_a_touch_a_minute_apart_do_not_make_a_memory_permanent(app: App) -> None:
    """The reported case: 2 uses a minute apart, score 1.667, promoted at the next sweep. Now
    the touch counts once with the save; the same touch the next day counts."""
    saved = app.api(clock=lambda: NOW).call(
        "save", {"content": "The NAS admin page is on port 5000 behind the reverse proxy."})
    memory_id = saved["memory"]["id"]
    later(app, minutes=1).call("touch", {"id": memory_id})
    hour = later(app, hours=1)
    shown = hour.call("get", {"id": memory_id})
    assert shown["use_count"] == 2 and shown["decision"] == "keep"
    assert "1 use(s) spaced in time" in shown["reason"]
    assert hour.call("sweep", {"dry_run": False})["promoted"] == []
    note = (app.root / shown["path"]).read_text(encoding="utf-8")
    assert "stm_spaced_uses: 1" in note and "stm_use_count: 2" in note
    later(app, days=1).call("touch", {"id": memory_id})
    promoted = later(app, days=1, hours=1).call("sweep", {"dry_run": False})["promoted"]
    assert [item["id"] for item in promoted] == [memory_id]
