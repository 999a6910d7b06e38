"""Talk to a running daemon over its localhost socket (stdlib `http.client`, no dependency).

Error answers come back as the VaultmemError subclass named by their `code`, with the server's
message, so callers handle a remote failure exactly like a local one.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from vaultmem.api.auth import TOKEN_FILE, check_host
from vaultmem.api.schemas import ROUTES
from vaultmem.core.json_types import JSON
from vaultmem.errors import ConfigError, DaemonError, InvalidInput, VaultmemError
from vaultmem.vault.writer_lock import pid_alive

DAEMON_FILE = "daemon.json"
PROBE_TIMEOUT = 1.0


def _error_classes(base: type[VaultmemError]) -> dict[str, type[VaultmemError]]:
    """Each wire code's class: a subclass that does not name its own code (a detail raised
    inside one process, like the vault's VaultBusy) never takes its parent's."""
    classes = {base.code: base}
    for sub in base.__subclasses__():
        found = _error_classes(sub)
        if "code" not in vars(sub):
            found.pop(sub.code, None)
        classes.update(found)
    return classes


ERRORS = _error_classes(VaultmemError)


class Client:
    def __init__(self, base_url: str, token: str, *, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ConfigError(f"not a daemon URL: {base_url!r} (expected http://127.0.0.1:PORT)")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._host = parts.hostname
        self._port = parts.port or 80
        self._prefix = parts.path.rstrip("/")

    def call(self, method: str, path: str, body: JSON | None = None) -> JSON:
        """One request; the decoded JSON answer, or the matching VaultmemError."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise self._unreachable() from exc
            try:
                conn.request(method, self._prefix + path, body=data, headers=headers)
                response = conn.getresponse()
                status, raw = response.status, response.read()
            except TimeoutError as exc:
                raise DaemonError(f"the vaultmem daemon at {self.base_url} did not answer "
                                  f"within {self.timeout:g} s") from exc
            except (http.client.HTTPException, OSError) as exc:
                raise DaemonError(f"the connection to the vaultmem daemon at {self.base_url} "
                                  f"broke ({exc})") from exc
        finally:
            conn.close()
        return _decode(status, raw)

    def _unreachable(self) -> DaemonError:
        return DaemonError(f"no vaultmem daemon answers at {self.base_url}: "
                           "start it with `vaultmem run`")

    # the operations (thin: bodies as in docs/protocol.md; None means "not given") ----------

    def health(self) -> JSON:
        return self.call("GET", "/v1/health")

    def call_op(self, op: str, body: JSON) -> JSON:
        """An Api operation by name, sent to its route (the table in vaultmem.api.schemas)."""
        route = next((r for r in ROUTES if r.op == op), None)
        if route is None:
            raise InvalidInput(f"unknown operation {op!r}")
        body = dict(body)
        path = route.path
        if route.path_field is not None:
            path = path.replace("{id}", quote(str(body.pop(route.path_field)), safe=""))
        if route.source == "query":
            query = urlencode({k: _query_value(v) for k, v in body.items()})
            return self.call(route.method, path + (f"?{query}" if query else ""))
        return self.call(route.method, path, body if route.source == "json" else None)

    def status(self, *, files: bool = False) -> JSON:
        return self.call("GET", "/v1/status" + ("?files=true" if files else ""))

    def search(self, query: str, **filters: Any) -> JSON:
        return self.call("POST", "/v1/search", _given(query=query, **filters))

    def related(self, ref: str, *, top_k: int | None = None) -> JSON:
        return self.call("POST", "/v1/related", _given(id=ref, top_k=top_k))

    def get(self, ref: str) -> JSON:
        return self.call("GET", "/v1/memories/" + quote(ref, safe=""))

    def save(self, content: str, **fields: Any) -> JSON:
        return self.call("POST", "/v1/memories", _given(content=content, **fields))

    def touch(self, ref: str, *, boost: bool = False) -> JSON:
        return self.call("POST", "/v1/touch", {"id": ref, "boost": boost})

    def observe(self, ids: Sequence[str], context_tags: Sequence[str] = ()) -> JSON:
        return self.call("POST", "/v1/observe", {"ids": list(ids),
                                                 "context_tags": list(context_tags)})

    def review(self, *, limit: int = 20) -> JSON:
        return self.call("GET", f"/v1/review?limit={int(limit)}")

    def sweep(self, *, dry_run: bool = True) -> JSON:
        return self.call("POST", "/v1/sweep", {"dry_run": dry_run})

    def gc(self, *, apply: bool = False) -> JSON:
        return self.call("POST", "/v1/gc", {"apply": apply})

    def promote(self, ref: str | None = None, *, dry_run: bool = False) -> JSON:
        return self.call("POST", "/v1/promote", _given(id=ref, dry_run=dry_run))

    def clusters(self) -> JSON:
        return self.call("GET", "/v1/clusters")

    def merge_cluster(self, cluster_id: str) -> JSON:
        return self.call("POST", f"/v1/clusters/{quote(cluster_id, safe='')}/merge", {})

    def reindex(self, *, full: bool = False) -> JSON:
        return self.call("POST", "/v1/reindex", {"full": full})

    def openapi(self) -> JSON:
        return self.call("GET", "/v1/openapi.json")


def _given(**fields: Any) -> JSON:
    return {name: value for name, value in fields.items() if value is not None}


def _decode(status: int, raw: bytes) -> JSON:
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError):
        data = None
    if 200 <= status < 300 and isinstance(data, dict):
        return data
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        raise VaultmemError(f"the vaultmem daemon answered HTTP {status} without a usable body")
    kind = ERRORS.get(str(error.get("code")), VaultmemError)
    raise kind(error["message"])


def discover(data_dir: Path) -> Client | None:
    """A client for the daemon serving this data dir, or None if none is running.

    Reads `daemon.json` (written by the daemon at start) and the token; None if either is
    missing or malformed, the pid is gone, the URL is not loopback, or health does not answer
    within about a second.
    """
    try:
        info = json.loads((data_dir / DAEMON_FILE).read_text(encoding="utf-8"))
        token = (data_dir / TOKEN_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(info, dict) or not token:
        return None
    pid, url = info.get("pid"), info.get("url")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not isinstance(url, str):
        return None
    if not pid_alive(pid) or not check_host(urlsplit(url).netloc):
        return None
    try:
        health = Client(url, token, timeout=PROBE_TIMEOUT).health()
    except VaultmemError:
        return None
    vault = info.get("vault")
    if isinstance(vault, str) and health.get("vault") != Path(vault).name:
        return None  # another daemon took the port over
    return Client(url, token)


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
