"""vaultmem large-note benchmark: do small edits wait for a large note to be embedded?

Run: scripts/bench bignote [--baseline REV] [--mb 3.6] [--rounds 1] [--edits 8]

Each round starts a real daemon (the real model, the daemon's own defaults) on a fresh copy of
sample-vault/, waits for its start-up index and the model, then times each small edit from its
write until a search for its new word finds it:

1. alone: `--edits` small edits one after another, nothing else going on (what indexing
   them costs by themselves);
2. together: a large note (`--mb` MB of real notes' text from the corpus, one note) written
   with `--edits` small edits right after it, as a sync tool or a paste writes them;
3. during: `--edits` small edits written one a second while the large note is being embedded.

Each edit is polled by a thread of its own (a search waits for the model batch in progress,
so one poller searching the words in turn would add those waits up).
It prints p50 / p95 / max of each group, when the large note itself became searchable, and
the daemon's `status` while the large note was being embedded. With `--baseline REV` the same
rounds run on a checkout of REV (a git worktree in a temporary directory) in the same run, so
both sets of figures come from the same, equally busy machine.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_support import load_average, machine_lines, ms, now_utc, p50, p95
from bench_touch import worktree

from tests.harness.daemon import REAL_MODEL, REPO, DaemonProcess
from vaultmem.api.client import Client

CORPUS = REPO.parent / "shared" / "corpora" / "vaultofknowledge"
BIG_PATH = "Inbox/Large pasted transcript.md"
TIMEOUT_S = 1800.0  # --timeout: an edit not searchable by then counts as this (censored)


@dataclass
class Round:
    alone: list[float] = field(default_factory=list)
    together: list[float] = field(default_factory=list)
    during: list[float] = field(default_factory=list)
    big_s: float = 0.0
    status: dict[str, Any] | None = None


def big_note_text(megabytes: float, marker: str) -> str:
    """Real notes' text (the corpus when present, else sample-vault's notes) under headings,
    up to `megabytes`; `marker` in its last section."""
    source = CORPUS if CORPUS.is_dir() else REPO / "sample-vault"
    parts, size = ["# Large pasted transcript\n"], 0
    files = sorted(source.rglob("*.md"))
    while size < megabytes * 1_000_000:
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace").replace("\x00", "")
            parts.append(f"\n## {path.stem}\n\n{text}\n")
            size += len(parts[-1].encode())
            if size >= megabytes * 1_000_000:
                break
    parts.append(f"\n## The end\n\nThe last words of the transcript: {marker}.\n")
    return "".join(parts)


def word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(5))


def small_edit(vault: Path, rng: random.Random, n: int) -> tuple[str, str]:
    """A new short note (even n) or a line appended to an existing note, with a new word."""
    new = word(rng)
    if n % 2 == 0:
        path = f"Inbox/Quick note {new}.md"
        (vault / path).write_text(f"# Quick note\n\nMet {new} at the market today.\n",
                                  encoding="utf-8")
        return path, new
    notes = sorted(p for p in vault.rglob("*.md")  # regular notes vaultmem indexes
                   if not {"Inbox", "memories", "Templates", ".obsidian"} & set(p.parts))
    target = notes[rng.randrange(len(notes))]
    with target.open("a", encoding="utf-8") as handle:
        handle.write(f"\nSee also {new}.\n")
    return target.relative_to(vault).as_posix(), new


class Poller:
    """One thread per edit searches its word (every ~50 ms, with a client of its own) until
    the note is found: a search waits for the model batch in progress, so searching the words
    one after another would add those waits up."""

    def __init__(self, client: Client) -> None:
        self.url, self.token = client.base_url, client.token
        self.threads: list[threading.Thread] = []
        self.failed: list[str] = []

    def add(self, path: str, new: str, into: list[float], written: float | None = None) -> None:
        written = time.perf_counter() if written is None else written
        thread = threading.Thread(target=self._poll, args=(path, new, written, into),
                                  daemon=True)
        thread.start()
        self.threads.append(thread)

    def _poll(self, path: str, new: str, written: float, into: list[float]) -> None:
        client = Client(self.url, self.token, timeout=120.0)
        while time.perf_counter() - written < TIMEOUT_S:
            if any(hit["path"] == path for hit in client.search(new)["results"]):
                into.append(time.perf_counter() - written)
                return
            time.sleep(0.05)
        self.failed.append(f"{path} ({new})")
        into.append(TIMEOUT_S)

    def drain(self) -> None:
        for thread in self.threads:
            thread.join()
        self.threads.clear()
        if self.failed:
            print(f"    not searchable within {TIMEOUT_S:g} s (counted as {TIMEOUT_S:g} s): "
                  f"{', '.join(self.failed)}", flush=True)
            self.failed.clear()


def one_round(source: Path, work: Path, megabytes: float, edits: int, seed: int) -> Round:
    shutil.rmtree(work, ignore_errors=True)
    vault, data = work / "vault", work / "data"
    shutil.copytree(REPO / "sample-vault", vault)
    (vault / "Inbox").mkdir(exist_ok=True)
    daemon = DaemonProcess(vault, data, settings=REAL_MODEL, source=source,
                           output=work / "daemon.log", log_level="warning",
                           client_timeout=120.0)
    rng = random.Random(seed)
    result = Round()
    try:
        client = daemon.start(timeout=300)
        daemon.wait_ready(timeout=300, model=True)
        poller = Poller(client)
        for n in range(edits):
            poller.add(*small_edit(vault, rng, n), result.alone)
            poller.drain()
            time.sleep(0.3)
        marker = word(rng)
        text = big_note_text(megabytes, marker)
        big_written = time.perf_counter()
        (vault / BIG_PATH).write_text(text, encoding="utf-8")
        for n in range(edits):
            poller.add(*small_edit(vault, rng, n), result.together)
        time.sleep(3.0)
        for n in range(edits):
            poller.add(*small_edit(vault, rng, n + 1), result.during)
            time.sleep(1.0)
            if n == edits // 2:
                result.status = daemon.status()["daemon"]
        big: list[float] = []
        poller.add(BIG_PATH, marker, big, written=big_written)
        poller.drain()
        result.big_s = big[0]
    finally:
        daemon.stop(timeout=120)
    return result


def figures(values: list[float]) -> str:
    return f"{ms(p50(values)):>8} / {ms(p95(values)):>8} / {ms(max(values)):>8}"


def main() -> None:
    global TIMEOUT_S
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a git revision to measure beside this checkout")
    parser.add_argument("--mb", type=float, default=3.6, help="size of the large note, MB")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--edits", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S,
                        help="seconds an edit may take to become searchable")
    args = parser.parse_args()
    TIMEOUT_S = args.timeout
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-bignote-") as tmp:
        root = Path(tmp)
        trees = {"this checkout": REPO}
        if args.baseline:
            trees = {f"baseline {args.baseline}": worktree(args.baseline, root / "baseline"),
                     **trees}
        print(f"vaultmem large-note benchmark, {now_utc():%Y-%m-%d %H:%M} UTC")
        print(*machine_lines(), sep="\n")
        print(f"sample-vault/ + a {args.mb:g} MB note, {args.edits} small edits per group, "
              f"{args.rounds} round(s); the real model, the daemon's defaults", flush=True)
        results: dict[str, list[Round]] = {name: [] for name in trees}
        try:
            for i in range(args.rounds):
                order = list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]
                for name, source in order:
                    one = one_round(source, root / "work", args.mb, args.edits, seed=i)
                    results[name].append(one)
                    print(f"  round {i + 1} {name}: large note searchable after "
                          f"{one.big_s:.1f} s; load average {load_average()}", flush=True)
                    print(f"    status while it was embedded: "
                          f"{json.dumps((one.status or {}).get('indexing'))}", flush=True)
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(root / "baseline")],
                               cwd=REPO, check=False)
        print(f"\nedit -> searchable of the small edits, p50 / p95 / max ms "
              f"(load average {load_average()}):")
        print(f"  {'':24} {'alone':>26} | {'with the large note':>26} | "
              f"{'while it embeds':>26} | large note")
        for name, rounds in results.items():
            alone = [v for r in rounds for v in r.alone]
            together = [v for r in rounds for v in r.together]
            during = [v for r in rounds for v in r.during]
            big = sorted(r.big_s for r in rounds)[len(rounds) // 2]
            print(f"  {name:24} {figures(alone)} | {figures(together)} | {figures(during)} | "
                  f"{big:.1f} s")


if __name__ == "__main__":
    main()
