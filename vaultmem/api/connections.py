"""The socket's connections, under the request handling of `api/server.py`: one tracked
thread per connection, deadlines for clients that trickle bytes, and a shutdown that ends
every connection.

The accept loop sleeps until something is to be done: a connection to accept, the nearest
deadline of a connection still reading its request (or writing its answer), or a wake-up
byte on its own socket pair (`shutdown`, or a deadline set while it slept). An idle daemon's
loop does not wake at all (the stdlib's polls every `poll_interval`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any

log = logging.getLogger("vaultmem.api.server")


@dataclass
class _Connection:
    sock: socket.socket
    deadline: float | None
    answering: bool = False  # its request is in: the operation runs, or its answer is sent


class TrackedHttpServer(ThreadingHTTPServer):
    """The stdlib's threading server, tracking each connection's thread and socket so a
    trickling client is cut off at its deadline and stop() can end and join them all.
    `owner` holds `port`, `request_timeout` and whatever the handler needs."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], family: socket.AddressFamily, owner: Any,
                 handler: type[BaseHTTPRequestHandler]) -> None:
        self.address_family = family
        self.owner = owner
        self._active: dict[threading.Thread, _Connection] = {}
        self._active_lock = threading.Lock()
        self._asleep_until = math.inf  # when the loop wakes by itself (under _active_lock)
        self._closing = False
        self._loop_ended = threading.Event()
        self._wake_lock = threading.Lock()  # no wake-up byte is sent once the pair is closed
        self._wake_r, self._wake_w = socket.socketpair()
        for end in (self._wake_r, self._wake_w):
            end.setblocking(False)
        try:
            super().__init__(address, handler)
        except BaseException:
            self._close_wake()
            raise

    # the accept loop --------------------------------------------------------------------------

    def serve_forever(self, poll_interval: float | None = None) -> None:
        """Accept connections until `shutdown()`. The loop sleeps until a connection arrives,
        the nearest deadline or a wake-up; `poll_interval` (None: no limit) caps each sleep."""
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self, selectors.EVENT_READ)
                selector.register(self._wake_r, selectors.EVENT_READ)
                while not self._closing:
                    ready = selector.select(self._sleep_s(poll_interval))
                    if self._closing:
                        break
                    for key, _ in ready:
                        if key.fileobj is self._wake_r:
                            self._drain_wake()
                        else:
                            self._accept()
                    self.service_actions()
        finally:
            self._loop_ended.set()

    def shutdown(self) -> None:
        """End `serve_forever` and wait for it (it ends at once, whatever it was waiting
        for). Connections being answered go on: `close_connections` ends them."""
        self._closing = True
        self._wake()
        self._loop_ended.wait()

    def server_close(self) -> None:
        super().server_close()
        self._close_wake()

    def _accept(self) -> None:
        """Accept one connection and hand it to its thread (the stdlib's
        `_handle_request_noblock`, without its `verify_request`)."""
        try:
            request, client_address = self.get_request()
        except OSError:  # the client went away before it was accepted
            return
        try:
            self.process_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
            self.shutdown_request(request)

    def _sleep_s(self, cap: float | None) -> float | None:
        """Seconds until the nearest deadline (None: none, sleep until woken), at most
        `cap`; the wake-up time is kept so a nearer deadline set meanwhile wakes the loop."""
        with self._active_lock:
            deadlines = [c.deadline for c in self._active.values() if c.deadline is not None]
            now = time.monotonic()
            until = min(deadlines, default=math.inf)
            if cap is not None:
                until = min(until, now + cap)
            self._asleep_until = until
        return None if until == math.inf else max(0.0, until - now)

    def _wake(self) -> None:
        with self._wake_lock, contextlib.suppress(OSError):  # full: a wake-up is pending
            if self._wake_w.fileno() != -1:
                self._wake_w.send(b"\0")

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                pass

    def _close_wake(self) -> None:
        with self._wake_lock:
            self._wake_r.close()
            self._wake_w.close()

    # connections ----------------------------------------------------------------------------

    def server_bind(self) -> None:
        TCPServer.server_bind(self)  # HTTPServer's would do a reverse DNS lookup
        self.server_name = str(self.server_address[0])
        self.server_port = int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        """One thread per connection, tracked so stop() can end and join them all."""
        thread = threading.Thread(target=self._serve_one, args=(request, client_address),
                                  name=f"vaultmem-http:{self.owner.port}:request",
                                  daemon=True)
        with self._active_lock:
            self._active[thread] = _Connection(request, self._deadline())
        thread.start()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._active_lock:
                self._active.pop(threading.current_thread(), None)

    def _deadline(self) -> float:
        return time.monotonic() + float(self.owner.request_timeout)

    def set_deadline(self, active: bool) -> None:
        """The calling request's socket is closed if it is still reading the request (or
        writing the answer) after request_timeout; no deadline while the operation runs."""
        with self._active_lock:
            connection = self._active.get(threading.current_thread())
            if connection is None:
                return
            connection.deadline = self._deadline() if active else None
            connection.answering = True
            sooner = connection.deadline is not None and connection.deadline < self._asleep_until
        if sooner:  # the loop sleeps past it (with no deadline at all: until woken)
            self._wake()

    def service_actions(self) -> None:
        """Called by serve_forever after each wake-up: cut off clients that trickle bytes
        (once: a connection cut off has no deadline left, its thread ends on its own)."""
        now = time.monotonic()
        with self._active_lock:
            late = [c for c in self._active.values()
                    if c.deadline is not None and c.deadline <= now]
            for connection in late:
                connection.deadline = None
        self._cut(late)

    def close_connections(self, timeout: float, grace: float = 0.0) -> None:
        """End every connection and join its thread (`timeout` each). Those still reading
        their request are cut off at once; those answering one get `grace` seconds in all
        to send their answer first (a search let go just as the daemon stops)."""
        with self._active_lock:
            active = list(self._active.items())
        answering = [thread for thread, connection in active if connection.answering]
        self._cut([c for _, c in active if not c.answering])
        ends = time.monotonic() + grace
        for thread in answering:
            thread.join(max(0.0, ends - time.monotonic()))
        self._cut([c for _, c in active if c.answering])
        for thread, _ in active:
            thread.join(timeout)

    @staticmethod
    def _cut(connections: list[_Connection]) -> None:
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)


class CallsInFlight:
    """How many operations the socket is answering (`with calls:` around each); the daemon's
    start-up waits for none before its background work."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    def __enter__(self) -> None:
        with self._changed:
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self._count -= 1
            self._changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Whether no call was in flight at some moment within `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._count == 0, timeout)
