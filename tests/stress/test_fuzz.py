"""Fuzz every route of a real daemon (re-dated sample vault, fake embedder).

Schema-driven cases (schemathesis, valid and schema-violating) for every operation of the served
OpenAPI document, hypothesis-built JSON bodies and query strings, path tricks in every field that
names a note, oversized bodies, and odd HTTP (raw request bytes, wrong framing, slow clients).
After every batch: no 5xx, every answer in time and in the error shape, the daemon alive and
healthy, nothing outside the vault and the data dir touched, user notes intact (see
`_fuzz_support`). Sizes come from the stress level (short form in scripts/test, long form with
VAULTMEM_STRESS=long).
"""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import psutil
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from tests.stress._fuzz_support import (
    ANSWER_BOUND_S,
    ESCAPES,
    OUTSIDE_WORDS,
    SAMPLE_ID,
    SAMPLE_PATH,
    SlowClients,
    Target,
    build_target,
    check_answer,
    check_raw_answer,
    raw_exchange,
    read_until_closed,
    ref_fields,
    status_of,
)
from tests.stress._level import LEVEL
from vaultmem.api.schemas import REQUESTS, ROUTES, Route

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, negative_data_rejection, ignored_auth]
# Invalid data must be refused with one of these (413: a body over the limit is not even read).
CONFIG = schemathesis.Config.from_dict({"checks": {"negative_data_rejection": {
    "expected-statuses": ["400", "401", "403", "404", "405", "409", "411", "413", "415", "422"]}}})
MAX_BODY = 1_048_576
COUNTS: Counter[str] = Counter()  # cases run per test, printed for the record


def fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), print_blob=True)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    target = build_target(tmp_path_factory.mktemp("fuzz"))
    try:
        target.daemon.start()
        yield target
    finally:
        code = target.daemon.stop()
        print(f"\nfuzz cases: {dict(COUNTS)}; statuses: {dict(sorted(target.statuses.items()))}")
        assert code == 0, target.daemon.log.read_text(encoding="utf-8", errors="replace")[-3000:]


def concrete(route: Route, ref: str = SAMPLE_ID) -> str:
    return route.path.replace("{id}", quote(ref, safe=""))


# schema-driven -----------------------------------------------------------------------------

def sent_as_generated(case: Any, request: Any) -> bool:
    """Whether every query parameter the case holds was sent: the HTTP client drops one whose
    value serialises to nothing (an empty list, None), so a negative case whose violation was
    such a parameter reaches the daemon as a valid request (a 200 is then right)."""
    sent = parse_qs(urlsplit(request.url).query, keep_blank_values=True)
    return all(name in sent for name in (case.query or {}))


def fuzz_operation(target: Target, operation: Any, mode: GenerationMode, examples: int) -> None:
    """`examples` schemathesis cases of one mode for one operation, each sent and checked."""
    auth = {"Authorization": f"Bearer {target.token}"}
    label = f"schemathesis {mode.name.lower()}"

    @given(case=operation.as_strategy(generation_mode=mode))
    @fuzz_settings(examples)
    def run(case: Any) -> None:
        response = case.call(base_url=target.base_url, headers=auth, timeout=ANSWER_BOUND_S)
        COUNTS[label] += 1
        target.statuses[response.status_code] += 1
        check_answer(response.status_code, response.content, response.elapsed,
                     (operation.label, mode.name))
        if mode is GenerationMode.NEGATIVE and not sent_as_generated(case, response.request):
            return  # the violation never reached the daemon: nothing to reject
        case.validate_response(response, checks=CHECKS, headers=auth, transport_kwargs={
            "base_url": target.base_url, "headers": auth})

    try:
        run()
    except Unsatisfiable:  # nothing to violate: no parameters and no body
        route = next(r for r in ROUTES if f"{r.method} {r.path}" == operation.label)
        assert mode is GenerationMode.NEGATIVE, operation.label
        assert route.source == "none" and route.path_field is None, operation.label


@pytest.fixture(scope="module")
def slow(target: Target) -> Iterator[SlowClients]:
    """Slow clients that hold connections open while the fuzzing runs beside them."""
    clients = SlowClients(target.port, LEVEL.pick(16, 60))
    try:
        yield clients
    finally:
        clients.close()


@pytest.mark.timeout(LEVEL.pick(150, 3000))
def test_schemathesis_valid_and_invalid_cases_on_every_route(target: Target,
                                                             slow: SlowClients) -> None:
    assert not slow.cut_after  # the slow clients hold their connections while this runs
    health = target.request("GET", "/v1/health", auth=False)
    assert health.status == 200 and health.seconds < 5
    schema = schemathesis.openapi.from_url(
        f"{target.base_url}/v1/openapi.json", timeout=ANSWER_BOUND_S, config=CONFIG,
        headers={"Authorization": f"Bearer {target.token}"})
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    served = {f"{r.method} {r.path}" for r in ROUTES if r.op != "openapi"}
    assert {op.label for op in operations} == served  # the document itself: see the raw tests
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            fuzz_operation(target, operation, mode, LEVEL.pick(6, 100))
        target.check_invariants()


# hypothesis-built bodies --------------------------------------------------------------------

HOSTILE_TEXT = [
    "", " ", "\x00", "a\x00b", "\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd", "Re\u0301sume\u0301",
    "R\u00e9sum\u00e9", "\U0001f9e0\u200d\U0001f4be", "\ufeff", "\uffff", "%00", "%2e%2e%2f",
    "${jndi:x}", "{{7*7}}", "<script>", "' OR 1=1 --", "\r\nX-Injected: 1", "x" * 5000,
    SAMPLE_ID, SAMPLE_PATH, *ESCAPES,
]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=40), st.sampled_from(HOSTILE_TEXT))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=5),
    st.dictionaries(st.text(max_size=12), inner, min_size=1, max_size=5)), max_leaves=20)


def field_names(route: Route) -> list[str]:
    return [*REQUESTS[route.op]["properties"], "bogus"]


@st.composite
def json_bodies(draw: st.DrawFn, route: Route) -> bytes:
    """Raw bytes for a JSON route: junk, any JSON, the route's fields with any values, a
    nesting bomb, or escapes the decoder must refuse (lone surrogates, NaN)."""
    kind = draw(st.sampled_from(["junk", "any", "fields", "bomb", "escapes"]))
    if kind == "junk":
        return draw(st.binary(max_size=300))
    if kind == "any":
        return json.dumps(draw(json_values)).encode()
    if kind == "fields":
        names = draw(st.lists(st.sampled_from(field_names(route)), max_size=4, unique=True))
        return json.dumps({name: draw(json_values) for name in names}).encode()
    if kind == "bomb":
        depth = draw(st.integers(1, 200_000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('{"query":[', "]}")]))
        return (opener * depth + closer * draw(st.integers(0, depth))).encode()[:MAX_BODY]
    field = draw(st.sampled_from(field_names(route)))
    escape = draw(st.sampled_from([r'"\ud800"', r'"\udfff x"', r'"a\u0000b"', "NaN",
                                   "Infinity", "1e999", '"\\', "[1,]", '"\\u12"']))
    return f'{{"{field}": {escape}}}'.encode()


@st.composite
def queries(draw: st.DrawFn) -> str:
    """A query string for a GET route: its own parameters with odd values, or junk."""
    if draw(st.booleans()):
        return quote(draw(st.text(max_size=60)), safe="=&%")
    names = ["files", "limit", "bogus"]
    pairs = draw(st.lists(st.tuples(st.sampled_from(names), st.text(max_size=20)), max_size=4))
    return "&".join(f"{quote(k)}={quote(v, safe='%')}" for k, v in pairs)


@pytest.mark.timeout(LEVEL.pick(90, 2400))
def test_hypothesis_bodies_and_queries_on_every_route(target: Target) -> None:
    routes = st.sampled_from(ROUTES)

    @given(data=st.data(), route=routes)
    @fuzz_settings(LEVEL.pick(300, 6000))
    def run(data: st.DataObject, route: Route) -> None:
        path = concrete(route, data.draw(st.sampled_from([SAMPLE_ID, *HOSTILE_TEXT[:12]])))
        body: bytes | None = None
        if route.source == "json":
            body = data.draw(json_bodies(route))
        elif route.source == "query" or data.draw(st.booleans()):
            path += "?" + data.draw(queries())
        answer = target.request(route.method, path, body)
        COUNTS["hypothesis bodies"] += 1
        target.check_answer(answer, (route.method, path, body and body[:200]))

    run()
    target.check_invariants()


# paths that point outside ------------------------------------------------------------------

LONG_NAMES = ["a" * 300 + ".md", "\u00e9" * 200 + ".md", "x/" * 500, "memories/" + "b" * 256]


@pytest.mark.timeout(LEVEL.pick(60, 600))
def test_path_tricks_in_every_field_that_names_a_note(target: Target) -> None:
    fields = ref_fields()
    assert {op for op in ("get", "related", "touch", "observe", "promote", "feedback", "pin")
            } <= {route.op for route, _ in fields}
    escapes = [*ESCAPES, str(target.root / "outside" / "secret.md"),
               str(target.root / "sentinel.md")]
    odd = [*LONG_NAMES, "memories", "memories/", ".", "./", "loop", "loop/x.md",
           "Attachments/homelab-rack.png", "memories/\u202e.md"]
    for ref in [*escapes, *odd]:
        for route, name in fields:
            body: dict[str, Any] = {name: [ref] if name == "ids" else ref}
            if route.op == "search":
                body["query"] = OUTSIDE_WORDS
            elif route.op in ("feedback", "pin"):
                body[{"feedback": "helpful", "pin": "pinned"}[route.op]] = False
            if route.op == "promote":
                body["dry_run"] = True
            path = concrete(route, ref)
            answer = target.request(route.method, path, None if route.method == "GET" else body)
            COUNTS["path tricks"] += 1
            target.check_answer(answer, (route.op, name, ref))
            if ref in escapes and route.op != "search":  # a folder filter reads no file
                assert 400 <= answer.status < 500, (route.op, name, ref, answer.raw)
    for raw_path in ("/v1/memories/../../outside/secret.md", "/v1/memories/..%2f..%2fsentinel.md",
                     "/v1/memories/%2e%2e%2foutside%2fsecret.md", "/v1/memories/%00",
                     "/v1/memories/linked%2fsecret.md", "/v1/memories/%ED%A0%80",
                     "/v1/clusters/..%2f..%2f/merge", "/v1/memories/" + "%C3%A9" * 300):
        answer = target.request("GET", raw_path)
        COUNTS["path tricks"] += 1
        target.check_answer(answer, raw_path)
        assert 400 <= answer.status < 500, raw_path
    found = target.request("POST", "/v1/search", {"query": OUTSIDE_WORDS, "top_k": 200})
    assert found.status == 200 and not any(
        r["path"].startswith(("linked", "memories/outside-link")) for r in found.body["results"])
    target.check_invariants()


# bodies over the limit ---------------------------------------------------------------------

def push_body(target: Target, declared: int, size: int) -> tuple[int | None, int]:
    """POST a body of `size` bytes announced as `declared`: (status or None if the connection
    was reset before an answer could be read, bytes the server let us push)."""
    head = (f"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            f"{target.token}\r\nContent-Type: application/json\r\nContent-Length: {declared}"
            "\r\n\r\n").encode()
    pushed = 0
    with socket.create_connection(("127.0.0.1", target.port), timeout=5) as sock:
        sock.sendall(head)

        def send() -> None:
            nonlocal pushed
            chunk = b"x" * 65536
            try:
                while pushed < size:
                    sock.sendall(chunk)
                    pushed += len(chunk)
            except OSError:
                pass  # cut off: what we want

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        raw = read_until_closed(sock)
        sender.join(timeout=ANSWER_BOUND_S)
        assert not sender.is_alive(), "the server kept reading an oversized body"
    return (status_of(raw) if raw else None), pushed


@pytest.mark.timeout(LEVEL.pick(60, 300))
def test_oversized_bodies_are_refused_without_being_read(target: Target) -> None:
    daemon = psutil.Process(target.pid)
    before = daemon.memory_info().rss
    attempts = LEVEL.pick(3, 20)
    for declared, size in [(MAX_BODY + 1, MAX_BODY + 1), (10**12, 64 << 20), (10**15 - 1, 0),
                           *[(10**9, 64 << 20)] * attempts]:
        status, pushed = push_body(target, declared, size)
        COUNTS["oversized bodies"] += 1
        assert status in (413, None), (declared, status)
        assert pushed < 24 << 20, f"the server swallowed {pushed} bytes"  # buffers, not reads
    assert daemon.memory_info().rss - before < 48 << 20
    exact = b'{"content": "' + b"x" * (MAX_BODY - 15) + b'"}'
    assert len(exact) == MAX_BODY  # exactly the limit: read, parsed, refused by the schema
    answer = target.request("POST", "/v1/memories", exact)
    assert answer.status == 400 and "at most" in answer.body["error"]["message"]
    target.check_invariants()


# odd HTTP ----------------------------------------------------------------------------------

def odd_requests(token: str) -> list[bytes]:
    auth = f"Authorization: Bearer {token}\r\n"
    post = f"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}"
    cases = [
        post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        post + "Content-Length: 2\r\nContent-Length: 9\r\n\r\n{}",
        post + "Content-Length: -1\r\n\r\n{}", post + "Content-Length: +2\r\n\r\n{}",
        post + "Content-Length: 0x2\r\n\r\n{}", post + "Content-Length: 99999999999999999\r\n\r\n",
        post + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        post + "Transfer-Encoding: chunked\r\n\r\n" + "1\r\n{\r\n" * 50 + "0\r\n\r\n",
        post + "Transfer-Encoding: gzip\r\n\r\n{}", post + "\r\n{}",
        post + "Content-Length: 0\r\n\r\n",
        post + 'Content-Length: 40\r\n\r\n{"query": "short"}',
        post + 'Content-Length: 5\r\n\r\n{"query": "longer than declared"}',
        post + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
        post + "Content-Type: application/json; charset=latin-1\r\nContent-Length: 2\r\n\r\n{}",
        f"GET /v1/status HTTP/1.0\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        "GET /v1/health\r\n\r\n", "GET /v1/health HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\n\r\n", "get /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET http://127.0.0.1/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "\r\n\r\n", " / HTTP/1.1\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Folded: a\r\n b\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Nul: a\x00b\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "X-Many: 1\r\n" * 200 + "\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + "a" * 70000 + "\r\n\r\n",
        "GET /v1/" + "a" * 70000 + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/status HTTP/1.1\r\n\r\n",
        f"GET /v1/status?files=true&files=false HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"GET /v1/review?limit=1;x=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"GET /v1/openapi.json?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"GET /v1/status?{'a=1&' * 100} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"BREW /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"TRACE /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
        f"HEAD /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n",
    ]
    return [case.encode("utf-8") for case in cases]


request_bytes = st.builds(
    lambda method, path, version, headers, body: (
        method + b" " + path + b" " + version + b"\r\n" + b"Host: 127.0.0.1\r\n"
        + b"".join(name + b": " + value + b"\r\n" for name, value in headers) + b"\r\n" + body),
    st.sampled_from([b"GET", b"POST", b"PUT", b"DELETE", b"OPTIONS", b"PATCH", b"G\x00T"])
    | st.binary(min_size=1, max_size=8),
    st.sampled_from([r.path.replace("{id}", "x").encode() for r in ROUTES])
    | st.binary(max_size=40).map(lambda b: b"/v1/" + b),
    st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/9.9", b"HTTP/1.1x", b""]),
    st.lists(st.tuples(st.sampled_from([b"Content-Length", b"Authorization", b"Origin",
                                        b"Transfer-Encoding", b"Content-Type", b"Host"])
                       | st.binary(max_size=10), st.binary(max_size=30)), max_size=5),
    st.binary(max_size=100))


@pytest.mark.timeout(LEVEL.pick(90, 1200))
def test_odd_http_and_slow_clients_do_not_hang_or_crash_the_daemon(target: Target,
                                                                   slow: SlowClients) -> None:
    for data in odd_requests(target.token):
        check_raw_answer(raw_exchange(target, data), data)
        COUNTS["odd http"] += 1
    for route in ROUTES:
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            answer = target.request(method, concrete(route), {} if method != "GET" else None)
            COUNTS["odd http"] += 1
            target.check_answer(answer, (method, route.path))
            assert answer.status != 200 or method == route.method, (method, route.path)

    @given(data=request_bytes)
    @fuzz_settings(LEVEL.pick(150, 3000))
    def run(data: bytes) -> None:
        check_raw_answer(raw_exchange(target, data), data)
        COUNTS["odd http"] += 1

    run()
    slow.wait_cut(timeout=40)
    COUNTS["slow clients"] += len(slow.socks)
    assert len(slow.cut_after) == len(slow.socks), "slow clients were never cut off"
    assert max(slow.cut_after) < 10 + 10  # the daemon's request timeout, plus slack
    target.check_invariants()
