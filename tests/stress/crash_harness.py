"""Crash-safety harness: API clients and a disk actor work a real daemon, which is killed.

`ApiWorkload` runs client threads against the socket and records every request's outcome
(acknowledged, refused, or unknown when the kill cut it off); `DiskActor` (in `disk_actor.py`)
edits the vault as a user and a sync tool would, keeping a model (`VaultModel`) of what the
user wrote. Both are
seeded, so a failing run reproduces from the seed it prints (thread timing aside). The
kill cycles and the checks are in `test_crash.py`.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

ACK, REFUSED, UNKNOWN, UNSENT, ERROR = "ack", "refused", "unknown", "unsent", "error"
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kestrel", "lagoon", "marble", "nectar", "onyx", "pewter", "quartz", "raven",
         "saffron", "tundra", "umber", "violet", "willow", "yarrow", "zephyr", "anchor", "beacon",
         "canyon", "dune", "estuary", "falcon", "glacier", "heron", "island", "jasper")
STM_LINE = re.compile(r"^stm_[A-Za-z0-9_]+[ \t]*:")
RELATED = re.compile(r"\n*<!-- vaultmem:related -->.*?<!-- /vaultmem:related -->[ \t]*\r?\n?",
                     re.S)
ID_LINE = re.compile(r"^stm_id:[ \t]*['\"]?([0-9a-fA-F-]{36})", re.M)


class Unreachable(Exception):
    """The request may or may not have reached the daemon (it died, or never answered)."""


class NotSent(Unreachable):
    """The connection was refused: the request never reached the daemon."""


def call(url: str, token: str, method: str, path: str,
         body: dict[str, Any] | None = None, timeout: float = 30.0) -> tuple[int, Any]:
    """One request; (status, decoded body). Transport failures raise Unreachable."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    except ConnectionRefusedError as exc:
        raise NotSent(str(exc)) from exc
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise Unreachable(str(exc)) from exc
    finally:
        conn.close()


def user_view(text: str) -> str:
    """A note as its user wrote it: without vaultmem's top-level stm_* frontmatter lines (and
    their continuation lines) and without the vaultmem-managed Related section. Trailing
    newlines are dropped because appending the section adds a separating blank line."""
    lines = text.split("\n")
    if not lines or lines[0].lstrip("\ufeff").rstrip(" \t\r") != "---":
        return RELATED.sub("\n", text).rstrip("\r\n")
    kept, index, in_stm = [lines[0]], 1, False
    while index < len(lines):
        line = lines[index]
        if line.rstrip(" \t\r") in ("---", "..."):
            kept.extend(lines[index:])
            break
        if STM_LINE.match(line):
            in_stm = True
        elif in_stm and (line[:1] in (" ", "\t") or line.rstrip("\r") == "-"
                         or line.startswith("- ")):
            pass  # the continuation of an stm_* value
        else:
            in_stm = False
            kept.append(line)
        index += 1
    return RELATED.sub("\n", "\n".join(kept)).rstrip("\r\n")


def memory_id(text: str) -> str | None:
    """The stm_id of a note's frontmatter, or None."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    match = ID_LINE.search(text[: end if end > 0 else len(text)])
    return match.group(1) if match else None


def notes_on_disk(vault: Path) -> dict[str, bytes]:
    """Every `.md` file outside dot-folders: vault-relative path -> bytes."""
    found: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md"):
                full = Path(folder, name)
                try:
                    found[full.relative_to(vault).as_posix()] = full.read_bytes()
                except FileNotFoundError:
                    continue
    return found


def unique_word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice("abcdefghijkmnpqrstuvwxyz") for _ in range(10))


# -- what the clients did ------------------------------------------------------------------


@dataclass
class Op:
    kind: str
    outcome: str
    status: int
    target: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Ledger:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self._lock = threading.Lock()

    def add(self, op: Op) -> Op:
        with self._lock:
            self.ops.append(op)
        return op

    def of(self, kind: str, outcome: str | None = None) -> list[Op]:
        with self._lock:
            return [o for o in self.ops if o.kind == kind and outcome in (None, o.outcome)]

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(f"{o.kind}:{o.outcome}" for o in self.ops)


class ApiWorkload:
    """Client threads: a saver, a toucher, a pinner and a lifecycle runner."""

    def __init__(self, url: str, token: str, rng: random.Random, *, tracked: list[str],
                 pins: list[str], gone: list[str]) -> None:
        self.url, self.token = url, token
        self.tracked, self.pins, self.gone = tracked, pins, gone
        self.ledger = Ledger()
        self._stop = threading.Event()
        self._seeds = [rng.getrandbits(32) for _ in range(4)]
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        loops = (self._saver, self._toucher, self._pinner, self._lifecycle)
        for loop, seed in zip(loops, self._seeds, strict=True):
            thread = threading.Thread(target=self._run, args=(loop, random.Random(seed)),
                                      name=f"crash-{loop.__name__}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), f"{thread.name} did not stop"

    def _run(self, loop: Any, rng: random.Random) -> None:
        while not self._stop.is_set():
            loop(rng)
            time.sleep(rng.uniform(0, 0.02))

    def _do(self, kind: str, method: str, path: str, body: dict[str, Any] | None = None,
            target: str | None = None, **info: Any) -> Op:
        try:
            status, answer = call(self.url, self.token, method, path, body)
        except Unreachable as exc:
            self._stop.wait(0.05)
            outcome = UNSENT if isinstance(exc, NotSent) else UNKNOWN
            return self.ledger.add(Op(kind, outcome, 0, target, {**info, "why": str(exc)}))
        outcome = ACK if status < 300 else REFUSED if status < 500 else ERROR
        info = {**info, "answer": answer}
        return self.ledger.add(Op(kind, outcome, status, target, info))

    def _saver(self, rng: random.Random) -> None:
        token = unique_word(rng)
        if rng.random() < 0.1:  # refused by the intake gate: too short, or a secret
            secret = f"Crash fact {token}: the admin password: {rng.getrandbits(64):016x}x"
            content = "ok" if rng.random() < 0.5 else secret
            self._do("save", "POST", "/v1/memories", {"content": content}, token=token)
            return
        words = rng.sample(WORDS, 12)
        number = rng.randrange(1000, 99999)
        content = f"Crash fact {token}: the {' '.join(words)} service listens on port {number}."
        op = self._do("save", "POST", "/v1/memories",
                      {"content": content, "tags": ["crash", rng.choice(WORDS)]}, token=token)
        if op.outcome == ACK and rng.random() < 0.4:
            # a twin: same words, another number and token, so consolidation finds clusters
            twin = unique_word(rng)
            content = f"Crash fact {twin}: the {' '.join(words)} service listens on port " \
                      f"{number + 1}."
            self._do("save", "POST", "/v1/memories", {"content": content, "tags": ["crash"]},
                     token=twin)

    def _toucher(self, rng: random.Random) -> None:
        roll = rng.random()
        if roll < 0.05 and self.gone:
            ref = rng.choice(self.gone)
            self._do("touch", "POST", "/v1/touch", {"id": ref}, target=ref, uses=1)
        elif roll < 0.55:
            ref = rng.choice(self.tracked)
            self._do("touch", "POST", "/v1/touch", {"id": ref, "boost": rng.random() < 0.3},
                     target=ref, uses=1)
        elif roll < 0.75:
            ids = rng.sample(self.tracked, min(len(self.tracked), rng.randint(1, 3)))
            self._do("observe", "POST", "/v1/observe",
                     {"ids": ids, "context_tags": [rng.choice(WORDS)]}, ids=ids, uses=1)
        else:
            ref = rng.choice(self.tracked)
            helpful = rng.random() < 0.5
            self._do("feedback", "POST", "/v1/feedback", {"id": ref, "helpful": helpful},
                     target=ref, uses=int(helpful))

    def _pinner(self, rng: random.Random) -> None:
        if rng.random() < 0.5:
            ref = rng.choice(self.pins)
            pinned = rng.random() < 0.5
            self._do("pin", "POST", "/v1/pin", {"id": ref, "pinned": pinned}, target=ref,
                     pinned=pinned)
        else:
            self._do("search", "POST", "/v1/search", {"query": " ".join(rng.sample(WORDS, 3))})

    def _lifecycle(self, rng: random.Random) -> None:
        roll = rng.random()
        if roll < 0.3:
            self._do("sweep", "POST", "/v1/sweep", {"dry_run": False})
        elif roll < 0.45:
            self._do("gc", "POST", "/v1/gc", {"apply": True})
        elif roll < 0.6:
            self._do("promote", "POST", "/v1/promote", {})
        elif roll < 0.7:
            self._do("review", "GET", "/v1/review?limit=5")
        else:
            listed = self._do("clusters", "GET", "/v1/clusters")
            clusters = (listed.info.get("answer") or {}).get("clusters", []) \
                if listed.outcome == ACK else []
            if clusters:
                cluster = rng.choice(clusters)
                self._do("merge", "POST", f"/v1/clusters/{quote(cluster['id'])}/merge", {},
                         target=cluster["id"], members=[m["id"] for m in cluster["members"]])


