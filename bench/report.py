"""What bench/engine.py and its parts share: targets, results, output and the machine check."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.support import PoolEmbedder, Stopwatch, load_average, ms, p50
from vaultmem.app import App
from vaultmem.index.embedders import SentenceTransformerEmbedder
from vaultmem_testing.bench_vault import SyntheticNote, VaultGenerator

TOP_K = 10
POOL = max(50, TOP_K * 5)  # what Search.search asks of each retriever

TARGETS = {
    "ratio": 0.85, "reindex": 2.0, "p50_10k": 0.040, "p50_100k": 0.100, "churn": 1.5,
}


@dataclass
class Results:
    """Figures for the summary at the end."""

    throughput_ratio: float | None = None
    reindex_per_1000: dict[str, float] = field(default_factory=dict)
    search_p50: dict[int, float] = field(default_factory=dict)
    churn_ratios: dict[str, float] = field(default_factory=dict)
    churn_detail: dict[str, dict[str, float]] = field(default_factory=dict)
    optimize_every: int = 0
    policy_points: dict[int, str] = field(default_factory=dict)  # policy -> its worst point
    optimise_cost: dict[int, float] = field(default_factory=dict)
    fts_refresh: float = 0.0
    filtered_ratio: dict[str, float] = field(default_factory=dict)  # label -> p50 ratio


def say(text: str = "") -> None:
    print(text, flush=True)


CHECKER: list[SentenceTransformerEmbedder] = []
CHECKS: list[float] = []  # the machine check of every section, seconds
IDLE_CHECK = 0.007


def machine_check(count: int = 15) -> float:
    """p50 of one fixed query embedding: ~7 ms on this machine when nothing else runs."""
    samples = []
    for _ in range(count):
        watch = Stopwatch()
        CHECKER[0].embed_query("machine check: how fast is one query embedding right now")
        samples.append(watch.elapsed())
    return p50(samples)


SETTLE = [0.0]  # seconds to wait at most for a quiet machine before a measurement


def settle() -> None:
    """Wait (up to SETTLE seconds) until the machine check is within 3x idle, and say so."""
    if not CHECKER or SETTLE[0] <= 0:
        return
    watch = Stopwatch()
    check = machine_check(5)
    while check > 3 * IDLE_CHECK and watch.elapsed() < SETTLE[0]:
        time.sleep(3)
        check = machine_check(5)
    state = "quiet" if check <= 3 * IDLE_CHECK else "STILL BUSY"
    CHECKS.append(check)
    say(f"   [settle: waited {watch.elapsed():.0f} s; machine {state}, check {ms(check)} ms]")


def section(title: str) -> None:
    """A heading with the machine's current state: load average and a fixed small workload."""
    say()
    say(f"== {title}")
    check = ""
    if CHECKER:
        value = machine_check()
        CHECKS.append(value)
        check = f"; machine check: one query embedding p50 {ms(value)} ms (idle ~7 ms)"
    say(f"   [load average {load_average()}{check}]")


@dataclass
class Synthetic:
    size: int
    app: App
    notes: list[SyntheticNote]
    generator: VaultGenerator
    embedder: PoolEmbedder
    vault: Path
    data: Path
