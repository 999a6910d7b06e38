"""The crash harness's user: a model of what the user wrote and a thread that edits the
vault as a user and a sync tool would (appends, edits, moves, deletes, sync copies), seeded
so a failing run reproduces from its seed (thread timing aside)."""

from __future__ import annotations

import os
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.stress.crash_harness import WORDS, memory_id, notes_on_disk, unique_word, user_view

USER_FOLDERS = ("Journal", "Projects/Crash", "Inbox", "Areas/Crash")


ARCHIVE_FOLDER = "memories/archive"  # the default archive folder the daemon runs with


@dataclass
class VaultModel:
    """What the user wrote. Regular notes: exact bytes by path (vaultmem never writes them).
    Memory notes, by stm_id: the user's view of the text (vaultmem may change its own lines,
    add its Related section and move the file), and the ids the user deleted."""

    user: dict[str, bytes] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    # ids the user moved out of the archive folder: restored by hand, by design (docs)
    unarchived: set[str] = field(default_factory=set)
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
        if path.startswith(ARCHIVE_FOLDER + "/") and not folder.startswith(ARCHIVE_FOLDER):
            self.model.unarchived.add(found)
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
