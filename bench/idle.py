"""Idle CPU of the daemon, per thread: what wakes it when nobody uses it.

Run: `.venv/bin/python -m bench.idle [--chunks 10000] [--edits 30] [--seconds 180]`.
A real `python -m vaultmem run` process on a generated vault of ~--chunks chunks (notes made
of vaultofknowledge chunks; `--vault DIR` copies a vault instead) indexes it, settles (its CPU
stops rising), gets --edits appended lines (one every 0.5 s, as a user typing notes), then is
left alone: after 3 s its CPU time per thread (utime + stime, /proc) and wake-ups per second
(context switches) are measured over --seconds. `--model fake:384` (the default here) indexes
without the real model, which is idle at rest either way; `--model default` uses it.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.eval_sets import VOK_VAULT
from bench.support import load_average, machine_lines, now_utc
from vaultmem.core.chunking import chunk_markdown
from vaultmem.vault.notes import read_note
from vaultmem_testing.bench_vault import VaultGenerator, note_files, usable_chunk
from vaultmem_testing.daemon import REAL_MODEL, DaemonProcess
from vaultmem_testing.measure import CLK_TCK, cpu_seconds

CORPUS = VOK_VAULT


def make_vault(target: Path, chunks: int) -> list[str]:
    pool = []
    for path in note_files(CORPUS)[:800]:
        try:
            note = read_note(CORPUS, path)
        except Exception:  # unreadable corpus notes are left out
            continue
        pool += [c for chunk in chunk_markdown(note.body)
                 if (c := usable_chunk(chunk.heading, chunk.text)) is not None]
    generator = VaultGenerator(pool, seed=1)
    notes = generator.notes(chunks, 50, now_utc())
    generator.write(target, notes)
    return [n.path for n in notes if not n.path.startswith("memories/")]


def threads(pid: int) -> dict[str, tuple[str, float, int]]:
    """{thread id: (name, CPU seconds, context switches)}."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = (task / "comm").read_text().strip()
            status = (task / "status").read_text().splitlines()
        except OSError:  # the thread ended
            continue
        switches = sum(int(line.split(":")[1]) for line in status if "ctxt_switches" in line)
        out[task.name] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK, switches)
    return out


def report_threads(before: dict[str, tuple[str, float, int]],
                   after: dict[str, tuple[str, float, int]], wall: float) -> float:
    """Print each thread that ran or woke between the two `threads()` readings, the most CPU
    first; the CPU seconds of all the threads."""
    total = 0.0
    rows = []
    for tid, (name, cpu, switches) in after.items():
        _, cpu0, switches0 = before.get(tid, (name, 0.0, 0))
        total += cpu - cpu0
        if cpu > cpu0 or switches > switches0:
            rows.append((cpu - cpu0, name, tid, switches - switches0))
    for used, name, tid, wakeups in sorted(rows, reverse=True):
        print(f"  {tid:>7} {name:<18} CPU {used:6.2f} s   wake-ups {wakeups:5d} "
              f"({wakeups / wall:.2f}/s)")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description="the daemon's idle CPU, per thread")
    parser.add_argument("--chunks", type=int, default=10000)
    parser.add_argument("--vault", type=Path, help="copy this vault instead of generating one")
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--model", default="fake:384", help="embedding_model (fake:384)")
    parser.add_argument("--after", type=float, default=3.0,
                        help="seconds between the last edit and the measurement (3); past the "
                             "optimise that follows a burst of writes (5 s quiet) it is left out")
    args = parser.parse_args()
    print(f"vaultmem idle CPU, {now_utc():%Y-%m-%d %H:%M} UTC; command: {' '.join(sys.argv)}")
    for line in machine_lines():
        print(line)
    with tempfile.TemporaryDirectory(prefix="vaultmem-idle-") as name:
        tmp = Path(name)
        vault, data = tmp / "vault", tmp / "data"
        if args.vault:
            shutil.copytree(args.vault, vault)
            editable = [p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
                        if "memories" not in p.parts and "Templates" not in p.parts]
        else:
            editable = make_vault(vault, args.chunks)
        # the daemon's default settings and log level, with the embedder asked for
        daemon = DaemonProcess(vault, data, settings=REAL_MODEL, output=tmp / "daemon.log",
                               log_level=None, VAULTMEM_EMBEDDING_MODEL=args.model)
        daemon.spawn()
        try:
            measure(daemon.pid, vault, editable, args)
        finally:
            daemon.stop(timeout=60)


def measure(pid: int, vault: Path, editable: list[str], args: argparse.Namespace) -> None:
    time.sleep(20)
    last = -1.0
    while (now := cpu_seconds(pid)) - last >= 0.2:  # start-up indexing: until it settles
        last = now
        time.sleep(10)
    rng = random.Random(3)
    for i in range(args.edits):
        with (vault / rng.choice(editable)).open("a", encoding="utf-8") as handle:
            handle.write(f"\nSee also idle{i}.\n")
        time.sleep(0.5)
    time.sleep(args.after)
    before, started = threads(pid), time.monotonic()
    time.sleep(args.seconds)
    after, wall = threads(pid), time.monotonic() - started
    total = report_threads(before, after, wall)
    print(f"idle over {wall:.0f} s, from {args.after:g} s after {args.edits} edits: "
          f"{total:.2f} s CPU = "
          f"{100 * total / wall:.2f} % of one core ({len(after)} threads); load average "
          f"{load_average()}")


if __name__ == "__main__":
    main()
