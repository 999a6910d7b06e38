"""The socket's accept loop sleeps until there is something to do (api/connections.py): it
does not wake while idle, yet it still cuts off trickling clients and stops at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from tests.api.test_server import serving, trickled_until_cut
from vaultmem.api.connections import TrackedHttpServer

WAIT_S = 10.0


class _Counting(TrackedHttpServer):
    """Counts the loop's wake-ups (each ends with `service_actions`)."""

    wakeups = 0

    def service_actions(self) -> None:
        self.wakeups += 1
        super().service_actions()


@contextmanager
def _loop(handler: type[BaseHTTPRequestHandler], request_timeout: float) -> Iterator[_Counting]:
    owner = SimpleNamespace(port=0, request_timeout=request_timeout)
    httpd = _Counting(("127.0.0.1", 0), socket.AF_INET, owner, handler)
    owner.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, name="test-accept-loop", daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections(timeout=WAIT_S)
        thread.join(WAIT_S)
        assert not thread.is_alive()


class _Quiet(BaseHTTPRequestHandler):
    def handle(self) -> None:
        self.request.recv(1)


@pytest.mark.timeout(60)
def test_an_idle_loop_does_not_wake_and_shutdown_ends_it_at_once() -> None:
    with _loop(_Quiet, request_timeout=0.3) as httpd:
        time.sleep(0.3)
        before = httpd.wakeups
        time.sleep(1.2)  # the stdlib's loop would have polled 6 times (every 0.2 s)
        assert httpd.wakeups == before
        started = time.monotonic()
        httpd.shutdown()  # the loop sleeps with no deadline at all: its wake-up ends it
        assert time.monotonic() - started < 2.0


class _HeldThenRead(BaseHTTPRequestHandler):
    """An operation (no deadline) that the test ends; then a read that never gets a byte."""

    released = threading.Event()
    ended: ClassVar[list[Any]] = []

    def handle(self) -> None:
        self.server.set_deadline(False)  # type: ignore[attr-defined]
        assert self.released.wait(WAIT_S)
        self.server.set_deadline(True)  # type: ignore[attr-defined]
        self.request.settimeout(WAIT_S)
        try:
            self.ended.append(self.request.recv(1))  # b"": cut off at its deadline
        except OSError as exc:  # timed out: never cut off
            self.ended.append(exc)


@pytest.mark.timeout(60)
def test_a_deadline_set_while_the_loop_sleeps_without_one_wakes_it() -> None:
    """The connection's first deadline goes while its operation runs; the loop then sleeps
    with none. The deadline set after the operation must wake it, or nothing cuts the
    connection off."""
    _HeldThenRead.released.clear()
    _HeldThenRead.ended.clear()
    with _loop(_HeldThenRead, request_timeout=0.3) as httpd, socket.create_connection(
            ("127.0.0.1", httpd.server_address[1]), timeout=WAIT_S):
        time.sleep(0.8)  # past the accept's deadline: the loop woke for it, found none
        released = time.monotonic()
        _HeldThenRead.released.set()
        deadline = released + WAIT_S
        while not _HeldThenRead.ended and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _HeldThenRead.ended == [b""]
        assert time.monotonic() - released < 3.0


@pytest.mark.timeout(60)
def test_a_trickle_that_starts_while_the_loop_sleeps_is_cut_off(tmp_path: Path) -> None:
    with serving(tmp_path, request_timeout=0.5) as slow:
        assert slow.request("GET", "/v1/health").status == 200
        time.sleep(1.5)  # past that request's deadline: the loop sleeps until woken
        with socket.create_connection(("127.0.0.1", slow.server.port), timeout=WAIT_S) as sock:
            sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert trickled_until_cut(sock) < 3
        assert slow.request("GET", "/v1/health").status == 200


@pytest.mark.timeout(60)
def test_an_answer_being_made_when_the_server_stops_still_reaches_its_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop ends at once now (it waited up to a poll before): the stop cuts off the
    connections still reading, but gives one being answered a moment to send its answer."""
    with serving(tmp_path) as served:
        inside, let_go = threading.Event(), threading.Event()
        call = served.api.call

        def held(op: str, body: Any) -> Any:
            inside.set()
            assert let_go.wait(WAIT_S)
            return call(op, body)

        monkeypatch.setattr(served.api, "call", held)
        answers: list[int] = []
        asking = threading.Thread(
            target=lambda: answers.append(served.request("GET", "/v1/status").status))
        asking.start()
        assert inside.wait(WAIT_S)
        idle = socket.create_connection(("127.0.0.1", served.server.port), timeout=WAIT_S)
        idle.sendall(b"GET /v1/health HTTP/1.1\r\n")  # and no more
        time.sleep(0.2)
        stopping = threading.Thread(target=served.server.stop)
        stopping.start()
        time.sleep(0.05)
        let_go.set()
        stopping.join(WAIT_S)
        asking.join(WAIT_S)
        assert answers == [200]
        try:
            got = idle.recv(1)
        except ConnectionResetError:
            got = b""
        assert got == b""  # a connection still reading its request was cut off, unanswered
        idle.close()
