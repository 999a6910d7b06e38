"""The localhost socket end to end: a real App on a copy of the sample vault, a real ApiServer on
an ephemeral port, driven with http.client and raw sockets."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import socket
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import SAMPLE_VAULT
from vaultmem import __version__
from vaultmem.api.auth import check_host, check_origin, load_or_create_token, token_matches
from vaultmem.api.ops import Api
from vaultmem.api.schemas import RESPONSES, ROUTES
from vaultmem.api.server import ApiServer
from vaultmem.api.validation import validate
from vaultmem.app import App
from vaultmem.errors import ConfigError
from vaultmem_testing.apps import fake_app

REFERENCE = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
SAMPLE_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
SAMPLE_PATH = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
OBSIDIAN = "app://obsidian.md"

# helpers (also used by test_ops.py and test_client.py) ---------------------------------------


@contextmanager
def sample_app(root: Path) -> Iterator[App]:
    """A real App on a fresh copy of sample-vault/, indexed with the fake embedder."""
    vault = Path(shutil.copytree(SAMPLE_VAULT, root / "vault", symlinks=True))
    with fake_app(vault, root / "data") as app:
        yield app


@dataclass
class Answer:
    status: int
    body: Any
    headers: Message


@dataclass
class Served:
    app: App
    api: Api
    server: ApiServer
    token: str

    @property
    def vault(self) -> Path:
        return self.app.root

    def request(self, method: str, path: str, body: Any = None, *,
                headers: dict[str, str] | None = None, auth: bool = True) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=15)
        sent = {"Authorization": f"Bearer {self.token}"} if auth else {}
        sent.update(headers or {})
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        return Answer(response.status, json.loads(raw) if raw else None, response.headers)


@contextmanager
def serving(root: Path, **server_options: Any) -> Iterator[Served]:
    with sample_app(root) as app:
        api = app.api(clock=lambda: REFERENCE)
        token = load_or_create_token(app.data_dir)
        with ApiServer(api, token=token, host="127.0.0.1", port=0, **server_options) as server:
            yield Served(app, api, server, token)
    mine = f"vaultmem-http:{server.port}"
    assert not [t for t in threading.enumerate() if t.name.startswith(mine)]


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def raw_exchange(port: int, data: bytes, *, timeout: float = 5.0) -> bytes:
    """Send `data` as is and read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])


def concrete(path: str) -> str:
    return path.replace("{id}", SAMPLE_ID)


def valid_body(op: str) -> dict[str, Any]:
    bodies: dict[str, dict[str, Any]] = {
        "search": {"query": "redis"}, "related": {"id": SAMPLE_ID}, "touch": {"id": SAMPLE_ID},
        "save": {"content": "A memory long enough to be saved."},
        "observe": {"ids": [SAMPLE_ID]}}
    return bodies.get(op, {})


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests that must not change anything (each checks it didn't)."""
    with serving(tmp_path_factory.mktemp("shared")) as served:
        yield served


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as served:
        yield served


# happy paths ---------------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_health_needs_no_token_and_says_which_vault(shared: Served) -> None:
    answer = shared.request("GET", "/v1/health", auth=False)
    assert answer.status == 200
    assert answer.body == {"status": "ok", "version": __version__, "vault": "vault"}
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    assert answer.headers["Cache-Control"] == "no-store"


@pytest.mark.timeout(60)
def test_read_routes_answer_with_the_documented_shapes(shared: Served) -> None:
    before = digest(shared.vault)
    search = shared.request("POST", "/v1/search", {"query": "server-side sessions in Redis",
                                                   "top_k": 3})
    assert search.status == 200
    assert search.body["results"][0]["id"] == SAMPLE_ID
    assert len(search.body["results"]) == 3
    memory = shared.request("GET", f"/v1/memories/{SAMPLE_ID}")
    assert memory.body["path"] == SAMPLE_PATH and memory.body["use_count"] == 6
    by_path = shared.request("GET", "/v1/memories/" + quote(SAMPLE_PATH, safe=""))
    assert by_path.body == memory.body
    related = shared.request("POST", "/v1/related", {"path": SAMPLE_PATH, "top_k": 2})
    assert related.body["path"] == SAMPLE_PATH and len(related.body["related"]) == 2
    review = shared.request("GET", "/v1/review?limit=1")
    assert review.body["total"] >= len(review.body["items"]) == 1
    status = shared.request("GET", "/v1/status")
    assert status.body["notes"] == 33 and status.body["memories"]["total"] == 14
    files = shared.request("GET", "/v1/status?files=true")
    assert len(files.body["coverage"]["files"]) == 33
    for op, answer in [("search", search), ("get", memory), ("related", related),
                       ("review", review), ("status", status)]:
        validate(RESPONSES[op], answer.body, op)
    assert digest(shared.vault) == before


@pytest.mark.timeout(60)
def test_openapi_document_is_served_to_token_holders(shared: Served) -> None:
    answer = shared.request("GET", "/v1/openapi.json")
    assert answer.status == 200
    assert answer.body["openapi"].startswith("3.1")
    assert "/v1/memories/{id}" in answer.body["paths"]
    assert shared.request("GET", "/v1/openapi.json", auth=False).status == 401


@pytest.mark.timeout(60)
def test_touch_writes_the_use_count_into_the_note(served: Served) -> None:
    note = served.vault / SAMPLE_PATH
    assert "stm_use_count: 6\n" in note.read_text(encoding="utf-8")
    answer = served.request("POST", "/v1/touch", {"id": SAMPLE_ID, "boost": True})
    assert answer.status == 200
    assert answer.body["use_count"] == 7 and answer.body["strength"] == 1.1
    text = note.read_text(encoding="utf-8")
    assert "stm_use_count: 7\n" in text and "stm_strength: 1.1\n" in text
    assert "stm_last_used: 2026-11-20T12:00:00+00:00" in text
    by_path = served.request("POST", "/v1/touch", {"path": SAMPLE_PATH})
    assert by_path.body["use_count"] == 8


@pytest.mark.timeout(60)
def test_concurrent_touches_are_all_counted(served: Served) -> None:
    def touch() -> None:
        assert served.request("POST", "/v1/touch", {"id": SAMPLE_ID}).status == 200

    threads = [threading.Thread(target=touch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert served.request("GET", f"/v1/memories/{SAMPLE_ID}").body["use_count"] == 6 + 8


@pytest.mark.timeout(60)
def test_observe_reinforces_every_memory(served: Served) -> None:
    answer = served.request("POST", "/v1/observe", {"ids": [SAMPLE_ID],
                                                    "context_tags": ["cooking"]})
    assert answer.status == 200
    [item] = answer.body["observed"]
    assert item["review_count"] == 1 and item["cross_domain"] is True


@pytest.mark.timeout(60)
def test_save_creates_a_note_and_a_duplicate_reinforces_it(served: Served) -> None:
    content = "The workshop wifi password is on the router label, not in the vault."
    answer = served.request("POST", "/v1/memories", {"content": content, "title": "Workshop wifi",
                                                     "tags": ["home"], "type": "fact"})
    assert answer.status == 200 and answer.body["created"] is True
    path = served.vault / answer.body["memory"]["path"]
    assert path.parent == served.vault / "memories"
    assert content in path.read_text(encoding="utf-8")
    again = served.request("POST", "/v1/memories", {"content": content})
    assert again.body["created"] is False
    assert again.body["reinforced"]["id"] == answer.body["memory"]["id"]
    validate(RESPONSES["save"], again.body, "save")


@pytest.mark.timeout(60)
def test_lifecycle_dry_runs_change_nothing(served: Served) -> None:
    before = digest(served.vault)
    gc = served.request("POST", "/v1/gc", {})
    promote = served.request("POST", "/v1/promote", {"dry_run": True})
    sweep = served.request("POST", "/v1/sweep", {})
    assert gc.body["dry_run"] and len(gc.body["archive"]) == 3 and gc.body["archived"] == []
    assert promote.body["dry_run"] and len(promote.body["promote"]) == 4
    assert promote.body["promoted"] == []
    assert sweep.body["dry_run"] and sweep.body["archived"] == sweep.body["promoted"] == []
    for op, answer in [("gc", gc), ("promote", promote), ("sweep", sweep)]:
        validate(RESPONSES[op], answer.body, op)
    assert digest(served.vault) == before


@pytest.mark.timeout(60)
def test_gc_apply_archives_the_faded_memories(served: Served) -> None:
    answer = served.request("POST", "/v1/gc", {"apply": True})
    assert [item["to"].startswith("memories/archive/") for item in answer.body["archived"]] == [
        True, True, True]
    assert all((served.vault / item["to"]).is_file() for item in answer.body["archived"])


@pytest.mark.timeout(60)
def test_reindex_picks_up_a_new_note(served: Served) -> None:
    unchanged = served.request("POST", "/v1/reindex", {})
    assert unchanged.status == 200 and unchanged.body["added"] == 0
    validate(RESPONSES["reindex"], unchanged.body, "reindex")
    (served.vault / "Inbox" / "Kayak.md").write_text(
        "# Kayak\n\nThe kayak roof rack straps are in the blue crate.\n", encoding="utf-8")
    report = served.request("POST", "/v1/reindex", {"full": False})
    assert report.body["added"] == 1
    hits = served.request("POST", "/v1/search", {"query": "kayak roof rack straps"}).body
    assert hits["results"][0]["path"] == "Inbox/Kayak.md"


# who may call --------------------------------------------------------------------------------

AUTHED = [r for r in ROUTES if r.auth]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("route", AUTHED, ids=[f"{r.method} {r.path}" for r in AUTHED])
def test_every_route_but_health_needs_the_token(shared: Served, route: Any) -> None:
    before = digest(shared.vault)
    path, body = concrete(route.path), valid_body(route.op) if route.method == "POST" else None
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": shared.token},
                    {"Authorization": f"Basic {shared.token}"},
                    {"Authorization": f"Bearer {shared.token}x"}):
        answer = shared.request(route.method, path, body, headers=headers, auth=False)
        assert answer.status == 401, headers
        assert answer.body["error"]["code"] == "unauthorized"
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert digest(shared.vault) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("host", ["evil.example", "evil.example:7345", "127.0.0.1.evil.example",
                                  "localhost.evil.example", "0.0.0.0", ""])
def test_a_foreign_host_is_refused_before_anything_else(shared: Served, host: str) -> None:
    for path in ("/v1/health", "/v1/status"):
        answer = shared.request("GET", path, headers={"Host": host})
        assert answer.status == 403 and answer.body["error"]["code"] == "forbidden"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1:80", "[::1]:7345"])
def test_loopback_hosts_are_accepted(shared: Served, host: str) -> None:
    assert shared.request("GET", "/v1/status", headers={"Host": host}).status == 200


@pytest.mark.timeout(60)
@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:7345",
                                    "app://obsidian.md.evil.example"])
def test_a_foreign_origin_is_refused(shared: Served, origin: str) -> None:
    for path in ("/v1/health", "/v1/status"):
        answer = shared.request("GET", path, headers={"Origin": origin})
        assert answer.status == 403 and "Access-Control-Allow-Origin" not in answer.headers
    touch = shared.request("POST", "/v1/touch", {"id": SAMPLE_ID}, headers={"Origin": origin})
    assert touch.status == 403
    assert shared.request("GET", f"/v1/memories/{SAMPLE_ID}").body["use_count"] == 6


@pytest.mark.timeout(60)
def test_the_obsidian_plugin_origin_is_served_with_cors(shared: Served) -> None:
    answer = shared.request("GET", "/v1/status", headers={"Origin": OBSIDIAN})
    assert answer.status == 200
    assert answer.headers["Access-Control-Allow-Origin"] == OBSIDIAN
    preflight = shared.request("OPTIONS", "/v1/search", headers={
        "Origin": OBSIDIAN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"}, auth=False)
    assert preflight.status == 204
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    assert preflight.headers["Access-Control-Allow-Origin"] == OBSIDIAN
    evil = shared.request("OPTIONS", "/v1/search", headers={"Origin": "https://evil.example"})
    assert evil.status == 403 and "Access-Control-Allow-Origin" not in evil.headers
    assert shared.request("OPTIONS", "/v1/search").status == 405


# bad requests --------------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize(("method", "path", "body", "status", "needle"), [
    ("POST", "/v1/search", b"{not json", 400, "not valid JSON"),
    ("POST", "/v1/search", b"[1, 2]", 400, "JSON object"),
    ("POST", "/v1/search", b'"redis"', 400, "JSON object"),
    ("POST", "/v1/search", b'{"query": NaN}', 400, "not valid JSON"),
    ("POST", "/v1/search", b"\xff\xfe{}", 400, "not valid JSON"),
    ("POST", "/v1/search", b"[" * 100_000 + b"]" * 100_000, 400, "JSON"),
    ("POST", "/v1/search", b'{"query": "\\ud800"}', 400, "query"),
    ("POST", "/v1/search", {"query": "x", "top_k": "5"}, 400, "top_k must be an integer"),
    ("POST", "/v1/search", {"query": "x", "top_k": 0}, 400, "top_k must be between 1 and 200"),
    ("POST", "/v1/search", {"query": "x", "top_k": True}, 400, "top_k"),
    ("POST", "/v1/search", {"query": "x", "tags": "home"}, 400, "tags must be a list"),
    ("POST", "/v1/search", {"query": "x", "status": ["gone"]}, 400, "status[0] must be one of"),
    ("POST", "/v1/search", {"query": "x", "sql": "drop"}, 400, "unknown field(s) sql"),
    ("POST", "/v1/search", {}, 400, "missing required field(s) query"),
    ("POST", "/v1/search", {"query": "x" * 4001}, 400, "at most 4000"),
    ("POST", "/v1/memories", {"content": "short"}, 422, "too short"),
    ("POST", "/v1/memories", {"content": "long enough content here", "strength": 3},
     400, "strength must be between 0 and 2"),
    ("POST", "/v1/touch", {"id": SAMPLE_ID, "path": SAMPLE_PATH}, 400, "exactly one of id, path"),
    ("POST", "/v1/touch", {"id": SAMPLE_ID, "boost": "yes"}, 400, "boost must be true or false"),
    ("POST", "/v1/observe", {"ids": []}, 400, "ids must have at least 1"),
    ("POST", "/v1/clusters/c-1/merge", {"cluster_id": "c-2"}, 400, "given in the path"),
    ("POST", "/v1/search?top_k=3", {"query": "x"}, 400, "no query parameters"),
    ("GET", "/v1/review?limit=0", None, 400, "limit must be between 1 and 1000"),
    ("GET", "/v1/review?limit=ten", None, 400, "limit must be an integer"),
    ("GET", "/v1/review?limit=1&limit=2", None, 400, "once"),
    ("GET", "/v1/review?secret=1", None, 400, "unknown field(s) secret"),
])
def test_bad_input_is_refused_and_changes_nothing(
    shared: Served, method: str, path: str, body: Any, status: int, needle: str
) -> None:
    before = digest(shared.vault)
    answer = shared.request(method, path, body)
    assert answer.status == status, answer.body
    assert set(answer.body) == {"error"} and set(answer.body["error"]) == {"code", "message"}
    assert needle in answer.body["error"]["message"]
    assert digest(shared.vault) == before


@pytest.mark.timeout(60)
def test_unknown_ids_and_routes_are_404(shared: Served) -> None:
    for method, path in [("GET", "/v1/memories/0000-not-a-memory"),
                         ("GET", "/v1/memories/Inbox%2FNo%20such%20note.md"),
                         ("GET", "/v1/nothing"), ("GET", "/v2/health"), ("GET", "/"),
                         ("GET", "/v1/memories/"), ("POST", "/v1/health/../status")]:
        answer = shared.request(method, path, {} if method == "POST" else None)
        assert answer.status == 404, path
        assert answer.body["error"]["code"] == "not_found"
    touch = shared.request("POST", "/v1/touch", {"id": "0000-not-a-memory"})
    assert touch.status == 404


@pytest.mark.timeout(60)
def test_wrong_method_is_405_with_allow(shared: Served) -> None:
    for method, path, allowed in [("GET", "/v1/search", "POST"), ("PUT", "/v1/touch", "POST"),
                                  ("DELETE", f"/v1/memories/{SAMPLE_ID}", "GET"),
                                  ("POST", "/v1/health", "GET")]:
        answer = shared.request(method, path)
        assert answer.status == 405 and answer.headers["Allow"] == allowed
        assert answer.body["error"]["code"] == "method_not_allowed"


@pytest.mark.timeout(60)
def test_unsupported_http_methods_get_the_json_error_shape(shared: Served) -> None:
    raw = raw_exchange(shared.server.port, b"BREW /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status_of(raw) == 501
    assert json.loads(raw.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "not_implemented"
    for garbage in (b"GET /v1/health FOO/1.1\r\n\r\n", b"GET /v1/health\r\n\r\n"):
        assert status_of(raw_exchange(shared.server.port, garbage)) == 400


@pytest.mark.timeout(60)
def test_a_post_without_content_length_is_411(shared: Served) -> None:
    auth = f"Authorization: Bearer {shared.token}\r\n".encode()
    head = b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth
    assert status_of(raw_exchange(shared.server.port, head + b"\r\n")) == 411
    chunked = head + b"Transfer-Encoding: chunked\r\n\r\n5\r\n{}   \r\n0\r\n\r\n"
    assert status_of(raw_exchange(shared.server.port, chunked)) == 411
    bad_length = head + b"Content-Length: -1\r\n\r\n{}"
    assert status_of(raw_exchange(shared.server.port, bad_length)) == 400


@pytest.mark.timeout(60)
def test_a_body_of_whitespace_is_not_json_and_changes_nothing(shared: Served) -> None:
    for body in (b"\n", b"  \r\n\t"):
        answer = shared.request("POST", "/v1/reconcile", body)
        assert answer.status == 400, body
        assert "not valid JSON" in answer.body["error"]["message"]
    assert shared.request("POST", "/v1/reconcile", b"").status == 200


@pytest.mark.timeout(60)
def test_a_body_of_another_type_is_415(shared: Served) -> None:
    answer = shared.request("POST", "/v1/search", b'{"query": "redis"}',
                            headers={"Content-Type": "text/plain"})
    assert answer.status == 415


@pytest.mark.timeout(60)
def test_an_oversized_body_is_refused_without_reading_it(shared: Served) -> None:
    auth = f"Authorization: Bearer {shared.token}\r\n".encode()
    head = (b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth +
            b"Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n")
    # no body sent at all: the answer comes at once, so the server did not wait to read it
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", shared.server.port), timeout=5) as sock:
        sock.sendall(head)
        raw = read_all(sock)
    assert status_of(raw) == 413 and time.monotonic() - started < 4
    assert json.loads(raw.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "too_large"
    # a client that pushes the whole 2 MB is cut off (answer or reset), never served
    with socket.create_connection(("127.0.0.1", shared.server.port), timeout=5) as sock:
        body = b'{"content": "' + b"x" * 2_000_000 + b'"}'
        try:
            sock.sendall(head + body)
            assert status_of(read_all(sock)) == 413
        except (ConnectionResetError, BrokenPipeError):
            pass
    assert not list((shared.vault / "memories").glob("*xxxx*"))
    assert shared.request("GET", "/v1/health").status == 200


@pytest.mark.timeout(60)
def test_the_body_limit_is_configurable(tmp_path: Path) -> None:
    with serving(tmp_path, max_body=64) as small:
        too_big = small.request("POST", "/v1/search", {"query": "r" * 100})
        assert too_big.status == 413
        assert small.request("POST", "/v1/search", {"query": "redis"}).status == 200


# the vault's edges -----------------------------------------------------------------------------

@pytest.fixture
def outside(served: Served) -> Path:
    """A memory-looking note next to the vault, and a symlink to it inside the vault."""
    note = served.vault.parent / "outside.md"
    note.write_text("---\nstm_id: 11111111-2222-3333-4444-555555555555\nstm_created: "
                    "2026-11-01T00:00:00+00:00\nstm_last_used: 2026-11-01T00:00:00+00:00\n"
                    "stm_use_count: 1\nstm_strength: 1.0\nstm_status: active\n---\n# Outside\n",
                    encoding="utf-8")
    os.symlink(note, served.vault / "memories" / "link.md")
    return note


@pytest.mark.timeout(60)
def test_paths_outside_the_vault_are_refused(served: Served, outside: Path) -> None:
    before, vault_before = outside.read_bytes(), digest(served.vault)
    refs = ["../outside.md", "memories/../../outside.md", str(outside), "/etc/passwd",
            "memories/link.md", "11111111-2222-3333-4444-555555555555", "..", "/"]
    for ref in refs:
        quoted = quote(ref, safe="")
        for method, path, body in [
            ("GET", f"/v1/memories/{quoted}", None),
            ("POST", "/v1/touch", {"path": ref}), ("POST", "/v1/touch", {"id": ref}),
            ("POST", "/v1/observe", {"ids": [SAMPLE_ID, ref]}),
            ("POST", "/v1/promote", {"id": ref}), ("POST", "/v1/related", {"path": ref}),
        ]:
            answer = served.request(method, path, body)
            assert 400 <= answer.status < 500, (method, path, body, answer.body)
    raw = raw_exchange(served.server.port, (
        f"GET /v1/memories/../../outside.md HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {served.token}\r\n\r\n").encode())
    assert 400 <= status_of(raw) < 500
    assert outside.read_bytes() == before
    assert digest(served.vault) == vault_before
    assert served.request("GET", f"/v1/memories/{SAMPLE_ID}").body["use_count"] == 6


# failures and lifecycle ----------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_an_unexpected_error_is_a_generic_500(served: Served, monkeypatch: Any,
                                              caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret detail /home/someone/token")

    monkeypatch.setattr(served.app.status, "status", broken)
    with caplog.at_level("ERROR", logger="vaultmem.api.server"):
        answer = served.request("GET", "/v1/status")
    assert answer.status == 500
    assert answer.body == {"error": {"code": "internal",
                                     "message": "internal error: see the vaultmem daemon's log"}}
    assert "secret detail" in caplog.text  # logged with its traceback, never sent
    assert served.request("GET", "/v1/health").status == 200


@pytest.mark.timeout(60)
def test_request_bodies_are_never_logged(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    secret = "the vault door combination is 31-41-59"
    with caplog.at_level("DEBUG", logger="vaultmem"):
        served.request("POST", "/v1/search", {"query": secret})
        served.request("POST", "/v1/search", {"query": secret, "bogus": 1})
    assert "POST /v1/search" in caplog.text
    assert "31-41-59" not in caplog.text and served.token not in caplog.text


@pytest.mark.timeout(60)
def test_a_slow_client_is_cut_off_and_does_not_block_others(tmp_path: Path) -> None:
    with serving(tmp_path, request_timeout=0.5) as slow, socket.create_connection(
            ("127.0.0.1", slow.server.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert slow.request("GET", "/v1/health").status == 200  # served meanwhile
        assert trickled_until_cut(sock) < 3


@pytest.mark.timeout(60)
def test_stop_ends_open_connections(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        idle = socket.create_connection(("127.0.0.1", served.server.port), timeout=10)
        idle.sendall(b"GET /v1/health HTTP/1.1\r\n")
        time.sleep(0.2)
        started = time.monotonic()
        served.server.stop()
        assert time.monotonic() - started < 5
        idle.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", served.server.port), timeout=1).close()


@pytest.mark.timeout(60)
def test_the_server_binds_only_loopback(served: Served) -> None:
    for host in ("0.0.0.0", "::", "", "192.168.1.10", "example.org"):
        with pytest.raises(ConfigError, match="loopback"):
            ApiServer(served.api, token="t", host=host, port=0)
    assert served.server.url == f"http://127.0.0.1:{served.server.port}"
    assert served.server.port > 0


@pytest.mark.timeout(60)
def test_a_port_in_use_is_a_clear_error(served: Served) -> None:
    with pytest.raises(ConfigError, match="cannot listen"):
        ApiServer(served.api, token="t", host="127.0.0.1", port=served.server.port).start()


@pytest.mark.timeout(60)
def test_ipv6_loopback_works_when_available(served: Served) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    server = ApiServer(served.api, token=served.token, host="::1", port=0)
    try:
        server.start()
    except ConfigError:
        pytest.skip("::1 is not configured here")
    try:
        conn = http.client.HTTPConnection("::1", server.port, timeout=5)
        conn.request("GET", "/v1/health")
        assert conn.getresponse().status == 200
        conn.close()
        assert server.url == f"http://[::1]:{server.port}"
    finally:
        server.stop()


@pytest.mark.timeout(60)
def test_clusters_and_merge_with_the_real_consolidator(served: Served) -> None:
    listed = served.request("GET", "/v1/clusters")
    assert listed.status == 200
    validate(RESPONSES["clusters"], listed.body, "clusters")
    [cluster] = listed.body["clusters"]  # the two "Sam prefers Restic" memories
    merged = served.request("POST", f"/v1/clusters/{cluster['id']}/merge", {})
    assert merged.status == 200, merged.body
    validate(RESPONSES["merge_cluster"], merged.body, "merge_cluster")
    assert {m["id"] for m in merged.body["archived"]} == {m["id"] for m in cluster["members"]}
    again = served.request("POST", f"/v1/clusters/{cluster['id']}/merge")
    assert again.status == 404


# the token and the caller checks ---------------------------------------------------------------

def trickled_until_cut(sock: socket.socket, *, give_up_s: float = 8.0) -> float:
    """Seconds until the server cuts a client that sends a byte every 0.1 s (never idle for
    long); fails if it is not cut within `give_up_s`."""
    started = time.monotonic()
    while time.monotonic() - started < give_up_s:
        try:
            sock.sendall(b"X")
            time.sleep(0.1)
        except OSError:
            return time.monotonic() - started
    raise AssertionError(f"a trickling client was not cut off within {give_up_s} s")

def test_the_token_file_is_created_private_and_reused(tmp_path: Path) -> None:
    old_umask = os.umask(0)  # even with a permissive umask
    try:
        token = load_or_create_token(tmp_path / "data")
    finally:
        os.umask(old_umask)
    path = tmp_path / "data" / "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(token) >= 40 and path.read_text(encoding="ascii").strip() == token
    assert load_or_create_token(tmp_path / "data") == token
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["token"]  # no temp files


def test_a_loose_token_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("my-own-token\n", encoding="ascii")
    path.chmod(0o644)
    assert load_or_create_token(tmp_path) == "my-own-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_empty_token_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "token").write_bytes(b"")
    assert len(load_or_create_token(tmp_path)) >= 40


def test_a_symlinked_token_file_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("stolen\n", encoding="ascii")
    (tmp_path / "data").mkdir()
    os.symlink(elsewhere, tmp_path / "data" / "token")
    with pytest.raises(ConfigError, match="token file"):
        load_or_create_token(tmp_path / "data")


@pytest.mark.timeout(30)
def test_concurrent_first_runs_agree_on_one_token(tmp_path: Path) -> None:
    tokens: list[str] = []
    threads = [threading.Thread(target=lambda: tokens.append(load_or_create_token(tmp_path)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(tokens) == 8 and len(set(tokens)) == 1


def test_host_origin_and_token_checks() -> None:
    for host in ("127.0.0.1", "127.0.0.1:7345", "localhost", "Localhost:1", "[::1]", "[::1]:80"):
        assert check_host(host), host
    for bad in (None, "", "evil.example", "127.0.0.2", "localhost.", "127.0.0.1:", "::1",
                "127.0.0.1:123456", "user@localhost", "localhost:80 evil"):
        assert not check_host(bad), bad
    assert check_origin(None) and check_origin("app://obsidian.md")
    for origin in ("null", "", "https://obsidian.md", "app://obsidian.md/", "APP://OBSIDIAN.MD"):
        assert not check_origin(origin), origin
    assert token_matches("s3cret", "Bearer s3cret") and token_matches("s3cret", "bearer  s3cret")
    for header in (None, "", "s3cret", "Bearer", "Bearer s3cre", "Bearer s3cretx", "Basic s3cret",
                   "Bearer s3cret extra", "Bearer ünïcode"):
        assert not token_matches("s3cret", header), header
