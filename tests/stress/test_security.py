"""Who may talk to a real daemon, and what it keeps to itself.

The per-route matrix iterates `vaultmem.api.schemas.ROUTES`, so a new route is covered without
editing this file: no token, a wrong token, a foreign Origin and a DNS-rebinding Host are
refused (and change nothing), the Obsidian plugin's origin is served, and health is the only
route without a token. Also: the token file and data dir are private, secrets refused by the
intake gate are stored and logged nowhere, no route reaches outside the vault, and the daemon
listens on loopback only (and refuses to start on any other address).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import pytest

from tests.engine.test_save_gate import CASES, text_of
from tests.stress._fuzz_support import (
    ESCAPES,
    SAMPLE_ID,
    LoggedDaemon,
    Target,
    build_target,
    read_notes,
    ref_fields,
)
from tests.stress._level import LEVEL
from vaultmem.api.auth import PLUGIN_ORIGIN
from vaultmem.api.schemas import ROUTES, Route

MISSING_ID = "00000000-0000-0000-0000-000000000000"
# Bodies that would change something if they got through (refused requests must not).
MUTATING: dict[str, dict[str, Any]] = {
    "save": {"content": "The gate code of the allotment shed is the year the tower was built."},
    "touch": {"id": SAMPLE_ID, "boost": True}, "observe": {"ids": [SAMPLE_ID]},
    "feedback": {"id": SAMPLE_ID, "helpful": False}, "pin": {"id": SAMPLE_ID, "pinned": True},
    "sweep": {"dry_run": False}, "gc": {"apply": True}, "promote": {"id": SAMPLE_ID},
    "reindex": {"full": True}, "search": {"query": "redis sessions"},
    "related": {"id": SAMPLE_ID}, "merge_cluster": {},
}
# Bodies that pass the token and origin checks and change nothing (dry runs, unknown ids).
HARMLESS: dict[str, dict[str, Any]] = {
    "save": {"content": "x"}, "touch": {"id": MISSING_ID}, "observe": {"ids": [MISSING_ID]},
    "feedback": {"id": MISSING_ID, "helpful": True}, "pin": {"id": MISSING_ID, "pinned": True},
    "sweep": {"dry_run": True}, "gc": {"apply": False}, "promote": {"dry_run": True},
    "reindex": {"full": False}, "search": {"query": "redis"}, "related": {"id": SAMPLE_ID},
    "merge_cluster": {},
}
FOREIGN_ORIGINS = ["http://evil.example", "null", "https://127.0.0.1", PLUGIN_ORIGIN + ".evil"]
FOREIGN_HOSTS = ["evil.example", "evil.example:7345", "127.0.0.1.evil.example", "0.0.0.0", ""]


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    target = build_target(tmp_path_factory.mktemp("security"), level="debug")
    try:
        target.daemon.start()
        yield target
    finally:
        code = target.daemon.stop()
        print(f"\nsecurity requests: {sum(target.statuses.values())}; statuses: "
              f"{dict(sorted(target.statuses.items()))}")
        assert code == 0


def path_of(route: Route, ref: str = MISSING_ID) -> str:
    return route.path.replace("{id}", quote(ref, safe=""))


def send_raw(target: Target, method: str, path: str, body: dict[str, Any] | None,
             headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes]:
    """A request whose headers are sent exactly as listed (duplicates, any Host)."""
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=30)
    data = None if body is None else json.dumps(body).encode()
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        if data is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        target.statuses[response.status] += 1
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def state_of(target: Target) -> tuple[Any, ...]:
    """What a refused request must not change: every note's bytes and the sample memory's
    state (which includes usage not yet written to its note)."""
    memory = target.client.get(SAMPLE_ID)
    fields = ("use_count", "strength", "pinned", "last_used", "status", "path")
    return read_notes(target.vault), tuple(memory[name] for name in fields)


# the token file and the data dir ---------------------------------------------------------------

@pytest.mark.timeout(LEVEL.pick(60, 120))
def test_the_token_file_and_the_data_dir_are_private(target: Target) -> None:
    token = target.data / "token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE((target.data / "daemon.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(target.data.stat().st_mode) & 0o077 == 0, oct(target.data.stat().st_mode)
    assert target.token and target.token in token.read_text(encoding="ascii")
    assert target.token not in target.daemon.log.read_text(encoding="utf-8", errors="replace")


# the per-route matrix ----------------------------------------------------------------------

@pytest.mark.timeout(LEVEL.pick(60, 300))
@pytest.mark.parametrize("route", ROUTES, ids=[f"{r.method} {r.path}" for r in ROUTES])
def test_every_route_refuses_strangers_and_serves_the_plugin(target: Target,
                                                             route: Route) -> None:
    good = [("Host", "127.0.0.1"), ("Authorization", f"Bearer {target.token}")]
    mutating = MUTATING.get(route.op) if route.source == "json" else None
    before = state_of(target)
    refusals: list[tuple[list[tuple[str, str]], int]] = [
        ([("Host", "127.0.0.1")], 401),
        ([("Host", "127.0.0.1"), ("Authorization", "Bearer wrong")], 401),
        ([("Host", "127.0.0.1"), ("Authorization", f"Bearer {target.token}x")], 401),
        ([("Host", "127.0.0.1"), ("Authorization", f"Basic {target.token}")], 401),
        ([("Host", "127.0.0.1"), ("Authorization", target.token)], 401),
        ([*good, ("Authorization", "Bearer wrong")], 401),
        *[([*good, ("Origin", origin)], 403) for origin in FOREIGN_ORIGINS],
        ([*good, ("Origin", PLUGIN_ORIGIN), ("Origin", "http://evil.example")], 403),
        *[([("Host", host), good[1]], 403) for host in FOREIGN_HOSTS],
        ([*good, ("Host", "evil.example")], 403),
    ]
    for headers, refused in refusals:
        status, answer_headers, raw = send_raw(target, route.method, path_of(route, SAMPLE_ID),
                                               mutating, headers)
        if not route.auth and refused == 401:
            assert status == 200, (headers, raw)  # health: no token needed, a wrong one ignored
            continue
        assert status == refused, (route.path, headers, status, raw)
        error = json.loads(raw)["error"]
        assert error["code"] == {401: "unauthorized", 403: "forbidden"}[refused]
        if ("Origin", PLUGIN_ORIGIN) not in headers:
            assert "Access-Control-Allow-Origin" not in answer_headers
        if refused == 401:
            assert answer_headers["WWW-Authenticate"].startswith("Bearer")
    assert state_of(target) == before, "a refused request changed something"

    harmless = HARMLESS.get(route.op) if route.source == "json" else None
    for extra in ([], [("Origin", PLUGIN_ORIGIN)]):
        status, answer_headers, raw = send_raw(target, route.method, path_of(route),
                                               harmless, [*good, *extra])
        assert status not in (401, 403) and status < 500, (route.path, extra, status, raw)
        if extra:
            assert answer_headers["Access-Control-Allow-Origin"] == PLUGIN_ORIGIN
    status, answer_headers, _ = send_raw(target, "OPTIONS", path_of(route), None, [
        ("Host", "127.0.0.1"), ("Origin", PLUGIN_ORIGIN),
        ("Access-Control-Request-Method", route.method)])
    assert status == 204 and route.method in answer_headers["Access-Control-Allow-Methods"]
    status, _, _ = send_raw(target, "OPTIONS", path_of(route), None,
                            [("Host", "127.0.0.1"), ("Origin", "http://evil.example")])
    assert status == 403


@pytest.mark.timeout(LEVEL.pick(10, 10))
def test_health_is_the_only_route_without_a_token() -> None:
    assert [f"{r.method} {r.path}" for r in ROUTES if not r.auth] == ["GET /v1/health"]


# secrets -----------------------------------------------------------------------------------

MAX_LENGTH = {"content": 200_000, "title": 300, "source": 500, "tags": 200}


UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def files_containing(needle: str, *places: Path) -> list[str]:
    """Files holding `needle`. A short all-digit secret (a PIN) counts only as a token of its
    own: inside a longer run of letters and digits (a content hash) or a UUID (LanceDB names
    each transaction by one; a version 4 UUID's third group is "4" and three random digits) its
    four digits turn up by chance, while a stored PIN (in text, a slug, JSON) stands apart."""
    data = needle.encode("utf-8")
    pattern = (re.compile(rb"(?<![0-9A-Za-z])" + re.escape(data) + rb"(?![0-9A-Za-z])")
               if needle.isdigit() and len(needle) < 8 else None)
    found = []
    for place in places:
        files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
        for f in files:
            if f.is_symlink():
                continue
            raw = f.read_bytes()
            if pattern is not None:
                raw = UUID.sub(b"", raw)
            if (pattern.search(raw) if pattern is not None else data in raw):
                found.append(str(f))
    return found


def test_a_pin_counts_as_found_on_its_own_not_inside_a_hash(tmp_path: Path) -> None:
    (tmp_path / "hash").write_bytes(b"\x00a3f94921bc07\x00")
    (tmp_path / "slug").write_bytes(b"memories/2026-11-20 my-bank-pin-is-4921.md")
    (tmp_path / "json").write_bytes(b'{"content": "PIN 4921"}')
    (tmp_path / "txn").write_bytes(b"\x0020-df9b5ba2-7341-4921-a445-c2b0d0d9155e.txn\x00")
    (tmp_path / "both").write_bytes(b"df9b5ba2-7341-4921-a445-c2b0d0d9155e PIN 4921")
    assert sorted(Path(f).name for f in files_containing("4921", tmp_path)) == [
        "both", "json", "slug"]


@pytest.mark.timeout(LEVEL.pick(90, 300))
def test_refused_secrets_are_stored_and_logged_nowhere(target: Target) -> None:
    """Every secret kind in every field of a save (the gate's own tests cover the content
    in-process and over the socket): refused, and found in no file of the vault, the data
    dir or the daemon's debug log, even after a flush and a full reindex."""
    sent = 0
    for case in CASES:
        kind, _, secret = case
        text = text_of(case)
        for field, value in [("content", text), ("title", text), ("source", text),
                             ("tags", [text])]:
            if len(text) > MAX_LENGTH[field]:
                continue  # longer than the field may be: refused by the schema, not the gate
            body = {"content": "The spare tubes are in the garage, top shelf.", field: value}
            answer = target.request("POST", "/v1/memories", body)
            sent += 1
            assert answer.status == 422, (kind, field, answer.status, answer.raw[:300])
            assert answer.body["error"]["code"] == "refused", (kind, field)
            assert secret not in answer.raw.decode("utf-8"), (kind, field)
    assert sent >= len(CASES) * 3
    assert target.request("POST", "/v1/reindex", {"full": True}).status == 200
    target.request("POST", "/v1/sweep", {"dry_run": False})
    for kind, _, secret in CASES:
        assert files_containing(secret, target.vault, target.data, target.daemon.log) == [], kind


# the vault's edges ---------------------------------------------------------------------------

REF_FIELDS = ref_fields()
COMPANIONS: dict[str, dict[str, Any]] = {
    "search": {"query": "outside restic"}, "feedback": {"helpful": True}, "pin": {"pinned": True}}
OUTSIDE_PREFIXES = ("/", "..", "linked", "memories/outside-link", "loop")


@pytest.mark.timeout(LEVEL.pick(60, 300))
@pytest.mark.parametrize(("route", "field"), REF_FIELDS,
                         ids=[f"{r.method} {r.path} {f}" for r, f in REF_FIELDS])
def test_no_route_reaches_outside_the_vault(target: Target, route: Route, field: str) -> None:
    before = state_of(target)
    refs = [*ESCAPES, str(target.root / "outside" / "secret.md"),
            str(target.root / "sentinel.md"), str(target.vault / "linked" / "secret.md")]
    for ref in refs:
        body: dict[str, Any] = {field: [ref] if field == "ids" else ref}
        body.update(COMPANIONS.get(route.op, {}))
        answer = target.request(route.method, path_of(route, ref),
                                None if route.method == "GET" else body)
        target.check_answer(answer, (route.path, field, ref))
        if route.op == "search":  # a folder filter reads no file: served, nothing outside
            assert answer.status in (200, 400), (field, ref, answer.raw[:300])
            paths = [r["path"] for r in (answer.body.get("results") or [])]
            assert not [p for p in paths if p.startswith(OUTSIDE_PREFIXES)], (ref, paths)
        else:
            assert 400 <= answer.status < 500, (route.path, field, ref, answer.raw[:300])
    assert state_of(target) == before
    target.check_invariants()


# where it listens ----------------------------------------------------------------------------

@pytest.mark.timeout(LEVEL.pick(60, 120))
def test_the_daemon_listens_on_loopback_only(target: Target) -> None:
    """Every TCP listener and bound UDP socket of the daemon's process is on loopback (Unix
    sockets are local by nature)."""
    sockets = psutil.Process(target.pid).net_connections(kind="inet")
    listening = [c for c in sockets if c.status == psutil.CONN_LISTEN]
    assert target.port in {c.laddr.port for c in listening}, sockets
    udp = [c for c in sockets if c.type == socket.SOCK_DGRAM and c.laddr]
    for conn in [*listening, *udp]:
        assert conn.laddr.ip in ("127.0.0.1", "::1"), conn


@pytest.mark.timeout(LEVEL.pick(60, 120))
@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_a_non_loopback_host_is_refused_with_a_clear_error(tmp_path: Path, host: str) -> None:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Bikes.md").write_text("# Bikes\n\nSpare tubes.\n", encoding="utf-8")
    daemon = LoggedDaemon(vault, tmp_path / "data", tmp_path / "daemon.log",
                          VAULTMEM_HOST=host)
    try:
        with pytest.raises(RuntimeError, match="daemon exited with 1"):
            daemon.start(timeout=60)
    finally:
        daemon.stop()
    log = daemon.log.read_text(encoding="utf-8")
    assert "loopback" in log and repr(host) in log, log[-2000:]
    assert "Traceback" not in log
    assert not (tmp_path / "data" / "daemon.json").exists()
