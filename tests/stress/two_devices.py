"""Two devices on one synced vault: two vault folders, each with its own vaultmem stack as the
daemon wires it (usage journal, journalled memory store, index, reconciler; its own data dir
and device id), and a syncer that plays Syncthing between them.

The syncer remembers the version of each file both sides last agreed on. A file changed on one
side is copied to the other; a file changed on both sides since then is a conflict: one version
(picked at random, as mtimes race) keeps the name on both sides, the other is kept beside it as
`<name>.sync-conflict-YYYYMMDD-HHMMSS-<DEVICE>.md`, as Syncthing does. A change beats a delete.

A `Scenario` runs random steps (touches on either device, flushes, a user appending a line to a
note on either device, syncs, reconciles on either device — concurrent ones included) and then
lets the sync settle. It counts every use recorded and every line a user wrote, so the end
state can be checked: one active note per memory, whose use count is the initial count plus
every use recorded on either device; every written line still in the vault; both vaults equal.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.store.memory_store import MemoryStore

START = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
MEMORIES = 6
STEP_KINDS = {"touch": 40, "flush": 15, "edit": 8, "sync": 20, "reconcile": 6, "both": 3}


def write_memory(root: Path, index: int, rng: random.Random) -> tuple[str, str, int]:
    memory_id = f"00000000-0000-4000-8000-{index:012d}"
    uses = rng.randint(1, 6)
    path = f"memories/2026-11-{10 + index:02d} fact-{index}.md"
    text = (f"---\ntags: [sync, m{index}]\nstm_id: {memory_id}\n"
            f"stm_created: 2026-11-{10 + index:02d}T08:00:00+00:00\n"
            f"stm_last_used: 2026-11-{10 + index:02d}T09:00:00+00:00\nstm_use_count: {uses}\n"
            f"stm_strength: 1.0\nstm_status: active\n---\n# Fact {index}\n\n"
            f"Remembered fact number {index} about the synced vault.\n")
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    return memory_id, path, uses


class Device:
    """One machine: its copy of the vault and a vaultmem stack wired as the daemon wires it."""

    def __init__(self, name: str, vault: Path, data: Path, clock: list[datetime]) -> None:
        self.name = name
        self.vault = vault
        settings = load_settings(data / "none.toml", env={}, overrides={
            "vault": vault, "data_dir": data, "embedding_model": "fake", "device_id": name})
        self.app: App = build_app(settings, daemon=True)
        self.journal = self.app.journal
        self.api = self.app.api(clock=lambda: clock[0])
        self.app.sync.reindex()

    @property
    def store(self) -> MemoryStore:
        store = self.app.store
        assert store.journal is not None
        return store

    def flush(self) -> None:
        report = self.store.flush()
        if report.written:
            self.app.sync.sync_paths(report.written)

    def notice(self) -> None:
        """What the daemon's watcher does after files changed on disk."""
        self.app.sync.reindex()

    def close(self) -> None:
        self.app.close()
        self.journal.close()


def notes(root: Path) -> dict[str, bytes]:
    """Every note's bytes (a note moved or deleted while this reads it is left out)."""
    found = {}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        try:
            found[str(rel)] = path.read_bytes()
        except FileNotFoundError:
            continue
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".syncthing.{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@dataclass
class Syncer:
    """Syncthing between two folders: copies one-sided changes, keeps both versions of a file
    changed on both sides (the loser as a `.sync-conflict-…` copy)."""

    a: Path
    b: Path
    rng: random.Random
    agreed: dict[str, bytes | None] = field(default_factory=dict)
    conflicts: int = 0
    serial: int = 0

    def start(self) -> None:
        self.agreed = dict(notes(self.a))

    def sync(self, now: datetime) -> bool:
        """One pass; True when anything changed on either side."""
        left, right = notes(self.a), notes(self.b)
        changed = False
        for path in sorted(set(left) | set(right) | set(self.agreed)):
            ours, theirs, base = left.get(path), right.get(path), self.agreed.get(path)
            if ours == theirs:
                self.agreed[path] = ours
                continue
            changed = True
            seen = (ours, theirs)
            if ours == base:
                self._set(path, theirs, seen)
            elif theirs == base:
                self._set(path, ours, seen)
            else:
                self._conflict(path, seen, now)
        return changed

    def _set(self, path: str, data: bytes | None, seen: tuple[bytes | None, ...]) -> bool:
        """Make both sides hold `data`, unless a side changed since this pass read it (a
        daemon wrote it meanwhile): then leave it, and the next pass sees the new change."""
        for root, before in zip((self.a, self.b), seen, strict=True):
            target = root / path
            current = _read(target)
            if current == data:
                continue
            if current != before:
                return False
            if data is None:
                target.unlink(missing_ok=True)
            else:
                _put(target, data)
        self.agreed[path] = data
        return True

    def _conflict(self, path: str, seen: tuple[bytes | None, bytes | None],
                  now: datetime) -> None:
        ours, theirs = seen
        if ours is None or theirs is None:  # a change beats a delete
            self._set(path, ours if ours is not None else theirs, seen)
            return
        self.conflicts += 1
        winner, loser = (ours, theirs) if self.rng.random() < 0.5 else (theirs, ours)
        self.serial += 1
        stamp = (now + timedelta(seconds=self.serial)).strftime("%Y%m%d-%H%M%S")
        device = "ABCDEFG" if loser is ours else "HIJKLMN"
        copy = re.sub(r"\.md$", f".sync-conflict-{stamp}-{device}.md", path)
        self._set(copy, loser, (None, None))  # the loser is kept before the name changes
        self._set(path, winner, seen)


@dataclass
class Outcome:
    steps: Counter[str]
    conflicts: int
    problems: list[str]


class Scenario:
    def __init__(self, tmp: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clock = [START]
        root_a, root_b = tmp / "a" / "vault", tmp / "b" / "vault"
        root_a.mkdir(parents=True)
        (root_a / "Home.md").write_text("# Home\n\nA regular note, edited on both devices.\n",
                                        encoding="utf-8")
        self.expected: dict[str, int] = {}
        self.paths: dict[str, str] = {}
        for index in range(MEMORIES):
            memory_id, path, uses = write_memory(root_a, index, self.rng)
            self.expected[memory_id], self.paths[memory_id] = uses, path
        shutil.copytree(root_a, root_b)
        self.syncer = Syncer(root_a, root_b, self.rng)
        self.syncer.start()
        self.devices = [Device("laptop-a1", root_a, tmp / "a" / "data", self.clock),
                        Device("desk-b2", root_b, tmp / "b" / "data", self.clock)]
        self.lines: list[str] = []  # every line a user wrote
        self.steps: Counter[str] = Counter()

    def close(self) -> None:
        for device in self.devices:
            device.close()

    # steps ----------------------------------------------------------------------------------

    def run(self, steps: int) -> Outcome:
        kinds, weights = list(STEP_KINDS), list(STEP_KINDS.values())
        for _ in range(steps):
            self.clock[0] += timedelta(seconds=self.rng.randint(1, 90))
            kind = self.rng.choices(kinds, weights)[0]
            getattr(self, f"_{kind}")(self.rng.choice(self.devices))
            self.steps[kind] += 1
        self.settle()
        return Outcome(self.steps, self.syncer.conflicts, self.check())

    def _touch(self, device: Device) -> None:
        memory_id = self.rng.choice(sorted(self.expected))
        device.api.call("touch", {"id": memory_id, "boost": self.rng.random() < 0.2})
        self.expected[memory_id] += 1

    def _flush(self, device: Device) -> None:
        device.flush()

    def _edit(self, device: Device) -> None:
        """The user appends a line to a note in Obsidian on this device."""
        candidates = sorted(p for p in notes(device.vault) if "sync-conflict" not in p)
        path = device.vault / self.rng.choice(candidates)
        line = f"Line {len(self.lines)} written on {device.name}."
        text = path.read_bytes().decode("utf-8")
        _put(path, (text.rstrip("\n") + f"\n\n{line}\n").encode("utf-8"))
        self.lines.append(line)
        device.notice()

    def _sync(self, device: Device | None = None) -> bool:
        changed = self.syncer.sync(self.clock[0])
        for each in self.devices:
            each.notice()
        return changed

    def _reconcile(self, device: Device) -> None:
        device.api.call("reconcile", {"apply": True})

    def _both(self, device: Device) -> None:
        """Both daemons reconcile before the sync carries either result across."""
        for each in self.devices:
            self._reconcile(each)

    def settle(self, rounds: int = 12) -> None:
        """The devices go quiet: usage flushed, sync settled, copies reconciled (each device
        in turn, as their schedules would), until nothing changes any more."""
        for _ in range(rounds):
            for device in self.devices:
                device.flush()
            changed = self._sync()
            for device in self.devices:
                if device.store.duplicates():
                    self._reconcile(device)
                    changed = True
                    changed |= self._sync()
            if not changed and not any(len(d.journal) for d in self.devices):
                return

    # the end state --------------------------------------------------------------------------

    def check(self) -> list[str]:
        problems: list[str] = []
        left, right = notes(self.devices[0].vault), notes(self.devices[1].vault)
        if left != right:
            differ = sorted(set(left.items()) ^ set(right.items()))[:3]
            problems.append(f"the vaults differ: {differ}")
        for device in self.devices:
            if len(device.journal):
                problems.append(f"{device.name}: {len(device.journal)} uses never reached a note")
            if device.store.duplicates():
                problems.append(f"{device.name}: duplicates left: {device.store.duplicates()}")
            live = {m.state.id: m for m in device.store.iter_memories()}
            for memory_id, uses in self.expected.items():
                memory = live.get(memory_id)
                if memory is None:
                    problems.append(f"{device.name}: memory {memory_id} is gone")
                elif memory.state.use_count != uses:
                    problems.append(f"{device.name}: {memory.path} has {memory.state.use_count} "
                                    f"uses, {uses} were recorded")
                elif memory.state.status != "active":
                    problems.append(f"{device.name}: {memory.path} is {memory.state.status}")
        stray = [p for p in left if "sync-conflict" in p and not p.startswith("memories/archive/")
                 and p.startswith("memories/")]
        if stray:
            problems.append(f"conflict copies of memories left outside the archive: {stray}")
        text = "\n".join(data.decode("utf-8") for data in left.values())
        lost = [line for line in self.lines if line not in text]
        if lost:
            problems.append(f"lines a user wrote are gone: {lost[:3]}")
        return problems

