"""The daemon's localhost socket: HTTP/JSON on 127.0.0.1 over the stdlib's threading server.

Every request is checked in this order: a loopback `Host` and no foreign `Origin` (403, so web
pages and DNS-rebinding attacks get nothing), the bearer token (401; not for health), the route
(404/405), the body (411/413/415/400), then `Api.call`. One connection per request; sockets
time out so a slow client cannot hold a worker; bodies are never logged.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from vaultmem import __version__
from vaultmem.api.auth import PLUGIN_ORIGIN, check_host, check_origin, token_matches
from vaultmem.api.connections import CallsInFlight, TrackedHttpServer
from vaultmem.api.ops import Api
from vaultmem.api.schemas import Route, match_path, openapi_document
from vaultmem.api.validation import parse_body, query_body
from vaultmem.core.json_types import JSON
from vaultmem.errors import ConfigError, InvalidInput, VaultmemError

log = logging.getLogger(__name__)

Headers = Iterable[tuple[str, str]]
BIND_HOSTS = {"127.0.0.1": ("127.0.0.1", socket.AF_INET),
              "localhost": ("127.0.0.1", socket.AF_INET),
              "::1": ("::1", socket.AF_INET6), "[::1]": ("::1", socket.AF_INET6)}
LINGER_BYTES = 256 * 1024  # unread body drained before closing, so the client sees our answer
LINGER_SECONDS = 1.0
STOP_GRACE_S = 0.5  # at stop, an answer being made or sent gets this long to reach its client
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 408: "timeout", 411: "length_required",
              413: "too_large", 414: "too_large", 415: "unsupported_media_type",
              431: "too_large", 500: "internal", 501: "not_implemented"}


class HttpError(Exception):
    def __init__(self, status: int, message: str, headers: Headers = ()) -> None:
        super().__init__(message)
        self.status = status
        self.code = HTTP_CODES.get(status, "http_error")
        self.message = message
        self.headers = list(headers)


class ApiServer:
    def __init__(self, api: Api, *, token: str, host: str, port: int,
                 max_body: int = 1_048_576, request_timeout: float = 10.0) -> None:
        if host not in BIND_HOSTS:
            raise ConfigError(f"refusing to serve on {host!r}: the socket only binds a loopback "
                              "address (127.0.0.1, localhost or ::1)")
        if not token:
            raise ConfigError("the server needs a non-empty token")
        self.api = api
        self.token = token
        self.host = host
        self.port = port
        self.max_body = max_body
        self.request_timeout = request_timeout
        self._httpd: TrackedHttpServer | None = None
        self._thread: threading.Thread | None = None
        self.calls = CallsInFlight()  # operations being answered

    @property
    def url(self) -> str:
        address, family = BIND_HOSTS[self.host]
        shown = f"[{address}]" if family == socket.AF_INET6 else address
        return f"http://{shown}:{self.port}"

    def start(self) -> None:
        if self._httpd is not None:
            return
        address, family = BIND_HOSTS[self.host]
        try:
            httpd = TrackedHttpServer((address, self.port), family, self, _Handler)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {address}:{self.port}: {exc.strerror or exc}"
                              ) from exc
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever,
                                        name=f"vaultmem-http:{self.port}", daemon=True)
        self._thread.start()
        log.debug("listening on %s", self.url)

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections(timeout=self.request_timeout + LINGER_SECONDS,
                                grace=STOP_GRACE_S)
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> ApiServer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"vaultmem/{__version__}"
    server: TrackedHttpServer

    def setup(self) -> None:
        self.connection = self.request
        self.connection.settimeout(self.server.owner.request_timeout)
        self._unread: int | None = 0  # body bytes not consumed; None = unknown (chunked)
        self._length_error: str | None = None
        super().setup()

    def version_string(self) -> str:
        return self.server_version

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":
            self.send_error(400, "HTTP/0.9 requests are not supported")
            return False
        return True

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    # the pipeline ---------------------------------------------------------------------------

    def _handle(self) -> None:
        self.close_connection = True
        self._unread = self._declared_length()
        try:
            status, payload, headers = self._dispatch()
        except HttpError as exc:
            status, payload, headers = exc.status, _error(exc.code, exc.message), exc.headers
        except VaultmemError as exc:
            status, payload, headers = exc.http_status, _error(exc.code, exc.message), []
        except Exception:
            log.exception("%s %s failed", self.command, self.path.split("?", 1)[0])
            status, payload, headers = 500, _error("internal", "internal error: see the "
                                                   "vaultmem daemon's log"), []
        self._send(status, payload, headers)
        self._linger()

    def _dispatch(self) -> tuple[int, JSON | None, Headers]:
        self._check_caller()
        path, _, query = self.path.partition("?")
        if self.command == "OPTIONS":
            return self._preflight(path)
        if path != "/v1/health" and not self._authorized():
            raise HttpError(401, "a valid bearer token is required (Authorization: Bearer "
                                 "<token>; `vaultmem token` prints it)",
                            [("WWW-Authenticate", 'Bearer realm="vaultmem"')])
        route, param = self._route(path)
        if route.op == "openapi":
            return 200, openapi_document(), []
        body = self._body(route, param, query)
        self.server.set_deadline(False)  # the request is in; the operation may take long
        try:
            with self.server.owner.calls:
                return 200, self.server.owner.api.call(route.op, body), []
        finally:
            self.server.set_deadline(True)

    def _check_caller(self) -> None:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or not check_host(hosts[0]):
            raise HttpError(403, "refused: the Host must be 127.0.0.1, localhost or [::1]")
        origins = self.headers.get_all("Origin") or []
        if len(origins) > 1 or not check_origin(origins[0] if origins else None):
            raise HttpError(403, "refused: requests from web pages are not accepted")

    def _authorized(self) -> bool:
        values = self.headers.get_all("Authorization") or []
        return len(values) == 1 and token_matches(self.server.owner.token, values[0])

    def _preflight(self, path: str) -> tuple[int, JSON | None, Headers]:
        methods = sorted({route.method for route, _ in match_path(path)})
        if not methods:
            raise HttpError(404, f"no route {path}")
        if self._origin() != PLUGIN_ORIGIN:
            raise HttpError(405, "OPTIONS is only answered for CORS preflight requests",
                            [("Allow", ", ".join(methods))])
        return 204, None, [("Access-Control-Allow-Methods", ", ".join([*methods, "OPTIONS"])),
                           ("Access-Control-Allow-Headers", "Authorization, Content-Type"),
                           ("Access-Control-Max-Age", "600")]

    def _route(self, path: str) -> tuple[Route, str | None]:
        matches = match_path(path)
        if not matches:
            raise HttpError(404, f"no route {path} (see GET /v1/openapi.json)")
        for route, raw in matches:
            if route.method == self.command:
                return route, None if raw is None else _unquote(raw)
        allowed = ", ".join(sorted({route.method for route, _ in matches}))
        raise HttpError(405, f"{self.command} is not allowed on {path} (allowed: {allowed})",
                        [("Allow", allowed)])

    def _body(self, route: Route, param: str | None, query: str) -> JSON:
        if query and route.source != "query":
            raise InvalidInput(f"{route.path} takes no query parameters")
        body: JSON = {}
        if route.source == "json":
            body = self._read_json()
        elif route.source == "query":
            body = query_body(route.op, query)
        if route.path_field is not None and param is not None:
            if route.path_field in body:
                raise InvalidInput(f"{route.path_field} is given in the path, not the body")
            body[route.path_field] = param
        return body

    def _read_json(self) -> JSON:
        if self._length_error is not None:
            raise HttpError(400, self._length_error)
        length = self._unread
        if length is None:
            raise HttpError(411, "a Content-Length header is required (chunked bodies are "
                                 "not accepted)")
        if length > self.server.owner.max_body:
            raise HttpError(413, f"the body is larger than {self.server.owner.max_body} bytes")
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0]
        if ctype.strip().lower() != "application/json":
            raise HttpError(415, "the body must be application/json")
        raw = self._read(length)
        if not raw:  # no body at all; whitespace alone is not JSON and is refused
            return {}
        return parse_body(raw)

    def _read(self, length: int) -> bytes:
        try:
            raw = self.rfile.read(length)
        except (TimeoutError, OSError) as exc:
            raise HttpError(408, "the request body did not arrive in time") from exc
        self._unread = 0
        if len(raw) != length:
            raise HttpError(400, "the request body is shorter than its Content-Length")
        return raw

    def _declared_length(self) -> int | None:
        """The body's length from Content-Length; None if unknown (absent on a POST, chunked,
        or malformed: `_length_error` then says why)."""
        self._length_error = None
        values = self.headers.get_all("Content-Length") or []
        if self.headers.get("Transfer-Encoding"):
            return None
        if not values:
            return None if self.command in ("POST", "PUT", "PATCH") else 0
        if len(values) > 1 or not re.fullmatch(r"[0-9]{1,15}", values[0].strip()):
            self._length_error = "the Content-Length header is malformed"
            return None
        return int(values[0].strip())

    # the answer ---------------------------------------------------------------------------

    def _send(self, status: int, payload: JSON | None, headers: Headers) -> None:
        data = b"" if payload is None else json.dumps(
            payload, ensure_ascii=False, default=str).encode("utf-8")
        try:
            self.send_response(status)
            if payload is not None:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            if status != 204:
                self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Connection", "close")
            if self._origin() == PLUGIN_ORIGIN:
                self.send_header("Access-Control-Allow-Origin", PLUGIN_ORIGIN)
                self.send_header("Vary", "Origin")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            log.debug("client went away before the answer was sent")

    def _origin(self) -> str | None:
        headers = getattr(self, "headers", None)  # absent when the request line was bad
        return None if headers is None else headers.get("Origin")

    def _linger(self) -> None:
        """Drain (and discard) a little of an unread body so closing does not reset the
        connection before the client has read our answer; never more than LINGER_BYTES."""
        if self._unread == 0:
            return
        deadline = time.monotonic() + LINGER_SECONDS
        budget = LINGER_BYTES if self._unread is None else min(self._unread, LINGER_BYTES)
        try:
            self.connection.shutdown(socket.SHUT_WR)
            while budget > 0 and (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                chunk = self.connection.recv(min(budget, 65536))
                if not chunk:
                    break
                budget -= len(chunk)
        except OSError:
            pass

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The stdlib's own errors (bad request line, unsupported method) in our JSON shape."""
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"  # answer with a status line and headers anyway
        text = message or HTTPStatus(code).phrase
        self._send(code, _error(HTTP_CODES.get(code, "http_error"), text), [])

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


def _error(code: str, message: str) -> JSON:
    return {"error": {"code": code, "message": message}}


def _unquote(raw: str) -> str:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise InvalidInput("the id in the path is not valid UTF-8") from None
