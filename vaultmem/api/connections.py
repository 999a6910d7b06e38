"""The socket's connections, under the request handling of `api/server.py`: one tracked
thread per connection, deadlines for clients that trickle bytes, and a shutdown that ends
every connection."""

from __future__ import annotations

import contextlib
import logging
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
        super().__init__(address, handler)

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
            if connection is not None:
                connection.deadline = self._deadline() if active else None

    def service_actions(self) -> None:
        """Called by serve_forever between polls: cut off clients that trickle bytes."""
        now = time.monotonic()
        with self._active_lock:
            late = [c for c in self._active.values() if c.deadline is not None and c.deadline < now]
        for connection in late:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)

    def close_connections(self, timeout: float) -> None:
        with self._active_lock:
            active = list(self._active.items())
        for _, connection in active:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
        for thread, _ in active:
            thread.join(timeout)

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
