"""A real daemon on a hostile copy of the sample vault, with what the fuzz and security tests
check after every case: the answer's shape and time, the daemon alive, nothing outside the vault
and the data dir touched, and no user note's bytes changed outside its `stm_*` keys.

The tree under `root`: `vault/` (the re-dated sample vault plus symlinks pointing out of it),
`data/` (the daemon's), `outside/` (a sibling folder holding a memory-looking note whose marker
must never be served), `sentinel.md` next to the vault, and `daemon.log`. Also here: raw HTTP
exchanges and slow clients for the tests that go below http.client.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

from vaultmem.api.client import Client
from vaultmem.api.schemas import REF, REQUESTS, ROUTES, Route
from vaultmem_testing.daemon import REPO, DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

ANSWER_BOUND_S = 30.0  # every request is answered within this, even on a loaded machine
OUTSIDE_SECRET = "quarzlefrob-outside-secret"  # in files outside only; never sent
OUTSIDE_WORDS = "outside restic borg pihole"  # a query that would find the outside note
OUTSIDE_ID = "11111111-2222-3333-4444-555555555555"
SAMPLE_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
SAMPLE_PATH = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
OUTSIDE_NOTE = (f"---\nstm_id: {OUTSIDE_ID}\nstm_created: 2026-11-01T00:00:00+00:00\n"
                "stm_last_used: 2026-11-01T00:00:00+00:00\nstm_use_count: 1\nstm_strength: 1.0\n"
                f"stm_status: active\n---\n# Outside\n\n{OUTSIDE_SECRET} {OUTSIDE_WORDS}\n")
# Refs that name (or try to reach) something outside the vault, relative to the vault.
ESCAPES = ("../outside/secret.md", "../outside/secret", "../sentinel.md",
           "memories/../../sentinel.md", "linked/secret.md", "linked/secret",
           "memories/outside-link.md", "memories/outside-link",
           "..\\outside\\secret.md", "%2e%2e/outside/secret.md", "..", "../", "/", "//etc/passwd",
           "/etc/passwd", "/proc/self/environ", "/dev/zero", "~", OUTSIDE_ID)
_RELATED = re.compile(r"<!-- vaultmem:related -->.*?<!-- /vaultmem:related -->\n?", re.S)


class LoggedDaemon(DaemonProcess):
    """A daemon whose output goes to a file (a pipe nobody reads could fill up and block it)."""

    def __init__(self, vault: Path, data: Path, log: Path, level: str = "info",
                 **env: str) -> None:
        super().__init__(vault, data, **env)
        self.log = log
        self.level = level

    def start(self, timeout: float = 60.0) -> Client:
        (self.data / "daemon.json").unlink(missing_ok=True)
        with self.log.open("ab") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vaultmem", "run", "--log-level", self.level],
                env=self.env, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
        info = self._wait_for_daemon_file(timeout)
        token = (self.data / "token").read_text(encoding="utf-8").strip()
        self.client = Client(info["url"], token, timeout=ANSWER_BOUND_S)
        wait_until(lambda: not self.status()["daemon"]["indexing"]["running"]
                   and self.status()["daemon"]["indexing"]["last"] is not None, timeout)
        return self.client


@dataclass
class Answer:
    status: int
    raw: bytes
    headers: Message
    seconds: float

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


@dataclass
class Target:
    root: Path
    daemon: LoggedDaemon
    outside_before: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    notes_before: dict[str, bytes] = field(default_factory=dict)
    statuses: Counter[int] = field(default_factory=Counter)

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def client(self) -> Client:
        assert self.daemon.client is not None
        return self.daemon.client

    @property
    def token(self) -> str:
        return self.client.token

    @property
    def port(self) -> int:
        return self.client._port

    @property
    def base_url(self) -> str:
        return self.client.base_url

    @property
    def pid(self) -> int:
        assert self.daemon.proc is not None
        return self.daemon.proc.pid

    def request(self, method: str, path: str, body: Any = None, *,
                headers: dict[str, str] | None = None, auth: bool = True) -> Answer:
        """One request with http.client; JSON-encodes `body` unless it is bytes."""
        sent = {"Authorization": f"Bearer {self.token}"} if auth else {}
        sent.update(headers or {})
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=ANSWER_BOUND_S)
        started = time.monotonic()
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        answer = Answer(response.status, raw, response.headers, time.monotonic() - started)
        self.statuses[answer.status] += 1
        return answer

    def check_answer(self, answer: Answer, what: object) -> None:
        check_answer(answer.status, answer.raw, answer.seconds, what)

    def check_invariants(self) -> None:
        """The daemon is alive and healthy; nothing outside vault/data changed; notes intact."""
        assert self.daemon.proc is not None and self.daemon.proc.poll() is None, "daemon died"
        health = self.request("GET", "/v1/health", auth=False)
        assert health.status == 200 and health.body["status"] == "ok"
        assert snapshot_outside(self.root) == self.outside_before
        check_notes_intact(self.vault, self.notes_before)
        assert OUTSIDE_SECRET not in self.daemon.log.read_text(encoding="utf-8", errors="replace")


def check_answer(status: int, raw: bytes, seconds: float, what: object) -> None:
    """No 5xx, answered within the bound, every error body `{"error": {"code", "message"}}`."""
    assert status < 500, (what, status, raw[:300])
    assert seconds < ANSWER_BOUND_S, (what, seconds)
    assert OUTSIDE_SECRET.encode() not in raw, what
    if status >= 400:
        body = json.loads(raw)
        assert isinstance(body, dict) and set(body) == {"error"}, (what, raw[:300])
        error = body["error"]
        assert isinstance(error, dict) and set(error) == {"code", "message"}, (what, raw[:300])
        assert isinstance(error["code"], str) and isinstance(error["message"], str), what


def build_target(root: Path, **env: str) -> Target:
    """Lay out the hostile tree, start the daemon, and take the 'before' snapshots."""
    vault = redated_sample_vault(root / "vault")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(OUTSIDE_NOTE, encoding="utf-8")
    (outside / "plain.txt").write_text(OUTSIDE_SECRET + "\n", encoding="utf-8")
    (root / "sentinel.md").write_text(f"# Sentinel\n\n{OUTSIDE_SECRET}\n", encoding="utf-8")
    os.symlink(outside, vault / "linked")
    os.symlink(outside / "secret.md", vault / "memories" / "outside-link.md")
    os.symlink("loop", vault / "loop")
    daemon = LoggedDaemon(vault, root / "data", root / "daemon.log", **env)
    target = Target(root, daemon)
    target.notes_before = read_notes(vault)
    target.outside_before = snapshot_outside(root)
    return target


def snapshot_outside(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under `root` except the vault's and the data dir's contents and the log."""
    skip = {root / "vault", root / "data", root / "daemon.log"}
    entries: dict[str, tuple[Any, ...]] = {}
    for base, dirs, files in os.walk(root):
        here = Path(base)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in [*dirs, *files]:
            path = here / name
            if path in skip:
                continue
            info = path.lstat()
            if path.is_symlink():
                entries[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[str(path)] = ("dir", info.st_mode)
            else:
                entries[str(path)] = ("file", path.read_bytes(), info.st_mode, info.st_mtime_ns)
    for link in ("linked", "memories/outside-link.md", "loop"):
        path = root / "vault" / link
        entries[str(path)] = ("link", os.readlink(path) if path.is_symlink() else None)
    return entries


def read_notes(vault: Path) -> dict[str, bytes]:
    """The vault's Markdown files (not through symlinks), by vault-relative path."""
    notes = {}
    for base, _, files in os.walk(vault):
        for name in files:
            path = Path(base) / name
            if name.endswith(".md") and not path.is_symlink():
                notes[path.relative_to(vault).as_posix()] = path.read_bytes()
    return notes


def without_state(text: bytes) -> bytes:
    """A note's bytes less its `stm_*` lines and the daemon-managed Related section."""
    decoded = _RELATED.sub("", text.decode("utf-8"))
    kept = [line for line in decoded.splitlines() if not line.startswith("stm_")]
    return "\n".join(kept).rstrip().encode("utf-8")


def check_notes_intact(vault: Path, before: dict[str, bytes]) -> None:
    """User notes are byte-identical in place; each memory note still exists exactly once
    (it may have moved to the archive or STM/) with its text unchanged outside `stm_*`."""
    after = read_notes(vault)
    by_id: dict[str, list[bytes]] = {}
    for raw in after.values():
        match = re.search(rb"^stm_id: *(\S+)", raw, re.M)
        if match:
            by_id.setdefault(match.group(1).decode(), []).append(raw)
    for path, raw in before.items():
        match = re.search(rb"^stm_id: *(\S+)", raw, re.M)
        if match is None:
            assert after.get(path) == raw, f"user note changed: {path}"
            continue
        copies = by_id.get(match.group(1).decode(), [])
        assert len(copies) == 1, f"memory {path} found {len(copies)} times"
        assert without_state(copies[0]) == without_state(raw), f"memory text changed: {path}"


def ref_fields() -> list[tuple[Route, str]]:
    """Every (route, field) that names a note, a memory or a folder, from the request schemas
    (a new route or field is covered without editing the tests)."""
    found = []
    for route in ROUTES:
        for name, schema in REQUESTS.get(route.op, {}).get("properties", {}).items():
            if schema is REF or schema.get("items") is REF or name == "folder":
                found.append((route, name))
    return found


# raw HTTP ------------------------------------------------------------------------------------

def read_until_closed(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])


def raw_exchange(target: Target, data: bytes) -> bytes:
    """Send `data` as is on a new connection; what comes back before the server closes it."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", target.port), timeout=ANSWER_BOUND_S) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        raw = read_until_closed(sock)
    assert time.monotonic() - started < ANSWER_BOUND_S, data[:200]
    return raw


def check_raw_answer(raw: bytes, sent: bytes) -> None:
    """An answer (if any) is HTTP with a JSON body; the only 5xx are 501 (unknown method) and
    505 (unsupported HTTP version), which is what they mean."""
    if not raw:
        return  # e.g. nothing but whitespace sent: nothing to answer
    assert raw.startswith((b"HTTP/1.0 ", b"HTTP/1.1 ")), (sent[:200], raw[:200])
    status = status_of(raw)
    _, _, body = raw.partition(b"\r\n\r\n")
    if status in (501, 505):
        status = 400
    if sent.startswith(b"HEAD ") and not body:
        return  # a HEAD answer has headers only
    check_answer(status, body, 0.0, (sent[:200], raw[:300]))


class SlowClients:
    """Connections that send a partial request and then trickle a byte every half second."""

    def __init__(self, port: int, count: int) -> None:
        self.socks = [socket.create_connection(("127.0.0.1", port), timeout=5)
                      for _ in range(count)]
        for sock in self.socks:
            sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        self.started = time.monotonic()
        self.cut_after: list[float] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        alive = list(self.socks)
        while alive and not self._done.wait(0.5):
            for sock in list(alive):
                try:
                    sock.sendall(b"x")
                except OSError:
                    alive.remove(sock)
                    self.cut_after.append(time.monotonic() - self.started)

    def wait_cut(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.cut_after) < len(self.socks) and time.monotonic() < deadline:
            time.sleep(0.2)

    def close(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        for sock in self.socks:
            sock.close()
