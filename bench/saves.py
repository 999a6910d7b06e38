"""How short the watcher's debounce can be: `scripts/bench saves`.

A save is not one event. Writing a note in place truncates it, then writes it (two events,
and between them the note is empty); an atomic save writes a temp file and renames it; an
editor that keeps a backup renames the note away, writes it anew and deletes the backup (the
note is missing in between). The watcher hands a note over once the vault has been quiet for
`debounce_ms`: if a save pauses longer than that, the note is read mid-save (empty, half
written or missing) and indexed twice.

For each debounce in --debounce, a real VaultWatcher (the daemon's) watches a temporary vault
while each save style below rewrites a note --saves times, beside --busy CPU burners (a busy
machine stretches the pauses inside a save). Its consumer reads the note when a batch arrives.
Per style and debounce: batches per save, batches that read the note mid-save (its bytes were
not the save's), and the time from the save's end to the batch. A separate watchdog observer
records every event, for the longest pause inside one save.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from bench.contention import burners
from bench.daemon import say, section
from bench.support import machine_lines, ms, now_utc, p50
from vaultmem.daemon.watch import VaultWatcher
from vaultmem.vault.ignore import IgnoreRules

NOTE = "Journal/Garden log.md"
PIECE = 16 * 1024


def in_place(path: Path, data: bytes) -> None:
    """Truncate and write in one call, as a plain `writeFile` does."""
    with path.open("wb") as handle:
        handle.write(data)


def in_pieces(path: Path, data: bytes) -> None:
    """Truncate, then write and fsync 16 KiB at a time (a large note, a slow writer)."""
    with path.open("wb") as handle:
        for start in range(0, len(data), PIECE):
            handle.write(data[start : start + PIECE])
            handle.flush()
            os.fsync(handle.fileno())


def atomic(path: Path, data: bytes) -> None:
    """Write and fsync a temp file beside the note, then rename it over the note."""
    temp = path.with_name(path.name + ".tmp")
    with temp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def backup_rename(path: Path, data: bytes) -> None:
    """Rename the note to a backup, write it anew with fsync, delete the backup."""
    backup = path.with_name(path.name + "~")
    os.replace(path, backup)
    with path.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    backup.unlink()


STYLES: dict[str, tuple[Callable[[Path, bytes], None], int]] = {
    "in place, 4 KiB": (in_place, 4 * 1024),
    "in pieces, 256 KiB": (in_pieces, 256 * 1024),
    "atomic rename, 4 KiB": (atomic, 4 * 1024),
    "backup and rewrite, 4 KiB": (backup_rename, 4 * 1024),
}


@dataclass
class Tally:
    batches: list[int] = field(default_factory=list)  # batches per save
    early: int = 0  # batches that read the note mid-save
    delays: list[float] = field(default_factory=list)  # save's end -> its last batch
    pauses: list[float] = field(default_factory=list)  # longest pause between events


class Recorder(FileSystemEventHandler):
    """Every raw event's time, for the pauses inside a save."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("opened", "closed", "closed_no_write"):
            with self.lock:
                self.times.append(time.perf_counter())

    def take(self) -> list[float]:
        with self.lock:
            times, self.times = self.times, []
        return times


def content(data: bytes, save: int) -> bytes:
    """The save's bytes: a line that names the save, padded to the style's size."""
    head = f"---\ntags: [garden]\n---\n# Garden log\n\nSave {save}.\n".encode()
    line = b"Watered the tomatoes and tied the beans; the courgettes are ahead.\n"
    return (head + line * (len(data) // len(line) + 1))[: len(data)]


def measure(root: Path, debounce_s: float, write: Callable[[Path, bytes], None], size: int,
            saves: int, gap_s: float) -> Tally:
    note = root / NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_bytes(content(bytes(size), -1))
    arrived: list[tuple[float, bytes | None]] = []

    def on_batch(paths: set[str]) -> None:
        if NOTE in paths:
            try:
                arrived.append((time.perf_counter(), note.read_bytes()))
            except FileNotFoundError:
                arrived.append((time.perf_counter(), None))

    recorder, observer = Recorder(), Observer()
    observer.schedule(recorder, str(root), recursive=True)
    tally = Tally()
    with VaultWatcher(root, IgnoreRules(), on_batch, debounce_s=debounce_s):
        observer.start()
        try:
            time.sleep(0.5)
            recorder.take()
            for save in range(saves):
                data = content(bytes(size), save)
                arrived.clear()
                write(note, data)
                ended = time.perf_counter()
                time.sleep(gap_s)
                times = recorder.take()
                tally.pauses.append(max((b - a for a, b in pairwise(times)), default=0.0))
                tally.batches.append(len(arrived))
                tally.early += sum(1 for _, read in arrived if read != data)
                if arrived:
                    tally.delays.append(arrived[-1][0] - ended)
        finally:
            observer.stop()
            observer.join()
    return tally


def report(name: str, debounce_ms: int, tally: Tally) -> bool:
    split = sum(1 for count in tally.batches if count > 1)
    missed = sum(1 for count in tally.batches if count == 0)
    say(f"  {name:<26} debounce {debounce_ms:>3} ms: saves read twice {split:>2} of "
        f"{len(tally.batches)}, batches mid-save {tally.early:>2}, not seen {missed}; "
        f"longest pause in a save p50 {ms(p50(tally.pauses))} ms, max "
        f"{ms(max(tally.pauses, default=0.0))} ms; save -> batch p50 "
        f"{ms(p50(tally.delays)) if tally.delays else '-'} ms")
    return split == 0 and tally.early == 0 and missed == 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debounce", default="50,100,150", help="ms, comma-separated")
    parser.add_argument("--saves", type=int, default=20, help="saves per style and debounce")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2,
                        help="CPU burners running meanwhile (default: one per core)")
    parser.add_argument("--quick", action="store_true", help="6 saves each")
    args = parser.parse_args()
    if args.quick:
        args.saves = 6
    return args


def main() -> None:
    args = parse_args()
    debounces = [int(value) for value in args.debounce.split(",") if value]
    say(f"# {os.environ.get('BENCH_COMMAND', 'scripts/bench saves')}")
    say(f"date: {now_utc():%Y-%m-%d %H:%M} UTC")
    for line in machine_lines():
        say(line)
    clean: dict[int, bool] = {}
    with burners(args.busy), tempfile.TemporaryDirectory(prefix="vaultmem-saves-") as tmp:
        for debounce_ms in debounces:
            section(f"debounce {debounce_ms} ms, {args.busy} CPU burners")
            clean[debounce_ms] = True
            for index, (name, (write, size)) in enumerate(STYLES.items()):
                root = Path(tmp) / f"{debounce_ms}-{index}"
                tally = measure(root, debounce_ms / 1000, write, size, args.saves,
                                gap_s=debounce_ms / 1000 + 0.35)
                clean[debounce_ms] &= report(name, debounce_ms, tally)
    section("summary")
    for debounce_ms, ok in clean.items():
        say(f"  debounce {debounce_ms:>3} ms: "
            f"{'every save read once, after it ended' if ok else 'SOME SAVES READ MID-SAVE'}")


if __name__ == "__main__":
    main()
