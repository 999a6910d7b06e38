"""A real daemon on a temp copy of the sample vault, driven through its socket."""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lancedb
import pytest

from vaultmem.api.client import Client
from vaultmem.errors import VaultmemError
from vaultmem.index.upkeep import QUIET_S
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.daemon import DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

pytestmark = pytest.mark.timeout(180)

SESSIONS_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
SESSIONS = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return redated_sample_vault(tmp_path / "vault")


@pytest.fixture
def daemon(tmp_path: Path, vault: Path) -> Iterator[DaemonProcess]:
    process = DaemonProcess(vault, tmp_path / "data")
    process.start()
    yield process
    process.stop()


def _paths(client: Client, query: str) -> list[str]:
    return [h["path"] for h in client.call("POST", "/v1/search", {"query": query})["results"]]


def _stm_free(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("stm_")]


def test_second_daemon_on_the_same_vault_is_refused(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    result = subprocess.run([sys.executable, "-m", "vaultmem", "run"], env=daemon.env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"pid {daemon.proc.pid}" in result.stderr


def test_search_follows_edits_on_disk(daemon: DaemonProcess, vault: Path) -> None:
    client = daemon.client
    assert client is not None
    new = vault / "Inbox/Quokka.md"
    new.write_text("# Quokka\n\nThe quokka zorblefrump is a small marsupial.\n", encoding="utf-8")
    wait_until(lambda: "Inbox/Quokka.md" in _paths(client, "zorblefrump"))
    new.write_text("# Quokka\n\nNow about the glimmerwick instead.\n", encoding="utf-8")
    wait_until(lambda: "Inbox/Quokka.md" in _paths(client, "glimmerwick"))
    new.rename(vault / "Inbox/Marsupial.md")
    wait_until(lambda: "Inbox/Marsupial.md" in _paths(client, "glimmerwick"))
    assert "Inbox/Quokka.md" not in _paths(client, "glimmerwick")
    (vault / "Inbox/Marsupial.md").unlink()
    wait_until(lambda: "Inbox/Marsupial.md" not in _paths(client, "glimmerwick"))


def test_touch_reaches_the_frontmatter_after_the_flush(daemon: DaemonProcess,
                                                       vault: Path) -> None:
    assert daemon.client is not None
    before = (vault / SESSIONS).read_text(encoding="utf-8")
    view = daemon.client.call("POST", "/v1/touch", {"id": SESSIONS_ID, "boost": True})
    assert view["use_count"] == 7
    got = daemon.client.call("GET", f"/v1/memories/{SESSIONS_ID}")
    assert got["use_count"] == 7
    wait_until(lambda: "stm_use_count: 7" in (vault / SESSIONS).read_text(encoding="utf-8"))
    after = (vault / SESSIONS).read_text(encoding="utf-8")
    assert _stm_free(after) == _stm_free(before)


def test_sweep_archives_and_promotes(daemon: DaemonProcess, vault: Path) -> None:
    assert daemon.client is not None
    dry = daemon.client.call("POST", "/v1/sweep", {})
    assert dry["dry_run"] and len(dry["archive"]) == 3 and len(dry["promote"]) == 4
    done = daemon.client.call("POST", "/v1/sweep", {"dry_run": False})
    assert len(done["archived"]) == 3 and len(done["promoted"]) == 4
    promoted = vault / "STM/2026-11-15 crumb-server-side-sessions-in-redis.md"
    text = promoted.read_text(encoding="utf-8")
    assert "stm_status: promoted" in text and "## Related" in text
    assert re.search(r"\[\[[^\]|]+\|[^\]]+\]\]", text)  # [[File name|alias]]
    for item in done["archived"]:
        assert (vault / item["to"]).exists() and not (vault / item["from"]).exists()
    wait_until(lambda: any(h["path"].startswith("STM/") for h in daemon.client.call(
        "POST", "/v1/search", {"query": "server-side sessions in Redis"})["results"]))


def test_concurrent_touches_over_the_socket_lose_nothing(daemon: DaemonProcess,
                                                          vault: Path) -> None:
    assert daemon.client is not None
    before = (vault / SESSIONS).read_text(encoding="utf-8")
    base = daemon.client
    errors: list[Exception] = []

    def client() -> None:
        own = Client(base.base_url, base.token, timeout=60)
        try:
            for _ in range(200):
                own.call("POST", "/v1/touch", {"id": SESSIONS_ID})
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    wait_until(lambda: "stm_use_count: 1606" in (vault / SESSIONS).read_text(encoding="utf-8"),
               timeout=30)
    assert _stm_free((vault / SESSIONS).read_text(encoding="utf-8")) == _stm_free(before)


def test_user_edit_while_a_usage_write_is_pending(tmp_path: Path, vault: Path) -> None:
    process = DaemonProcess(vault, tmp_path / "data", VAULTMEM_FLUSH_INTERVAL_SECONDS="3")
    client = process.start()
    try:
        client.call("POST", "/v1/touch", {"id": SESSIONS_ID})
        path = vault / SESSIONS
        edited = path.read_text(encoding="utf-8") + "\nWritten by the user meanwhile.\n"
        path.write_text(edited, encoding="utf-8")
        wait_until(lambda: "stm_use_count: 7" in path.read_text(encoding="utf-8"), timeout=30)
        final = path.read_text(encoding="utf-8")
        assert final.endswith("Written by the user meanwhile.\n")
        assert _stm_free(final) == _stm_free(edited)
    finally:
        process.stop()


def test_a_burst_of_edits_is_optimised_after_the_next_search_not_while_idle(
        daemon: DaemonProcess, vault: Path) -> None:
    """Writes outside the full-text index slow every search until an optimise; an optimise
    costs ~0.5 CPU-s however small the pile, so a small one waits for a search (or the
    50-writes rule), not for a timer in an idle daemon."""
    def table() -> Any:  # read as another process reads it: its latest version
        return lancedb.connect(str(daemon.data / "lance")).open_table("chunks")

    def fragments() -> int:
        return int(table().stats()["fragment_stats"]["num_fragments"])

    def quiet_version() -> int:  # once nothing was written for a second
        while (version := table().version) != (time.sleep(1.0), table().version)[1]:
            pass
        return int(version)

    assert daemon.client is not None
    wait_until(lambda: fragments() == 1, timeout=30)  # the start-up's run is optimised
    for n in range(5):
        (vault / f"Inbox/Burst {n}.md").write_text(f"# Burst {n}\n\nWords.\n", encoding="utf-8")
        time.sleep(0.2)
    wait_until(lambda: fragments() > 1, timeout=30)  # no search yet: it would be the cue
    written = quiet_version()
    time.sleep(QUIET_S + 3)  # the job after a burst has run: it left the small pile alone
    assert table().version == written
    piled = fragments()
    assert piled > 1
    assert "Inbox/Burst 4.md" in _paths(daemon.client, "Burst 4")  # found by the scan
    wait_until(lambda: fragments() < piled, timeout=30)


def test_edits_that_never_pause_do_not_starve_the_scheduled_jobs(tmp_path: Path,
                                                                  vault: Path) -> None:
    """A user or sync tool changing a note every 0.3 s keeps the watcher busy for good: the
    flush still lands after the longest pause, and the index is optimised all along."""
    process = DaemonProcess(vault, tmp_path / "data", VAULTMEM_MAX_WRITE_PAUSE_SECONDS="3",
                            VAULTMEM_OPTIMIZE_INTERVAL_MINUTES="0.01")
    client = process.start()
    stop = threading.Event()

    def type_forever() -> None:
        draft = vault / "Inbox/Draft.md"
        for n in itertools.count():
            if stop.wait(0.3):
                return
            draft.write_text(f"# Draft\n\nTyping, version {n}.\n", encoding="utf-8")

    typist = threading.Thread(target=type_forever)
    typist.start()
    try:
        time.sleep(1.0)  # the watcher is busy from now on
        client.call("POST", "/v1/touch", {"id": SESSIONS_ID})
        started = time.monotonic()
        wait_until(lambda: "stm_use_count: 7" in (vault / SESSIONS).read_text(encoding="utf-8"),
                   timeout=30)
        jobs = {job["name"]: job for job in process.status()["daemon"]["jobs"]}
        waited = time.monotonic() - started
    finally:
        stop.set()
        typist.join()
        process.stop()
    assert waited > 1.0, "the flush did not wait for the edits at all"
    assert jobs["optimize"]["runs"] >= 1 and jobs["optimize"]["last_result"] == "ok"


def test_sigkill_during_touches_and_edits_loses_nothing(tmp_path: Path, vault: Path) -> None:
    process = DaemonProcess(vault, tmp_path / "data")
    client = process.start()
    acked = 0
    stop = threading.Event()

    def toucher() -> None:
        nonlocal acked
        own = Client(client.base_url, client.token, timeout=10)
        while not stop.is_set():
            try:
                own.call("POST", "/v1/touch", {"id": SESSIONS_ID})
            except (VaultmemError, OSError):
                return
            acked += 1

    user_text: dict[Path, str] = {}

    def editor() -> None:
        notes = sorted(p for p in (vault / "Areas").rglob("*.md"))
        for n in range(40):
            note = notes[n % len(notes)]
            text = note.read_text(encoding="utf-8") + f"\nUser line {n} kiwiword{n}.\n"
            note.write_text(text, encoding="utf-8")
            user_text[note] = text
            time.sleep(0.01)

    threads = [threading.Thread(target=toucher), threading.Thread(target=editor)]
    for t in threads:
        t.start()
    time.sleep(random.uniform(0.3, 0.8))
    process.kill()
    stop.set()
    for t in threads:
        t.join(timeout=30)
    threads[1].join()

    client = process.start()
    try:
        path = vault / SESSIONS
        wait_until(lambda: _use_count(path) >= 6 + acked, timeout=30)
        assert _use_count(path) <= 6 + acked + 1  # at most the one touch in flight at the kill
        for note in vault.rglob("*.md"):
            if "Templates" in note.parts:
                continue
            parse(note.read_text(encoding="utf-8"))  # every note still parses
        for note, text in user_text.items():
            assert note.read_text(encoding="utf-8") == text  # user edits intact
        status = client.call("GET", "/v1/status")
        notes_on_disk = [p for p in vault.rglob("*.md") if "Templates" not in p.parts
                         and ".obsidian" not in p.parts]
        assert status["coverage"]["indexed"] == len(notes_on_disk)
        last = max(user_text.values(), key=len)
        word = re.findall(r"kiwiword\d+", last)[-1]
        wait_until(lambda: any(word in h["snippet"] or h["path"] for h in client.call(
            "POST", "/v1/search", {"query": word})["results"]))
    finally:
        process.stop()


def _use_count(path: Path) -> int:
    match = re.search(r"^stm_use_count: (\d+)$", path.read_text(encoding="utf-8"), re.M)
    assert match
    return int(match.group(1))


def test_the_cli_talks_to_the_running_daemon(daemon: DaemonProcess, vault: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vaultmem", *args], env=daemon.env,
                              capture_output=True, text=True, timeout=60)

    touched = cli("touch", SESSIONS_ID, "--json")
    assert touched.returncode == 0, touched.stderr
    assert '"use_count": 7' in touched.stdout
    status = cli("status", "--json")
    assert '"daemon"' in status.stdout  # only the daemon adds its own section
    refused = cli("get", SESSIONS_ID, "--now", "2026-11-20T12:00:00Z")
    assert refused.returncode == 1 and "--now" in refused.stderr
    found = cli("search", "server-side sessions", "--json")
    assert SESSIONS in found.stdout


def test_the_running_daemon_refuses_bad_requests(daemon: DaemonProcess, vault: Path,
                                                 tmp_path: Path) -> None:
    import http.client
    import json as jsonlib
    from urllib.parse import urlsplit

    assert daemon.client is not None
    url = urlsplit(daemon.client.base_url)
    outside = tmp_path / "outside.md"
    outside.write_text("---\nstm_id: x\n---\nsecret outside\n", encoding="utf-8")
    (vault / "escape.md").symlink_to(outside)
    before = outside.read_bytes()

    def request(method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, object]]:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, jsonlib.loads(response.read() or b"{}")
        finally:
            conn.close()

    auth = {"Authorization": f"Bearer {daemon.client.token}",
            "Content-Type": "application/json"}
    assert request("GET", "/v1/health")[0] == 200
    assert request("GET", "/v1/status")[0] == 401
    assert request("POST", "/v1/search", b'{"query": "x"}', {"Content-Type":
                                                            "application/json"})[0] == 401
    assert request("GET", "/v1/status", headers={**auth, "Origin": "https://evil.example"})[0] \
        == 403
    assert request("GET", "/v1/status", headers={**auth, "Host": "evil.example"})[0] == 403
    status, body = request("POST", "/v1/search", b"{not json", auth)
    assert status == 400 and "message" in body["error"]  # type: ignore[operator]
    assert request("POST", "/v1/search", b'{"query": 5}', auth)[0] in (400, 422)
    assert request("GET", "/v1/memories/no-such-id", headers=auth)[0] == 404
    for ref in ("../outside.md", str(outside), "escape.md"):
        status, _ = request("POST", "/v1/touch", jsonlib.dumps({"id": ref}).encode(), auth)
        assert 400 <= status < 500, ref
    assert outside.read_bytes() == before
