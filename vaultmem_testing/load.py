"""The load run: concurrent clients against a real daemon while a sync-like process changes the
vault (tests/stress/test_load.py, and bench/stress_load.py with its figures).

A `vaultmem run` process (fake embedder unless `real_model`) serves a synthetic vault
(synthetic.py). N client threads send a realistic mix of requests, each on its own connection,
for a bounded time: mostly search, then get, status, touch, related, observe, save, review and
an occasional sweep dry run; saves draw from a pool of facts (`save_pool`), so saving one again
reinforces it and the vault stops growing. Meanwhile a sync-like thread (sync.py) changes a share
of the vault in bursts: edits (some appending to memory notes the daemon also writes), creates,
renames and deletes. The report holds the latencies per operation, every error, the daemon's
scheduled jobs, its RSS over time, and the failed end checks: daemon alive, every note as the
sync left it, saved memories readable, the index caught up with the disk and the usage journal
drained.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vaultmem.api.client import Client
from vaultmem.config import Settings
from vaultmem.errors import VaultmemError
from vaultmem_testing.daemon import FAST_TEST_SETTINGS, REAL_MODEL, DaemonProcess, wait_until
from vaultmem_testing.measure import RssSampler, percentile, say
from vaultmem_testing.queries import QUERIES
from vaultmem_testing.sync import Sync
from vaultmem_testing.synthetic import TAGS, SyntheticVault, generate_vault

# Relative weights of the operations each client picks from.
MIX = {"search": 40, "get": 10, "status": 8, "touch": 12, "related": 8, "observe": 8,
       "save": 5, "review": 6, "sweep": 1}
DAEMON_DEFAULTS = Settings()


@dataclass
class LoadConfig:
    notes: int = 2000
    clients: int = 16
    seconds: float = 120.0
    churn: float = 0.10
    seed: int = 0
    real_model: bool = False
    rss_interval: float = 1.0
    # The daemon's own timing by default; the test suite flushes faster to exercise the flush.
    flush_seconds: float = DAEMON_DEFAULTS.flush_interval_seconds
    debounce_ms: int = DAEMON_DEFAULTS.debounce_ms
    # Saves draw from this many distinct facts; saving one again reinforces it, as an assistant
    # re-learning a fact does, so the vault stops growing. 0: every save is a new memory.
    save_pool: int = 300


@dataclass
class LoadReport:
    config: LoadConfig
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    churn: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)  # failed end checks
    rss: RssSampler | None = None
    rss_start: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds of the untimed parts
    jobs: dict[str, str] = field(default_factory=dict)  # the daemon's jobs during the load
    notes_end: int = 0  # notes in the vault when the load ends
    saves: tuple[int, int] = (0, 0)  # memories created, saves that reinforced one instead

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())


class Shared:
    """What the clients and the sync thread know about the vault, behind one lock."""

    def __init__(self, vault: SyntheticVault, stable: list[str], save_pool: int,
                 seed: int) -> None:
        self.lock = threading.Lock()
        self.memory_ids = list(vault.memory_ids)
        self.stable = stable  # regular notes the sync never changes (targets of related)
        self.saved: list[str] = []
        self.reinforced = 0
        self.facts = fact_pool(save_pool, seed)

    def fact(self, rng: random.Random) -> str:
        return rng.choice(self.facts) if self.facts else fresh_fact(rng)

    def ids(self, rng: random.Random, count: int = 1) -> list[str]:
        with self.lock:
            return rng.sample(self.memory_ids, min(count, len(self.memory_ids)))

    def add_saved(self, answer: dict[str, Any]) -> None:
        with self.lock:
            if answer["created"]:
                self.memory_ids.append(answer["memory"]["id"])
                self.saved.append(answer["memory"]["id"])
            else:
                self.reinforced += 1


def fresh_fact(rng: random.Random) -> str:
    return f"Load note {rng.getrandbits(48):012x}: " + " ".join(
        rng.choice(QUERIES) for _ in range(3))


def fact_pool(size: int, seed: int) -> list[str]:
    rng = random.Random(f"facts-{seed}")
    return [fresh_fact(rng) for _ in range(size)]


# ---- the clients ----------------------------------------------------------------------------


def request(client: Client, op: str, rng: random.Random, shared: Shared) -> None:
    if op == "search":
        body: dict[str, Any] = {"query": rng.choice(QUERIES)}
        if rng.random() < 0.2:
            key, value = rng.choice((("tags", [rng.choice(TAGS)]), ("memories_only", True),
                                     ("folder", "memories")))
            body[key] = value
        client.call("POST", "/v1/search", body)
    elif op == "get":
        client.call("GET", f"/v1/memories/{quote(shared.ids(rng)[0], safe='')}")
    elif op == "status":
        client.status()
    elif op == "touch":
        client.touch(shared.ids(rng)[0], boost=rng.random() < 0.2)
    elif op == "related":
        if rng.random() < 0.5:
            client.related(rng.choice(shared.stable), top_k=5)
        else:
            client.related(shared.ids(rng)[0], top_k=5)
    elif op == "observe":
        client.observe(shared.ids(rng, rng.randint(1, 4)), [rng.choice(TAGS)])
    elif op == "save":
        answer = client.save(shared.fact(rng), tags=[rng.choice(TAGS)], type="fact")
        shared.add_saved(answer)
    elif op == "review":
        client.review(limit=10)
    elif op == "sweep":
        client.sweep(dry_run=True)


def client_loop(client: Client, seed: int, deadline: float, shared: Shared,
                report: LoadReport, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    ops, weights = list(MIX), list(MIX.values())
    while time.monotonic() < deadline:
        op = rng.choices(ops, weights)[0]
        started = time.perf_counter()
        try:
            request(client, op, rng, shared)
        except (VaultmemError, OSError, KeyError) as exc:
            with lock:
                report.errors.append(f"{op}: {type(exc).__name__}: {exc}")
            continue
        elapsed = time.perf_counter() - started
        with lock:
            report.latencies[op].append(elapsed)


# ---- the run --------------------------------------------------------------------------------


def run_load(work: Path, config: LoadConfig, log: Path | None = None) -> LoadReport:
    """Generate a vault under `work`, run the load against a real daemon, check the end state."""
    started = time.monotonic()
    vault = generate_vault(work / "vault", config.notes, seed=config.seed)
    changes = max(4, round(config.notes * config.churn))
    sync = Sync(vault, changes, config.seed)
    stable = [p for p in vault.notes if p not in set(sync.pool)][:500]
    shared = Shared(vault, stable, config.save_pool, config.seed)
    daemon = DaemonProcess(
        vault.root, work / "data", settings=REAL_MODEL if config.real_model else FAST_TEST_SETTINGS,
        output=log, VAULTMEM_FLUSH_INTERVAL_SECONDS=str(config.flush_seconds),
        VAULTMEM_DEBOUNCE_MS=str(config.debounce_ms),
    )
    report = LoadReport(config)
    report.phases["vault generated"] = time.monotonic() - started
    try:
        started = time.monotonic()
        clients = start_clients(daemon, config.clients)
        report.phases["daemon ready"] = time.monotonic() - started
        assert daemon.proc is not None
        with RssSampler(daemon.proc.pid, config.rss_interval) as rss:
            report.rss = rss
            wait_until(lambda: len(rss.samples) > 0, 10)
            report.rss_start = rss.samples[0][1]
            drive(clients, sync, shared, report)
        status = daemon.status()
        report.jobs = scheduled_jobs(status["daemon"])
        report.notes_end = status["notes"]
        report.saves = (len(shared.saved), shared.reinforced)
        report.churn = sync.counts
        started = time.monotonic()
        report.problems = end_checks(daemon, sync, shared)
        report.phases["end checks"] = time.monotonic() - started
    finally:
        started = time.monotonic()
        daemon.stop()
        report.phases["daemon stop"] = time.monotonic() - started
    return report


def start_clients(daemon: DaemonProcess, count: int) -> list[Client]:
    budget = max(120.0, daemon_notes_budget(daemon))
    first = daemon.start(timeout=budget)
    return [Client(first.base_url, first.token, timeout=60) for _ in range(count)]


def daemon_notes_budget(daemon: DaemonProcess) -> float:
    real = daemon.env.get("VAULTMEM_EMBEDDING_MODEL") != "fake"
    notes = sum(1 for _ in daemon.vault.rglob("*.md"))
    return notes * (3.0 if real else 0.05)


def drive(clients: Sequence[Client], sync: Sync, shared: Shared, report: LoadReport) -> None:
    config = report.config
    lock, stop = threading.Lock(), threading.Event()
    started = time.monotonic()
    deadline = started + config.seconds
    threads = [threading.Thread(target=client_loop, name=f"client-{i}",
                                args=(c, config.seed * 1000 + i, deadline, shared, report, lock))
               for i, c in enumerate(clients)]
    bursts = max(3, int(config.seconds // 10))
    syncer = threading.Thread(target=sync.run, name="sync", args=(bursts, deadline, stop))
    for thread in [*threads, syncer]:
        thread.start()
    for thread in threads:
        thread.join()
    report.seconds = time.monotonic() - started
    stop.set()
    syncer.join()


def end_checks(daemon: DaemonProcess, sync: Sync, shared: Shared) -> list[str]:
    problems: list[str] = []
    assert daemon.proc is not None
    if daemon.proc.poll() is not None:
        return [f"the daemon died (exit {daemon.proc.returncode})"]
    root = sync.root
    for path, text in sorted(sync.expected.items()):
        full = root / path
        if not full.exists():
            problems.append(f"{path}: missing")
        elif full.read_text(encoding="utf-8") != text:
            problems.append(f"{path}: not what the sync wrote")
    problems += [f"{p}: deleted or renamed, but back" for p in sorted(sync.gone)
                 if p not in sync.expected and (root / p).exists()]
    for path, lines in sorted(sync.appended.items()):
        text = (root / path).read_text(encoding="utf-8") if (root / path).exists() else ""
        lost = [line for line in lines if line not in text]
        if lost or "stm_id:" not in text:
            problems.append(f"{path}: lost {len(lost)} appended line(s) or its stm_id")
    client = daemon.client
    assert client is not None
    for memory_id in shared.saved:
        try:
            client.call("GET", f"/v1/memories/{quote(memory_id, safe='')}")
        except VaultmemError as exc:
            problems.append(f"saved memory {memory_id}: {exc}")
    problems += index_caught_up(daemon)
    problems += usage_written(daemon)
    return problems


def scheduled_jobs(status: dict[str, Any]) -> dict[str, str]:
    """How often each scheduled job ran, and the pending usage writes, from the daemon's
    part of `status`."""
    jobs = {job["name"]: f"{job['runs']} runs (last: {job['last_result']})"
            for job in status["jobs"]}
    jobs["pending usage writes"] = str(status["pending_usage_writes"])
    return jobs


def usage_written(daemon: DaemonProcess) -> list[str]:
    """Once the sync stops, the flush writes every pending use into the notes."""
    flush = float(daemon.env["VAULTMEM_FLUSH_INTERVAL_SECONDS"])
    timeout = 60.0 + 3 * flush
    try:
        wait_until(lambda: daemon.status()["daemon"]["pending_usage_writes"] == 0, timeout,
                   step=0.5)
    except TimeoutError:
        pending = daemon.status()["daemon"]["pending_usage_writes"]
        return [f"{pending} usage writes still pending {timeout:g} s after the sync"]
    return []


def index_caught_up(daemon: DaemonProcess, timeout: float = 120.0) -> list[str]:
    """The index settles on the notes on disk once the sync stops."""
    on_disk = sum(1 for _ in daemon.vault.rglob("*.md"))

    def settled() -> bool:
        status = daemon.status()
        return (status["coverage"]["indexed"] == on_disk and status["daemon"]["queue_depth"] == 0
                and not status["daemon"]["indexing"]["running"])
    try:
        wait_until(settled, timeout, step=0.5)
    except TimeoutError:
        indexed = daemon.status()["coverage"]["indexed"]
        return [f"index has {indexed} notes, disk has {on_disk}, {timeout:g} s after the sync"]
    return []


# ---- output ---------------------------------------------------------------------------------


def latency_table(report: LoadReport, say_: Callable[[str], None] = say) -> None:
    say_("| operation | requests | p50 | p95 | p99 |")
    say_("|---|---:|---:|---:|---:|")
    rows = sorted(report.latencies.items(), key=lambda kv: -len(kv[1]))
    everything = [x for _, v in rows for x in v]
    for name, values in [*rows, ("all", everything)]:
        if values:
            p50, p95, p99 = (percentile(values, q) * 1000 for q in (50, 95, 99))
            say_(f"| {name} | {len(values):,} | {p50:.1f} ms | {p95:.1f} ms | {p99:.1f} ms |")


def print_report(report: LoadReport) -> None:
    config = report.config
    say(f"\n{report.requests:,} requests in {report.seconds:.1f} s = "
        f"{report.requests / max(report.seconds, 1e-9):.1f} requests/s "
        f"({config.clients} clients, {config.notes:,} notes, "
        f"{'real model' if config.real_model else 'fake embedder'})\n")
    latency_table(report)
    say(f"\nerrors: {len(report.errors)}")
    for line in Counter(report.errors).most_common(20):
        say(f"  {line[1]} x {line[0]}")
    say(f"sync changes: {sum(report.churn.values())} ({dict(report.churn)})")
    say(f"saves: {report.saves[0]:,} new memories, {report.saves[1]:,} reinforced one "
        f"(pool of {config.save_pool or 'unbounded'} facts); notes in the vault at the end: "
        f"{report.notes_end:,}")
    say("daemon jobs during the load: "
        + "; ".join(f"{name} {value}" for name, value in report.jobs.items()))
    if report.rss is not None:
        first, middle, last = report.rss.thirds()
        say(f"daemon RSS (MB): start {report.rss_start:.0f}; max per third {first:.0f} / "
            f"{middle:.0f} / {last:.0f}; plateaus: {'yes' if report.rss.plateaus() else 'NO'}")
        say("median per third (MB): "
            + " / ".join(f"{mb:.0f}" for mb in report.rss.thirds(statistics.median)))
        say(f"RSS series (seconds:MB): {report.rss.series()}")
    say(f"end checks: {'all passed' if not report.problems else 'FAILED'}; phases: "
        + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.phases.items()))
    for problem in report.problems[:30]:
        say(f"  {problem}")
