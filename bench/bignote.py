"""vaultmem large-note benchmark: do small edits wait for a large note to be embedded?

Run: scripts/bench bignote [--baseline REV] [--mb 3.6] [--rounds 1] [--edits 8]

Each round starts a real daemon (the real model, the daemon's own defaults) on a fresh copy of
sample-vault/, waits for its start-up index and the model, then times each small edit (a new
short note) from its write until the index lists it as indexed (`status?files=true`, polled
every ~50 ms; a search then finds it, which the run checks for the last one):

1. alone: `--edits` small edits one after another, nothing else going on (what indexing
   them costs by themselves), then `--edits` small edits written at once (a burst: what indexing
   them together costs by itself, the measure for group 2);
2. together: a large note (`--mb` MB of real notes' text from the corpus, one note) written
   with `--edits` small edits right after it, as a sync tool or a paste writes them;
3. during: `--edits` small edits written one a second while the large note is being embedded.

The poller asks the model nothing: searching for the words while waiting would keep the model
busy with queries (they go ahead of indexing work) and measure that instead.
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
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.support import load_average, machine_lines, ms, now_utc, p50, p95
from bench.touch import worktree
from vaultmem.api.client import Client
from vaultmem_testing.daemon import REAL_MODEL, REPO, DaemonProcess

CORPUS = REPO.parent / "shared" / "corpora" / "vaultofknowledge"
BIG_PATH = "Inbox/Large pasted transcript.md"
TIMEOUT_S = 1800.0  # --timeout: an edit not searchable by then counts as this (censored)


@dataclass
class Round:
    alone: list[float] = field(default_factory=list)
    burst: list[float] = field(default_factory=list)
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


def small_edit(vault: Path, rng: random.Random) -> tuple[str, str]:
    """A new short note with a new word."""
    new = word(rng)
    path = f"Inbox/Quick note {new}.md"
    (vault / path).write_text(f"# Quick note\n\nMet {new} at the market today.\n",
                              encoding="utf-8")
    return path, new


class Poller:
    """Waits for notes to be indexed: one thread reads `status?files=true` every ~50 ms and
    records, per new note, the time from its write until the index lists it as indexed (its
    chunks are then in the index: a search finds it). It asks the model nothing: pollers that
    search would keep the model busy with queries, which go ahead of indexing work."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.waiting: dict[str, tuple[float, list[float]]] = {}
        self.failed: list[str] = []

    def add(self, path: str, into: list[float], written: float | None = None) -> None:
        self.waiting[path] = (time.perf_counter() if written is None else written, into)

    def poll(self) -> None:
        files = self.client.status(files=True)["coverage"]["files"]
        indexed = {f["path"] for f in files if f["status"] == "indexed"}
        now = time.perf_counter()
        for path, (written, into) in list(self.waiting.items()):
            if path in indexed:
                into.append(now - written)
                del self.waiting[path]
            elif now - written > TIMEOUT_S:
                into.append(TIMEOUT_S)
                self.failed.append(path)
                del self.waiting[path]

    def wait(self, seconds: float) -> None:
        """Poll for `seconds`."""
        stop = time.perf_counter() + seconds
        self.poll()
        while time.perf_counter() < stop:
            time.sleep(0.05)
            self.poll()

    def drain(self) -> None:
        while self.waiting:
            self.wait(0.0)
            time.sleep(0.05)
        if self.failed:
            print(f"    not indexed within {TIMEOUT_S:g} s (counted as {TIMEOUT_S:g} s): "
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
        for _ in range(edits):
            poller.add(small_edit(vault, rng)[0], result.alone)
            poller.drain()
            time.sleep(0.3)
        for _ in range(edits):
            poller.add(small_edit(vault, rng)[0], result.burst)
        poller.drain()
        time.sleep(0.3)
        marker = word(rng)
        text = big_note_text(megabytes, marker)
        big_written = time.perf_counter()
        (vault / BIG_PATH).write_text(text, encoding="utf-8")
        for _ in range(edits):
            poller.add(small_edit(vault, rng)[0], result.together)
        poller.wait(3.0)
        for n in range(edits):
            path, new = small_edit(vault, rng)
            poller.add(path, result.during)
            poller.wait(1.0)
            if n == edits // 2:
                result.status = daemon.status()["daemon"]
        big: list[float] = []
        poller.add(BIG_PATH, big, written=big_written)
        poller.drain()
        result.big_s = big[0]
        found = client.search(new)["results"]  # the last edit, searched for by its word
        assert found and found[0]["path"] == path, found[:1]
    finally:
        daemon.stop(timeout=120)
    return result


def figures(values: list[float]) -> str:
    return f"{ms(p50(values)):>8} / {ms(p95(values)):>8} / {ms(max(values)):>8}"


def delays(with_large: list[float], without: list[float]) -> str:
    """Extra time of each statistic, and whether it is within the time without."""
    stats = [(stat(with_large) - stat(without), stat(without)) for stat in (p50, p95, max)]
    return " / ".join(f"+{ms(extra)} ms (≤ {ms(base)}: {'yes' if extra <= base else 'no'})"
                      for extra, base in stats)


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
        print(f"  {'':24} {'alone':>26} | {'a burst alone':>26} | "
              f"{'burst with the large note':>26} | {'while it embeds':>26} | large note")
        groups = {name: [[v for r in rounds for v in getattr(r, group)]
                         for group in ("alone", "burst", "together", "during")]
                  for name, rounds in results.items()}
        for name, (alone, burst, together, during) in groups.items():
            big = sorted(r.big_s for r in results[name])[len(results[name]) // 2]
            print(f"  {name:24} {figures(alone)} | {figures(burst)} | {figures(together)} | "
                  f"{figures(during)} | {big:.1f} s")
        print("\ndelay the large note added (p50 / p95 / max, each against the same edits "
              "without it; the target is at most the time to index them alone):")
        for name, (alone, burst, together, during) in groups.items():
            print(f"  {name:24} while it embeds {delays(during, alone)} | "
                  f"a burst with it {delays(together, burst)}")


if __name__ == "__main__":
    main()
