"""vaultmem daemon benchmark: figures measured against a running `vaultmem run` over HTTP.

Run: scripts/bench daemon [--quick]. Every daemon is a real
`python -m vaultmem run` process (as the service units start it) with the real model and the
default settings; only the vault, the data dir, the config file (none) and the port (0: a free
one) are set, through VAULTMEM_* variables. All traffic goes to 127.0.0.1; all data lives in a
temporary directory.

0. A copy of a sample of the vaultofknowledge notes is indexed for real by a daemon (its RSS
   after indexing is the first figure 6a); its chunks and their real vectors become the
   material of:
1. a generated vault of ~10k chunks (notes made of real corpus chunks), indexed in this process
   with PoolEmbedder (bench/support.py) under the real model's name: each chunk's
   vector is the real vector of the corpus chunk it came from plus N(0, 0.02) noise. A daemon
   with the real model accepts that index as its own; everything after this point (queries,
   edits re-embedded by the watcher) uses the real model inside the daemon.
Then, against daemons on that vault: cold start with a warm index, search, RSS serving ~10k
chunks after those searches (the second figure 6a: that index was built here, not by the
daemon), touch, edit on disk to searchable, idle CPU, RSS, and search after 1,000 edits against
a fresh copy.

Each model runtime named by --runtimes (default: onnx and torch, the same run; `multilingual`:
the bundled multilingual model, with a generated vault of its own vectors) indexes the
corpus sample itself (its indexing throughput and RSS) and gets its own copy of the generated
vault and index for the rest; the summary puts the runtimes side by side.

`--baseline REV` (a git revision, checked out in a temporary git worktree) makes section 1
alternate cold starts of that code's daemon, on its own copy of the same vault and index, with
this code's, and print both medians and their ratio: a same-run A/B that a drift of
the machine's load falls on alike. Each cold start also reports the daemon's CPU seconds to the
first answer, which load inflates far less than the wall time.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse
import copy
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.eval_sets import VOK_VAULT
from bench.idle import report_threads, threads
from bench.support import (
    PoolEmbedder,
    Stopwatch,
    load_average,
    machine_lines,
    make_app,
    ms,
    now_utc,
    p50,
    p95,
)
from vaultmem.api.client import Client
from vaultmem.config import Settings
from vaultmem.errors import VaultmemError
from vaultmem.index.base import SCHEMA_VERSION
from vaultmem.index.embedders import SentenceTransformerEmbedder, make_embedder
from vaultmem.settings_params import embedder_options
from vaultmem_testing.bench_vault import (
    PoolChunk,
    SyntheticNote,
    VaultGenerator,
    copy_notes,
    usable_chunk,
)
from vaultmem_testing.daemon import REAL_MODEL, REPO, DaemonProcess
from vaultmem_testing.measure import cpu_seconds, memory_mb
from vaultmem_testing.queries import QUERIES

CORPUS = VOK_VAULT
TARGETS = {"edit_p95": 0.5, "search_p50": 0.020, "touch_p50": 0.010, "churn": 1.5,
           "rss_index_mb": 350.0, "rss_edits_mb": 450.0, "idle_pct": 0.1, "cold_s": 1.5,
           "throughput": 0.9}


def say(text: str = "") -> None:
    print(text, flush=True)


def section(title: str) -> None:
    say()
    other = "; ANOTHER BENCHMARK IS RUNNING" if other_benchmark() else ""
    say(f"== {title}   [load average {load_average()}{other}]")


def other_benchmark() -> bool:
    """Whether the engine benchmark (`-m bench.engine`) runs now: it would share the 2 cores."""
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"-m bench.engine" in command:
            return True
    return False


# ---- a daemon process -----------------------------------------------------------------------


#: --runtimes names a runtime of the English model, or `multilingual`: the bundled
#: multilingual model (on the ONNX runtime, its only one)
MULTILINGUAL = "multilingual"


def model_of(runtime: str) -> str:
    return MULTILINGUAL if runtime == MULTILINGUAL else "english"


def service_daemon(vault: Path, data: Path, log: Path, runtime: str) -> DaemonProcess:
    """A daemon as the service units start it: the real model on `runtime`, the daemon's
    default settings and log level; its output appended to `log`."""
    settings = {**REAL_MODEL, "VAULTMEM_EMBEDDING_MODEL": model_of(runtime)}
    return DaemonProcess(vault, data, settings=settings, output=log, log_level=None,
                         client_timeout=120, PYTHONUNBUFFERED="1",
                         VAULTMEM_EMBEDDING_RUNTIME="onnx" if runtime == MULTILINGUAL
                         else runtime)


def start(daemon: DaemonProcess) -> tuple[float, dict[str, Any]]:
    """Spawn, connect, wait for start-up indexing and the model: (the perf_counter() just before
    the spawn, the last status)."""
    stop(daemon)  # a running one gets the longer grace period, not spawn()'s
    started = daemon.spawn()
    daemon.connect(120)
    return started, daemon.wait_ready(900, model=True)


def stop(daemon: DaemonProcess) -> None:
    daemon.stop(timeout=90)


def wait_for(probe: Callable[[], Any], timeout: float, step: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = probe()
        if result:
            return result
        time.sleep(step)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


# ---- the vaults -----------------------------------------------------------------------------


@dataclass
class Figures:
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    throughput: float = 0.0

    def add(self, name: str, value: str, target: str = "", verdict: str = "") -> None:
        self.rows.append((name, value, target, verdict))


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def real_index(tmp: Path, notes: int, figures: Figures,
               runtime: str) -> tuple[list[PoolChunk], np.ndarray]:
    """A daemon indexes a corpus sample for real; its chunks and vectors become the pool."""
    vault, data = tmp / f"real-vault-{runtime}", tmp / f"real-data-{runtime}"
    files = copy_notes(CORPUS, vault, notes)
    daemon = service_daemon(vault, data, tmp / f"real-daemon-{runtime}.log", runtime)
    try:
        started, status = start(daemon)
        seconds = time.perf_counter() - started
        rss, hwm = memory_mb(daemon.pid)
    finally:
        stop(daemon)
    last = status["daemon"]["indexing"]["last"]
    say(f"{len(files)} corpus notes indexed by a fresh daemon (real model): "
        f"{last['added']} notes, {last['chunks_embedded']} chunks, indexing {last['seconds']:.1f} s"
        f"; spawn to indexed + model loaded {seconds:.1f} s; RSS {rss:.0f} MB, peak {hwm:.0f} MB")
    figures.add(f"6a. RSS after a full index ({last['chunks_embedded']} chunks, real model)",
                f"{rss:.0f} MB (peak {hwm:.0f} MB)", f"<= {TARGETS['rss_index_mb']:.0f} MB",
                verdict(rss <= TARGETS["rss_index_mb"]))
    rate = last["chunks_embedded"] / max(last["seconds"], 1e-9)
    figures.throughput = rate
    figures.add("8. indexing throughput (the corpus sample)", f"{rate:.1f} chunks/s",
                f">= {TARGETS['throughput']}x torch")
    import lancedb

    rows = lancedb.connect(str(data / "lance")).open_table("chunks").to_arrow()
    pool, vectors, seen = [], [], set()
    for heading, text, vector in zip(rows.column("heading").to_pylist(),
                                     rows.column("text").to_pylist(),
                                     rows.column("vector").to_pylist(), strict=True):
        chunk = usable_chunk(heading, text)
        if chunk is not None and chunk.text not in seen:
            seen.add(chunk.text)
            pool.append(chunk)
            vectors.append(vector)
    return pool, np.asarray(vectors, dtype=np.float32)


@dataclass
class Synthetic:
    vault: Path
    data: Path
    notes: list[SyntheticNote]
    generator: VaultGenerator


def identity_of(runtime: str) -> Any:
    """The embedder (never loaded) whose name a daemon on `runtime` records in its index:
    OpenVINO's bf16 vectors are another identity than ONNX Runtime's and torch's."""
    options = embedder_options(Settings())
    if runtime == MULTILINGUAL:
        return make_embedder(MULTILINGUAL, options)
    if runtime == "torch":
        return SentenceTransformerEmbedder()
    return make_embedder("english", replace(options, runtime=runtime))


def build_vault(tmp: Path, pool: list[PoolChunk], vectors: np.ndarray, chunks: int,
                memories: int, runtime: str) -> Synthetic:
    generator = VaultGenerator(pool, seed=chunks)
    notes = generator.notes(chunks, memories, now_utc())
    vault, data = tmp / "vault", tmp / "data"
    generator.write(vault, notes)
    real = identity_of(runtime)  # the vectors' runtime's identity (its name; never loaded)
    embedder = PoolEmbedder(real, [c.text for c in pool], vectors)
    watch = Stopwatch()
    app = make_app(vault, data, embedder)
    report = app.sync.reindex()
    app.index().optimize()
    stats = app.index().stats()
    app.close()
    say(f"generated vault: {len(notes)} notes ({memories} memories) from {len(pool)} corpus "
        f"chunks; indexed in this process in {watch.elapsed():.1f} s: {report.added} notes, "
        f"{stats['chunks']} chunks (vectors: {embedder.exact} by chunk, {embedder.nearest} "
        f"by nearest words), optimised; embedder name {embedder.name}")
    return Synthetic(vault, data, notes, generator)


# ---- the measurements ------------------------------------------------------------------------


def cold_start(daemon: DaemonProcess) -> tuple[float, float, float]:
    """One spawn to the first answered search: (socket up s, answered s, daemon CPU s)."""
    stop(daemon)
    started = daemon.spawn()
    client = daemon.connect(120)
    socket = time.perf_counter() - started
    while True:
        try:
            client.search("how do I choose a window manager on Linux")
            break
        except VaultmemError:
            time.sleep(0.02)
    return socket, time.perf_counter() - started, cpu_seconds(daemon.pid)


def cold_starts(daemon: DaemonProcess, runs: int, figures: Figures,
                baseline: DaemonProcess | None = None) -> None:
    """Spawn to the first answered search, the index already built; the last daemon stays.
    With a baseline, its cold starts alternate with these and it is stopped at the end."""
    totals: list[float] = []
    cpus: list[float] = []
    base_totals: list[float] = []
    base_cpus: list[float] = []
    for run in range(runs):
        if baseline is not None:
            socket, total, cpu = cold_start(baseline)
            stop(baseline)
            base_totals.append(total)
            base_cpus.append(cpu)
            say(f"  run {run + 1}, baseline: socket up {socket:.2f} s, first search answered "
                f"{total:.2f} s after spawn, {cpu:.2f} CPU s   [load {load_average()}]")
        socket, total, cpu = cold_start(daemon)
        totals.append(total)
        cpus.append(cpu)
        say(f"  run {run + 1}: socket up {socket:.2f} s, first search answered "
            f"{total:.2f} s after spawn, {cpu:.2f} CPU s   [load {load_average()}]")
    daemon.wait_ready(900, model=True)
    figures.add(f"1. cold start to first search, warm index (median of {runs})",
                f"{p50(totals):.2f} s (min {min(totals):.2f}, max {max(totals):.2f}; "
                f"{p50(cpus):.2f} CPU s)",
                f"<= {TARGETS['cold_s']} s", verdict(p50(totals) <= TARGETS["cold_s"]))
    if baseline is not None:
        say(f"  baseline median {p50(base_totals):.2f} s ({p50(base_cpus):.2f} CPU s), this "
            f"code {p50(totals):.2f} s ({p50(cpus):.2f} CPU s): ratio "
            f"{p50(totals) / p50(base_totals):.2f} (CPU {p50(cpus) / p50(base_cpus):.2f})")
        figures.add("1b. cold start / the baseline's (alternating, same run)",
                    f"{p50(totals) / p50(base_totals):.2f}x ({p50(base_totals):.2f} s baseline)")


def timed_searches(client: Client, queries: Sequence[str]) -> list[float]:
    samples = []
    for query in queries:
        watch = Stopwatch()
        client.search(query)
        samples.append(watch.elapsed())
    return samples


def query_list(count: int) -> list[str]:
    return [QUERIES[i % len(QUERIES)] for i in range(count)]


def search_latency(client: Client, count: int, figures: Figures, chunks: int) -> None:
    first = timed_searches(client, QUERIES)  # warm-up, excluded
    samples = timed_searches(client, query_list(count))
    say(f"  warm-up (excluded), each of the {len(QUERIES)} queries once, the first search since "
        f"start-up among them: p50 {ms(p50(first))} ms, max {ms(max(first))} ms")
    say(f"  {count} searches (top_k 10, the {len(QUERIES)} queries in turn, one connection "
        f"each): p50 {ms(p50(samples))} ms, p95 {ms(p95(samples))} ms, "
        f"max {ms(max(samples))} ms")
    figures.add(f"3. search over HTTP at {chunks} chunks, p50 / p95 ({count} queries)",
                f"{ms(p50(samples))} / {ms(p95(samples))} ms",
                f"p50 <= {ms(TARGETS['search_p50'])} ms",
                verdict(p50(samples) <= TARGETS["search_p50"]))


def touches(daemon: DaemonProcess, syn: Synthetic, count: int, figures: Figures) -> None:
    client = daemon.client
    assert client is not None
    note = next(n for n in syn.notes if n.path.startswith("memories/"))
    match = re.search(r"^stm_id: (\S+)$", note.frontmatter, re.M)
    assert match is not None
    memory_id = match.group(1)
    health = []
    for _ in range(100):
        watch = Stopwatch()
        client.health()
        health.append(watch.elapsed())
    say(f"  baseline: GET /v1/health (no work) p50 {ms(p50(health))} ms, "
        f"p95 {ms(p95(health))} ms")
    before = client.get(memory_id)["use_count"]
    samples = []
    for _ in range(count):
        watch = Stopwatch()
        client.touch(memory_id)
        samples.append(watch.elapsed())
    after = client.get(memory_id)["use_count"]
    watch = Stopwatch()
    wait_for(lambda: daemon.status()["daemon"]["pending_usage_writes"] == 0, 120, 0.25,
             "the usage flush")
    flushed = watch.elapsed()
    text = (syn.vault / note.path).read_text(encoding="utf-8")
    on_disk = re.search(r"^stm_use_count: (\d+)", text, re.M)
    disk = int(on_disk.group(1)) if on_disk else -1
    ok = after == before + count and disk == before + count
    say(f"  {count} touches of one memory: p50 {ms(p50(samples))} ms, p95 {ms(p95(samples))} ms;"
        f" use_count {before} -> {after} at once, {disk} in the note after the scheduled flush "
        f"({flushed:.1f} s later): {'correct' if ok else 'WRONG'}")
    figures.add(f"4. touch over HTTP, p50 / p95 ({count} touches)",
                f"{ms(p50(samples))} / {ms(p95(samples))} ms",
                f"p50 <= {ms(TARGETS['touch_p50'])} ms",
                verdict(p50(samples) <= TARGETS["touch_p50"]))
    figures.add("4. use_count after the flush", f"+{disk - before} in the note",
                f"+{count}", verdict(ok))


def nonsense(rng: np.random.Generator) -> str:
    letters = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiou"
    return "".join(letters[int(rng.integers(20))] + vowels[int(rng.integers(5))]
                   for _ in range(5))


def searchable(client: Client, path: str, word: str) -> tuple[bool, bool]:
    """(the note is found by its new word, with the word in its snippet; it is the top hit)."""
    results = client.search(word)["results"]
    for rank, hit in enumerate(results):
        if hit["path"] == path:
            return word in hit["snippet"], rank == 0
    return False, False


def edit_note(syn: Synthetic, rng: np.random.Generator, new: bool) -> tuple[str, str]:
    """Create a short note, or append a line to a random note, with a new nonsense word."""
    word = nonsense(rng)
    if new:
        path = f"Inbox/{word.capitalize()}.md"
        text = syn.generator.pool[int(rng.integers(len(syn.generator.pool)))].text
        (syn.vault / path).write_text(f"Met {word} today.\n\n{text}\n", encoding="utf-8")
        return path, word
    regular = [n for n in syn.notes if not n.path.startswith("memories/")]
    path = regular[int(rng.integers(len(regular)))].path
    with (syn.vault / path).open("a", encoding="utf-8") as handle:
        handle.write(f"\nSee also {word}.\n")
    return path, word


def edit_latency(client: Client, syn: Synthetic, count: int, figures: Figures) -> None:
    """Per edit: poll search for the new word until the note is found by it."""
    rng = np.random.default_rng(2026)
    samples: dict[str, list[float]] = {"new": [], "appended": []}
    top = 0
    for i in range(count):
        path, word = edit_note(syn, rng, new=i % 2 == 0)
        written = time.perf_counter()
        while True:
            found, first = searchable(client, path, word)
            if found:
                break
            if time.perf_counter() - written > 60:
                raise TimeoutError(f"{path} not found by {word!r} within 60 s")
            time.sleep(0.02)
        samples["new" if i % 2 == 0 else "appended"].append(time.perf_counter() - written)
        top += first
        time.sleep(0.5)
    every = samples["new"] + samples["appended"]
    say(f"  {count} edits, alternately a new note and a line appended to a random existing "
        f"note, each polled by searching its new word every ~20 ms (plus the search time) "
        f"until the note was in the results with the word in its snippet; timed from the "
        f"write to the end of that search:")
    for kind, values in samples.items():
        say(f"    {kind:<9} p50 {ms(p50(values))} ms, p95 {ms(p95(values))} ms, "
            f"max {ms(max(values))} ms")
    say(f"    all       p50 {ms(p50(every))} ms, p95 {ms(p95(every))} ms; the edited note was "
        f"the top hit in {top} of {count}")
    figures.add(f"2. edit on disk -> searchable, p50 / p95 ({count} edits)",
                f"{ms(p50(every))} / {ms(p95(every))} ms",
                f"p95 <= {ms(TARGETS['edit_p95'])} ms",
                verdict(p95(every) <= TARGETS["edit_p95"]))


def idle_cpu(daemon: DaemonProcess, seconds: float, figures: Figures) -> None:
    time.sleep(3)  # let the last edit's work settle
    before = threads(daemon.pid)
    cpu, watch = cpu_seconds(daemon.pid), Stopwatch()
    time.sleep(seconds)
    used, wall = cpu_seconds(daemon.pid) - cpu, watch.elapsed()
    share = 100 * used / wall
    say(f"  idle for {wall:.0f} s: {used:.2f} s CPU (utime+stime) = {share:.2f} % of one core; "
        "per thread (those that ran or woke):")
    report_threads(before, threads(daemon.pid), wall)
    figures.add(f"7. idle CPU over {wall:.0f} s", f"{share:.2f} %",
                f"<= {TARGETS['idle_pct']:g} %", verdict(share <= TARGETS["idle_pct"]))


def churn(daemon: DaemonProcess, syn: Synthetic, edits: int, batch: int) -> None:
    """Single-note edits on disk, `batch` at a time; after each batch a sentinel note gets a
    new word and the batch counts as indexed once the sentinel is found by it (the watcher
    delivers paths in the order they changed, and one worker indexes them in turn)."""
    client = daemon.client
    assert client is not None
    rng = np.random.default_rng(99)
    rss = [f"{memory_mb(daemon.pid)[0]:.0f}"]
    small = [n for n in syn.notes if not n.path.startswith("memories/") and len(n.sections) <= 3]
    sentinel = syn.vault / "Inbox" / "Churn sentinel.md"
    waits: list[float] = []
    watch = Stopwatch()
    for done in range(0, edits, batch):
        for index in rng.choice(len(small), size=min(batch, edits - done), replace=False):
            syn.generator.edit(syn.vault, small[int(index)])  # a section gets another chunk
        word = nonsense(rng)
        sentinel.write_text(f"Batch {word}.\n", encoding="utf-8")
        written = time.perf_counter()
        wait_for(lambda w=word: searchable(client, "Inbox/Churn sentinel.md", w)[0],
                 120, 0.02, "a batch of edits to be indexed")
        waits.append(time.perf_counter() - written)
        if (done + batch) % (edits // 4 or 1) == 0:
            rss.append(f"{memory_mb(daemon.pid)[0]:.0f}")
    total = watch.elapsed()
    chunks = sum(len(n.sections) for n in small) / len(small)
    say(f"  {edits} edits of random notes with <= 3 sections (mean {chunks:.1f} chunks; "
        f"{len(small)} such notes; a section replaced by another corpus chunk), {batch} at a "
        f"time, each batch waited for until indexed: {total:.1f} s ({edits / total:.1f} "
        f"edits/s); last write -> batch indexed p50 {ms(p50(waits))} ms, "
        f"p95 {ms(p95(waits))} ms")
    say(f"  daemon RSS (MB) before and after each quarter of the edits: {', '.join(rss)}")


def lance_stats(data: Path) -> str:
    import lancedb

    table = lancedb.connect(str(data / "lance")).open_table("chunks")
    stats = table.stats()
    return (f"chunk table: {table.count_rows()} rows, "
            f"{stats['fragment_stats']['num_fragments']} fragments, version {table.version}")


def compare_fresh(churned: DaemonProcess, fresh: DaemonProcess, count: int, label: str) -> float:
    """Churned and fresh daemons, query by query in alternating order; the p50 ratio."""
    assert churned.client is not None and fresh.client is not None
    timed_searches(churned.client, QUERIES)  # warm-up, excluded
    timed_searches(fresh.client, QUERIES)
    samples: dict[str, list[float]] = {"fresh": [], "churned": []}
    pairs = [("fresh", fresh.client), ("churned", churned.client)]
    for i, query in enumerate(query_list(count)):
        for kind, client in pairs if i % 2 == 0 else pairs[::-1]:
            samples[kind].extend(timed_searches(client, [query]))
    f, c = samples["fresh"], samples["churned"]
    ratio = p50(c) / p50(f)
    say(f"  {label}, interleaved, {count} queries each: fresh p50 {ms(p50(f))} / p95 "
        f"{ms(p95(f))} ms, churned p50 {ms(p50(c))} / p95 {ms(p95(c))} ms; p50 ratio {ratio:.2f}")
    return ratio


def churn_ratio(churned: DaemonProcess, fresh: DaemonProcess, count: int, figures: Figures) -> None:
    """First with the churned daemon as it is, then with both daemons restarted, so that the
    two processes have the same history and only their indexes differ."""
    start(fresh)
    live = compare_fresh(churned, fresh, count, "churned daemon as it is vs a new fresh daemon")
    for daemon in (churned, fresh):
        start(daemon)
    say(f"  restarted churned daemon: {lance_stats(churned.data)} (a start optimises only "
        f"above 50 fragments)")
    again = compare_fresh(churned, fresh, count, "both daemons restarted")
    figures.add("5. search p50 after the edits / fresh copy (interleaved)",
                f"{again:.2f} (both restarted); {live:.2f} (churned as it was)",
                f"<= {TARGETS['churn']}", verdict(max(again, live) <= TARGETS["churn"]))


# ---- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="vaultmem daemon benchmark (over the socket)")
    parser.add_argument("--quick", action="store_true", help="smoke run (~2-3 min)")
    parser.add_argument("--runtimes", default="onnx,torch",
                        help="model runtimes to measure side by side (default: onnx,torch); "
                             "multilingual: the bundled multilingual model (onnx)")
    parser.add_argument("--churn", type=int, help="edits in the churn (default 1000; quick 60)")
    parser.add_argument("--chunks", type=int, help="generated vault size (default 10000; quick "
                        "1500)")
    parser.add_argument("--edits", type=int, help="edit -> searchable samples (default 30; "
                        "quick 5)")
    parser.add_argument("--cold-runs", type=int, help="cold starts (default 3; quick 1)")
    parser.add_argument("--baseline", help="a git revision whose daemon's cold starts "
                        "alternate with this code's (section 1)")
    args = parser.parse_args(argv)
    args.runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    churn_edits, chunks, edits, cold_runs = args.churn, args.chunks, args.edits, args.cold_runs
    full = not args.quick
    args.pool_notes = 300 if full else 40
    args.chunks = chunks or (10000 if full else 1500)
    args.memories = 50 if full else 20
    args.cold_runs = cold_runs or (3 if full else 1)
    args.searches = 100 if full else 30
    args.touches = 500 if full else 100
    args.edits = edits or (30 if full else 5)
    args.idle = 60.0 if full else 10.0
    args.churn = churn_edits or (1000 if full else 60)
    args.batch = 10
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    # SIGTERM (and SIGINT, even where a shell ignored it) unwind, so the daemons are stopped
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _interrupted)
    started = Stopwatch()
    say("vaultmem daemon benchmark (over the localhost socket)")
    say(f"date: {now_utc():%Y-%m-%d %H:%M} UTC")
    say(f"command: {os.environ.get('BENCH_COMMAND') or 'scripts/bench daemon'}"
        f"{' --quick' if args.quick and not os.environ.get('BENCH_COMMAND') else ''}")
    for line in machine_lines():
        say(line)
    runs = {runtime: Figures() for runtime in args.runtimes}
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-daemon-") as name:
        tmp = Path(name)
        args.baseline_tree = None
        if args.baseline is not None:
            args.baseline_tree = tmp / "baseline-tree"
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(args.baseline_tree),
                            args.baseline], cwd=REPO, check=True)
            say(f"baseline: {args.baseline} (cold starts alternate with it in section 1)")
        try:
            if args.baseline_tree is not None:
                same_schema(args.baseline_tree)
            for tree in (REPO, args.baseline_tree):
                if tree is not None:
                    write_bytecode(tree)
            measure_all(tmp, args, runs)
        finally:
            if args.baseline_tree is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(args.baseline_tree)],
                               cwd=REPO, check=False)
    summary(runs)
    say(f"\ntotal run time {started.elapsed() / 60:.1f} min; load average at the end "
        f"{load_average()}")


def write_bytecode(tree: Path) -> None:
    """Each daemon starts with its package's bytecode written, as scripts/setup leaves it (a
    fresh worktree has none, and where PYTHONDONTWRITEBYTECODE is set no start writes it)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "vaultmem")],
                   check=True, stdout=subprocess.DEVNULL)


def same_schema(tree: Path) -> None:
    """The baseline starts on a copy of this code's index: with another index schema its first
    start would rebuild all of it (minutes), and its cold starts would measure nothing."""
    theirs = subprocess.run(
        [sys.executable, "-c", "from vaultmem.index.base import SCHEMA_VERSION as v; print(v)"],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True,
        check=True).stdout.strip()
    if theirs != str(SCHEMA_VERSION):
        raise SystemExit(f"the baseline's index schema is {theirs}, this code's {SCHEMA_VERSION}: "
                         "its first start would rebuild the whole index, so its cold starts "
                         "cannot be compared; pick a baseline with the same schema")


def measure_all(tmp: Path, args: argparse.Namespace, runs: dict[str, Figures]) -> None:
    """Section 0 for every runtime, then every runtime's daemons on its copy of the vault."""
    # by the index identity each runtime records (a model's, or its bf16 form's)
    material: dict[str, tuple[str, list[PoolChunk], np.ndarray]] = {}
    for runtime, figures in runs.items():
        section(f"0. [{runtime}] a corpus sample indexed by a daemon")
        got = real_index(tmp, args.pool_notes, figures, runtime)
        material.setdefault(identity_of(runtime).name, (runtime, *got))
    generated = {}
    for n, (name, (first, pool, vectors)) in enumerate(material.items()):
        section(f"0. material: a generated vault from {name}'s first runtime's ({first}) "
                "chunks and vectors")
        generated[name] = build_vault(tmp / f"generated-{n}", pool, vectors, args.chunks,
                                      args.memories, first)
    copies = {}
    for runtime in runs:  # the runtimes of one identity start from the same vault and index
        syn = generated[identity_of(runtime).name]
        place = tmp / runtime
        for part in ("vault", "data"):
            shutil.copytree(getattr(syn, part), place / part)
            shutil.copytree(getattr(syn, part), place / f"fresh-{part}")
            if args.baseline is not None:
                shutil.copytree(getattr(syn, part), place / f"baseline-{part}")
        copies[runtime] = Synthetic(place / "vault", place / "data",
                                    copy.deepcopy(syn.notes), syn.generator)
    for runtime, figures in runs.items():
        say(f"\n######## runtime: {runtime}")
        run_daemons(tmp / runtime, copies[runtime], args, figures, runtime)


def run_daemons(tmp: Path, syn: Synthetic, args: argparse.Namespace, figures: Figures,
                runtime: str) -> None:
    main_daemon = service_daemon(syn.vault, syn.data, tmp / "daemon.log", runtime)
    fresh = service_daemon(tmp / "fresh-vault", tmp / "fresh-data", tmp / "fresh-daemon.log",
                           runtime)
    baseline = None
    if args.baseline is not None:
        baseline = service_daemon(tmp / "baseline-vault", tmp / "baseline-data",
                                  tmp / "baseline-daemon.log", runtime)
        # its own model files: another code may keep them in another layout, and two codes
        # sharing one cache would each export them again at every other start
        baseline.env["VAULTMEM_MODEL_CACHE_DIR"] = str(tmp / "baseline-models")
        baseline.source = args.baseline_tree
    try:
        section("1. cold start with a warm index")
        if baseline is not None:
            start(baseline)  # its first start: reconciled, model files made
            stop(baseline)
        first, _ = start(main_daemon)
        rss, hwm = memory_mb(main_daemon.pid)
        say(f"  first start on the prebuilt index: reconciled and model loaded "
            f"{time.perf_counter() - first:.1f} s after spawn; RSS {rss:.0f} MB, peak {hwm:.0f} MB")
        cold_starts(main_daemon, args.cold_runs, figures, baseline)
        client = main_daemon.client
        assert client is not None
        section(f"3. search over HTTP at {args.chunks} chunks")
        search_latency(client, args.searches, figures, args.chunks)
        rss, hwm = memory_mb(main_daemon.pid)
        say(f"  daemon RSS {rss:.0f} MB, peak {hwm:.0f} MB")
        figures.add(f"6a. RSS serving {args.chunks} chunks, after its searches",
                    f"{rss:.0f} MB (peak {hwm:.0f} MB)", f"<= {TARGETS['rss_index_mb']:.0f} MB",
                    verdict(rss <= TARGETS["rss_index_mb"]))
        section("4. touch over HTTP")
        touches(main_daemon, syn, args.touches, figures)
        section("2. edit on disk -> searchable (watcher, default debounce)")
        edit_latency(client, syn, args.edits, figures)
        section("7. idle CPU")
        idle_cpu(main_daemon, args.idle, figures)
        section(f"5. search after {args.churn} edits vs a fresh copy")
        churn(main_daemon, syn, args.churn, args.batch)
        say(f"  churned: {lance_stats(syn.data)}")
        rss, hwm = memory_mb(main_daemon.pid)
        say(f"  churned daemon after the edits: RSS {rss:.0f} MB, peak {hwm:.0f} MB")
        figures.add(f"6b. RSS after cold starts, searches and {args.churn + args.edits} edits",
                    f"{rss:.0f} MB (peak {hwm:.0f} MB)", f"<= {TARGETS['rss_edits_mb']:.0f} MB",
                    verdict(rss <= TARGETS["rss_edits_mb"]))
        say(f"  fresh copy (the vault and index before any daemon ran): "
            f"{lance_stats(tmp / 'fresh-data')}")
        churn_ratio(main_daemon, fresh, args.searches, figures)
    finally:
        if baseline is not None:
            stop(baseline)
        stop(fresh)
        stop(main_daemon)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def summary(runs: dict[str, Figures]) -> None:
    section("summary")
    names = list(runs)
    base = runs.get("torch")
    for runtime, figures in runs.items():
        if base is not None and runtime not in ("torch", MULTILINGUAL) and base.throughput:
            ratio = figures.throughput / base.throughput
            figures.add("8. indexing throughput / torch's (same run)", f"{ratio:.2f}x",
                        f">= {TARGETS['throughput']}x", verdict(ratio >= TARGETS["throughput"]))
    english = runs.get("onnx")
    if MULTILINGUAL in runs and english is not None and english.throughput:
        ratio = runs[MULTILINGUAL].throughput / english.throughput
        runs[MULTILINGUAL].add("8. indexing throughput / the English model's on onnx",
                               f"{ratio:.2f}x", ">= 0.5x", verdict(ratio >= 0.5))
    rows: dict[str, dict[str, str]] = {}
    targets: dict[str, str] = {}
    for runtime, figures in runs.items():
        for name, value, target, result in figures.rows:
            rows.setdefault(name, {})[runtime] = f"{value} {result}".strip()
            targets[name] = target
    width = max(len(name) for name in rows)
    cell = max(len(v) for row in rows.values() for v in row.values())
    say(f"  {'figure':<{width}}  " + "  ".join(f"{n:<{cell}}" for n in names) + "  target")
    for name, row in rows.items():
        values = "  ".join(f"{row.get(n, '-'):<{cell}}" for n in names)
        say(f"  {name:<{width}}  {values}  {targets[name]}")


if __name__ == "__main__":
    main()
