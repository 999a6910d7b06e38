"""Crash-safety harness: API clients and a disk actor work a real daemon, which is killed.

`ApiWorkload` runs client threads against the socket and records every request's outcome
(acknowledged, refused, or unknown when the kill cut it off); `DiskActor` edits the vault as
a user and a sync tool would, keeping a model (`VaultModel`) of what the user wrote. Both are
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


# -- what the user did ---------------------------------------------------------------------

USER_FOLDERS = ("Journal", "Projects/Crash", "Inbox", "Areas/Crash")


@dataclass
class VaultModel:
    """What the user wrote. Regular notes: exact bytes by path (vaultmem never writes them).
    Memory notes, by stm_id: the user's view of the text (vaultmem may change its own lines,
    add its Related section and move the file), and the ids the user deleted."""

    user: dict[str, bytes] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    words: list[tuple[str, str]] = field(default_factory=list)  # (unique word, note path)

    def learn(self, disk: dict[str, bytes]) -> None:
        """Adopt the memory notes not seen before (their user view is known from now on)."""
        for data in disk.values():
            text = data.decode("utf-8", "replace")
            found = memory_id(text)
            if found is not None and found not in self.memories:
                self.memories[found] = user_view(text)


def seed_user_notes(vault: Path, rng: random.Random, count: int) -> None:
    """Extra user notes with frontmatter a user would write (keys, comments, quoting)."""
    for number in range(count):
        folder = vault / USER_FOLDERS[number % len(USER_FOLDERS)]
        folder.mkdir(parents=True, exist_ok=True)
        newline = "\r\n" if number % 5 == 0 else "\n"
        lines = ["---", f"title: 'Crash note {number}'", "status: draft  # by hand",
                 f"tags: [crash, {rng.choice(WORDS)}]", "---", f"# Crash note {number}", "",
                 f"Notes about {' '.join(rng.sample(WORDS, 6))}.", ""]
        (folder / f"Crash note {number}.md").write_bytes(newline.join(lines).encode())


class DiskActor:
    """A user and a sync tool editing the vault while the daemon works (one thread)."""

    def __init__(self, vault: Path, model: VaultModel, rng: random.Random) -> None:
        self.vault, self.model, self.rng = vault, model, rng
        self.actions: Counter[str] = Counter()
        self.memory_log: dict[str, list[str]] = {}  # memory id -> what the user did to it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._counter = 0

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="crash-disk", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            assert not self._thread.is_alive(), "the disk actor did not stop"

    def _run(self) -> None:
        actions = (
            (0.16, self.append_line), (0.14, self.edit_body), (0.1, self.change_user_key),
            (0.1, self.create_note), (0.08, self.move_note), (0.05, self.delete_note),
            (0.17, self.edit_memory), (0.1, self.rename_memory), (0.02, self.delete_memory),
            (0.08, self.sync_copy_in),
        )
        while not self._stop.is_set():
            roll, total = self.rng.random(), 0.0
            for weight, action in actions:
                total += weight
                if roll < total:
                    if action():
                        self.actions[action.__name__] += 1
                    break
            self._stop.wait(self.rng.uniform(0.005, 0.04))

    # regular notes: the model is exact ----------------------------------------------------

    def _pick_user(self) -> str | None:
        return self.rng.choice(sorted(self.model.user)) if self.model.user else None

    def _word(self, path: str) -> str:
        word = unique_word(self.rng)
        self.model.words.append((word, path))
        return word

    def _atomic_save(self, path: str, data: bytes) -> None:
        """An editor's safe save: a temp file beside the note, then rename over it."""
        target = self.vault / path
        temp = target.with_name(f".{target.name}.{self.rng.randrange(10**6)}.tmp")
        temp.write_bytes(data)
        os.replace(temp, target)
        self.model.user[path] = data

    def append_line(self) -> bool:
        path = self._pick_user()
        if path is None:
            return False
        data = self.model.user[path]
        newline = b"\r\n" if b"\r\n" in data else b"\n"
        line = f"- seen {self._word(path)}".encode() + newline
        with open(self.vault / path, "ab") as handle:  # an in-place append, as some tools do
            handle.write(line)
        self.model.user[path] = data + line
        return True

    def edit_body(self) -> bool:
        path = self._pick_user()
        if path is None:
            return False
        text = self.model.user[path].decode()
        head, sep, body = text.partition("\n# ")
        body = body.replace("Notes about", f"Notes ({self._word(path)}) about", 1)
        self._atomic_save(path, (head + sep + body).encode())
        return True

    def change_user_key(self) -> bool:
        path = self._pick_user()
        if path is None or not self.model.user[path].startswith(b"---"):
            return False
        text = self.model.user[path].decode()
        new = re.sub(r"^status: \w+", f"status: {self.rng.choice(WORDS)}", text, count=1,
                     flags=re.M)
        self._atomic_save(path, new.encode())
        return True

    def create_note(self) -> bool:
        self._counter += 1
        folder = self.rng.choice(USER_FOLDERS)
        path = f"{folder}/New {self._counter} {unique_word(self.rng)}.md"
        (self.vault / folder).mkdir(parents=True, exist_ok=True)
        text = f"---\nstatus: new\n---\n# New note\n\nAbout {self._word(path)}.\n"
        self._atomic_save(path, text.encode())
        return True

    def move_note(self) -> bool:
        path = self._pick_user()
        if path is None:
            return False
        name = path.rsplit("/", 1)[-1]
        target = f"{self.rng.choice(USER_FOLDERS)}/{name}"
        if target in self.model.user or (self.vault / target).exists():
            target = f"{target[:-3]} moved {unique_word(self.rng)}.md"
        (self.vault / target).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.vault / path, self.vault / target)
        self.model.user[target] = self.model.user.pop(path)
        self.model.words = [(w, target if p == path else p) for w, p in self.model.words]
        return True

    def delete_note(self) -> bool:
        path = self._pick_user()
        if path is None or len(self.model.user) < 15:
            return False
        os.unlink(self.vault / path)
        del self.model.user[path]
        return True

    def sync_copy_in(self) -> bool:
        """A sync tool bringing in another device's version: temp file, then rename."""
        path = self._pick_user()
        if path is None:
            return False
        data = self.model.user[path] + f"Synced {self._word(path)}\n".encode()
        target = self.vault / path
        temp = target.with_name(f".syncthing.{target.name}.tmp")
        temp.write_bytes(data)
        os.replace(temp, target)
        self.model.user[path] = data
        return True

    # memory notes: the daemon writes and moves them too -----------------------------------

    def _pick_memory(self) -> tuple[str, str, str] | None:
        """(path, text, id) of a memory note on disk, read now."""
        disk = [p for p in notes_on_disk(self.vault) if p not in self.model.user]
        self.rng.shuffle(disk)
        for path in disk[:8]:
            try:
                text = (self.vault / path).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            found = memory_id(text)
            if found is not None:
                return path, text, found
        return None

    def edit_memory(self) -> bool:
        """Append a line to a memory note's body, saving like a careful editor: temp file,
        re-check that the note is still what was read, rename over it."""
        picked = self._pick_memory()
        if picked is None:
            return False
        path, text, found = picked
        newline = "\r\n" if "\r\n" in text else "\n"
        line = f"User line {unique_word(self.rng)}{newline}"
        new = text + ("" if text.endswith("\n") else newline) + line
        target = self.vault / path
        temp = target.with_name(f".{target.name}.{self.rng.randrange(10**6)}.tmp")
        temp.write_text(new, encoding="utf-8", newline="")
        try:
            if target.read_text(encoding="utf-8") != text:
                os.unlink(temp)
                return False
        except FileNotFoundError:
            os.unlink(temp)
            return False
        os.replace(temp, target)
        self.model.memories[found] = user_view(new)
        self.memory_log.setdefault(found, []).append(f"edit {path}")
        return True

    def rename_memory(self) -> bool:
        picked = self._pick_memory()
        if picked is None:
            return False
        path, _, found = picked
        folder = path.rsplit("/", 1)[0] if "/" in path and self.rng.random() < 0.6 else "Inbox"
        target = self.vault / folder / f"Renamed {unique_word(self.rng)}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(self.vault / path, target)
        except FileNotFoundError:
            return False  # the daemon moved it first: the user's rename did not happen
        self.memory_log.setdefault(found, []).append(f"rename {path} -> {target.name}")
        return True

    def delete_memory(self) -> bool:
        picked = self._pick_memory()
        if picked is None:
            return False
        path, _, found = picked
        try:
            os.unlink(self.vault / path)
        except FileNotFoundError:
            return False
        self.model.deleted.add(found)
        self.memory_log.setdefault(found, []).append(f"delete {path}")
        return True
