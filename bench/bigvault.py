"""vaultmem big-vault benchmark: the first minutes of a daemon on a vault of 10,000 real notes.

Run: scripts/bench bigvault [--baseline REV] [--notes 10000] [--limit 600] [--rounds 1]
[--busy N]

The vault: the English notes of ../shared/corpora (the vaultofknowledge vault, the
obsidian-tasks documentation, the English tldr pages), copied into folders `copy-1/`,
`copy-2/`, ... until it holds `--notes` notes, each file's modification time spread over the
last year (the indexer's "most recently modified first" has an order to follow). Each round
starts a real daemon (the real English model, the daemon's defaults) on a fresh data dir and,
from the moment the process is spawned:

- asks for ten notes picked at random, each by its title (three searches a second at most,
  round robin over those not found yet, then over all ten until the round ends), and records
  when each is first found (its own path among the first 20 results): the time to the first
  answer by words and to all ten; the latency of every search meanwhile (p50 / p95 during the
  index); and the first answer that says every note is searchable by its words (the words pass
  ended, its full-text index made): the time to words complete;
- samples the daemon's RSS every second (max during the index) and reads it after, and its
  child processes' (the words pass's parsers) apart;
- waits until the start-up index is done (or `--limit` seconds), then reads the catalog: notes
  and chunks with their vectors written, the daemon's CPU seconds, chunks per second of the
  index run and CPU seconds per chunk (the figure a busy machine disturbs least).

With `--baseline REV` the same rounds run on a checkout of REV in the same run, alternating
which goes first, so both sets of figures come from the same, equally busy machine. With
`--busy N`, N plain CPU burners (bench/contention.py's, one process each) run through each
round, from before the daemon's spawn until it has stopped, in both trees: a user's machine is
busy with other work (the report gives their number and the load average).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import sqlite3
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.contention import burners
from bench.idle import threads
from bench.support import load_average, machine_lines, now_utc, p50, p95
from bench.touch import worktree
from vaultmem_testing.daemon import REAL_MODEL, REPO, DaemonProcess
from vaultmem_testing.measure import children_rss_mb, cpu_seconds, rss_mb

CORPORA = REPO.parent / "shared" / "corpora"
SOURCES = ("vaultofknowledge", "obsidian-tasks", "tldr-multilingual/en")
TARGETS = 10
FOUND_IN = 20  # a target counts as found when its path is among this many results
PER_SECOND = 3  # searches a second at most (a user's pace, not a load test)
YEAR_S = 365 * 86400
MODEL_THREADS = "inference"  # the kernel name of the inference thread and its runtime's pool


@dataclass
class Round:
    first_found_s: float | None = None  # the first target found by its title
    all_found_s: float | None = None  # all targets found
    words_s: float | None = None  # an answer says every note is searchable by its words
    found: int = 0  # targets found by the end
    ready_s: float | None = None  # the start-up index done (None: not within the limit)
    searches_ms: list[float] = field(default_factory=list)
    rss_during_mb: float = 0.0
    rss_after_mb: float = 0.0
    children_rss_mb: float = 0.0  # the most the daemon's child processes held at once
    notes_embedded: int = 0
    chunks_embedded: int = 0
    index_s: float = 0.0  # the first index's run time (ready or the limit)
    cpu_s: float = 0.0
    model_cpu_s: float = 0.0  # the inference threads' (the model's pool threads are named so)
    load: str = "?"  # the load average at the round's end, the burners still running


def in_process_daemon_env(root: Path, vault: Path) -> None:
    """Point this process's vaultmem at `vault` (data under `root`, defaults, any free port,
    nothing downloaded) and set the process up as `vaultmem run` does (BLAS on one thread,
    the collector paused), for a daemon built in process."""
    os.environ.update({
        "VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(root / "data"),
        "VAULTMEM_CONFIG": str(root / "none.toml"), "VAULTMEM_PORT": "0",
        "VAULTMEM_EMBEDDING_MODEL": "default", "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    })
    from vaultmem.daemon.native import pause_gc, quiet_blas

    quiet_blas()
    pause_gc()


def build_vault(vault: Path, notes: int, seed: int) -> list[str]:
    """The vault (see the module docstring); its notes' paths."""
    files = [(root, path) for source in SOURCES if (root := CORPORA / source).is_dir()
             for path in sorted(root.rglob("*.md")) if path.name not in ("LICENSE.md",
                                                                         "SOURCE.md")]
    if not files:
        raise SystemExit(f"no corpus under {CORPORA}")
    rng = random.Random(seed)
    now = time.time()
    paths: list[str] = []
    copy = 0
    while len(paths) < notes:
        copy += 1
        for root, path in files:
            if len(paths) >= notes:
                break
            rel = f"copy-{copy}/{root.name}/{path.relative_to(root).as_posix()}"
            target = vault / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            stamp = now - rng.random() * YEAR_S
            os.utime(target, (stamp, stamp))
            paths.append(rel)
    return paths


def targets(paths: list[str], seed: int) -> list[tuple[str, str]]:
    """Ten notes with a title of two words or more: (path, the title searched)."""
    rng = random.Random(seed + 1)
    chosen: list[tuple[str, str]] = []
    for path in rng.sample(paths, len(paths)):
        title = Path(path).stem.replace("-", " ").replace("_", " ")
        if len(title.split()) >= 2 and title.isascii():
            chosen.append((path, title))
        if len(chosen) == TARGETS:
            break
    return chosen


def indexed_counts(data: Path) -> tuple[int, int]:
    """Notes and chunks whose vectors are written (a words-only row is not)."""
    db = sqlite3.connect(str(data / "catalog.sqlite3"))
    try:
        row = db.execute("SELECT COUNT(*), COALESCE(SUM(chunk_count), 0) FROM notes WHERE "
                         "status = 'indexed' AND body_hash NOT LIKE 'words-only:%'").fetchone()
    finally:
        db.close()
    return int(row[0]), int(row[1])


def one_round(source: Path, work: Path, vault: Path, wanted: list[tuple[str, str]],
              limit_s: float, busy: int = 0) -> Round:
    """One daemon's round (see the module docstring), beside `busy` CPU burners."""
    with burners(busy):
        return _measured_round(source, work, vault, wanted, limit_s)


def _measured_round(source: Path, work: Path, vault: Path, wanted: list[tuple[str, str]],
                    limit_s: float) -> Round:
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    daemon = DaemonProcess(vault, data, settings=REAL_MODEL, source=source,
                           output=work / "daemon.log", log_level="info", client_timeout=120.0)
    result = Round()
    started = daemon.spawn()
    try:
        client = daemon.connect(timeout=300)
        left = dict(wanted)
        again = itertools.cycle(wanted)  # asked once all are found: searches until the end
        rss: list[float] = []
        children: list[float] = []
        while time.perf_counter() - started < limit_s:
            rss.append(rss_mb(daemon.pid))
            children.append(children_rss_mb(daemon.pid))
            asking = list(left.items())[:PER_SECOND] or [next(again) for _ in range(PER_SECOND)]
            for path, title in asking:
                asked = time.perf_counter()
                answer = client.search(title, top_k=FOUND_IN)
                result.searches_ms.append((time.perf_counter() - asked) * 1000)
                if result.words_s is None and _words_complete(answer):
                    result.words_s = asked - started
                if path not in left:
                    continue
                del left[path]
                if any(hit["path"] == path for hit in answer["results"]):
                    result.first_found_s = result.first_found_s or asked - started
                else:
                    left[path] = title  # asked again after the others (round robin)
            if not left and result.all_found_s is None:
                result.all_found_s = time.perf_counter() - started
            indexing = daemon.status()["daemon"]["indexing"]
            if indexing["last"] is not None and not indexing["running"]:
                result.ready_s = time.perf_counter() - started
                result.index_s = float(indexing["last"]["seconds"])
                break
            time.sleep(1.0)
        else:
            result.index_s = limit_s
        result.found = len(wanted) - len(left)
        result.rss_during_mb = max(rss, default=0.0)
        result.children_rss_mb = max(children, default=0.0)
        time.sleep(5.0)  # settled
        result.rss_after_mb = rss_mb(daemon.pid)
        result.cpu_s = cpu_seconds(daemon.pid)
        result.model_cpu_s = sum(cpu for name, cpu, _ in threads(daemon.pid).values()
                                 if name.startswith(MODEL_THREADS))
        result.load = load_average()
    finally:
        daemon.stop(timeout=120)
    result.notes_embedded, result.chunks_embedded = indexed_counts(data)
    return result


def _words_complete(answer: dict[str, Any]) -> bool:
    """Whether a search answer says every note is searchable by its words (no `indexing`
    field: the index is complete)."""
    indexing = answer.get("indexing")
    return indexing is None or indexing.get("by_words") == "complete"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report(name: str, r: Round, limit_s: float, busy: int = 0) -> None:
    rate = r.chunks_embedded / r.index_s if r.index_s else 0.0
    per_chunk = r.cpu_s / r.chunks_embedded if r.chunks_embedded else 0.0
    print(f"  {name}:\n"
          f"    first target found by its title {seconds(r.first_found_s)} s, "
          f"all {TARGETS} {seconds(r.all_found_s)} s ({r.found} of {TARGETS} within the run); "
          f"every note by its words {seconds(r.words_s)} s\n"
          f"    index ready {seconds(r.ready_s)} s (limit {limit_s:g} s); vectors written: "
          f"{r.notes_embedded:,} notes, {r.chunks_embedded:,} chunks, {rate:.1f} chunks/s, "
          f"{per_chunk * 1000:.1f} CPU ms per chunk, "
          f"{100 * r.model_cpu_s / r.cpu_s if r.cpu_s else 0:.0f} % of it the model's threads\n"
          f"    search during the index: p50 {p50(r.searches_ms):.0f} ms, "
          f"p95 {p95(r.searches_ms):.0f} ms ({len(r.searches_ms)} searches)\n"
          f"    RSS max during {r.rss_during_mb:.0f} MB, after {r.rss_after_mb:.0f} MB "
          f"(its child processes at most {r.children_rss_mb:.0f} MB more); "
          f"{busy} CPU burner(s), load average {r.load}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a git revision to measure beside this checkout")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--limit", type=float, default=3600.0,
                        help="seconds a round may run before it is measured as it stands")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--busy", type=int, default=0,
                        help="CPU burners (one process each) running through each round")
    args = parser.parse_args()
    if args.busy < 0:
        parser.error("--busy: a number of processes, 0 or more")
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-bigvault-") as tmp:
        root = Path(tmp)
        trees = {"this checkout": REPO}
        if args.baseline:
            trees = {f"baseline {args.baseline}": worktree(args.baseline, root / "baseline"),
                     **trees}
        vault = root / "vault"
        paths = build_vault(vault, args.notes, seed=11)
        wanted = targets(paths, seed=11)
        print(f"vaultmem big-vault benchmark, {now_utc():%Y-%m-%d %H:%M} UTC")
        print(*machine_lines(), sep="\n")
        print(f"{len(paths):,} notes from {', '.join(SOURCES)}; {args.rounds} round(s), "
              f"limit {args.limit:g} s; {args.busy} CPU burner(s) through each round; "
              f"the real English model, the daemon's defaults; "
              f"targets: {', '.join(t for _, t in wanted)}", flush=True)
        try:
            for i in range(args.rounds):
                order = list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]
                for name, source in order:
                    one = one_round(source, root / "work", vault, wanted, args.limit,
                                    busy=args.busy)
                    report(f"round {i + 1} {name}", one, args.limit, busy=args.busy)
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(root / "baseline")],
                               cwd=REPO, check=False)


if __name__ == "__main__":
    main()
