"""The load test's sync-like process: it changes a fixed share of the vault in bursts (edits,
some appending to memory notes the daemon also writes; creates, renames, deletes), as a sync
tool pulling changes from another device would, and remembers what each note must hold."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

from vaultmem_testing.synthetic import NoteWriter, SyntheticVault

CHURN_KINDS = {"edit": 50, "create": 20, "rename": 15, "delete": 15}


class Sync:
    """Changes a fixed share of the vault in bursts and remembers what each note must hold."""

    def __init__(self, vault: SyntheticVault, changes: int, seed: int) -> None:
        self.root = vault.root
        self.rng = random.Random(seed)
        self.writer = NoteWriter(seed + 1)
        pool = sorted(vault.notes)
        self.rng.shuffle(pool)
        self.pool = pool[:max(4, changes)]  # the notes this sync may change
        self.memories = list(vault.memories)
        self.changes = changes
        self.expected: dict[str, str] = {}  # path -> exact text
        self.appended: dict[str, list[str]] = defaultdict(list)  # memory path -> lines
        self.gone: set[str] = set()
        self.counts: Counter[str] = Counter()

    def run(self, bursts: int, deadline: float, stop: threading.Event) -> None:
        per_burst = max(1, -(-self.changes // bursts))
        gap = max(0.0, (deadline - time.monotonic()) / (bursts + 1))
        while sum(self.counts.values()) < self.changes and not stop.wait(gap):
            for _ in range(min(per_burst, self.changes - sum(self.counts.values()))):
                self.change()

    def change(self) -> None:
        kind = self.rng.choices(list(CHURN_KINDS), list(CHURN_KINDS.values()))[0]
        if kind != "create" and len(self.pool) < 2:
            kind = "create"
        getattr(self, kind)()
        self.counts[kind] += 1

    def edit(self) -> None:
        if self.memories and self.rng.random() < 0.2:
            path = self.rng.choice(self.memories)
            line = f"Sync edit {self.rng.getrandbits(40):010x}."
            full = self.root / path
            full.write_text(full.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
            self.appended[path].append(line)
            return
        self._write(self.rng.choice(self.pool), self.writer.note())

    def create(self) -> None:
        path = self._free_path(Path(self.rng.choice(self.pool)).parent)
        self.pool.append(path)
        self._write(path, self.writer.note())

    def rename(self) -> None:
        old = self.pool.pop(self.rng.randrange(len(self.pool)))
        new = self._free_path(Path(old).parent)
        (self.root / old).rename(self.root / new)
        text = self.expected.pop(old, None)
        self.expected[new] = text if text is not None else (self.root / new).read_text("utf-8")
        self.gone.add(old)
        self.pool.append(new)

    def delete(self) -> None:
        path = self.pool.pop(self.rng.randrange(len(self.pool)))
        (self.root / path).unlink()
        self.expected.pop(path, None)
        self.gone.add(path)

    def _free_path(self, folder: Path) -> str:
        """A vault-relative path in `folder` that no note has (nor had) yet."""
        while True:
            path = (folder / f"{self.writer.title()}.md").as_posix()
            if not (self.root / path).exists() and path not in self.gone:
                return path

    def _write(self, path: str, text: str) -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
        self.expected[path] = text
        self.gone.discard(path)
