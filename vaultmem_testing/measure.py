"""Measuring a daemon process and its figures: RSS (sampled over time), CPU time, percentiles,
directory sizes; used by the load runner and the benchmarks."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil

CLK_TCK = os.sysconf("SC_CLK_TCK")


def say(text: str = "") -> None:
    print(text, flush=True)


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank q-th percentile (0-100) of non-empty samples."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def rss_mb(pid: int) -> float:
    rss: int = psutil.Process(pid).memory_info().rss
    return rss / 1e6


def children_rss_mb(pid: int) -> float:
    """The summed RSS of `pid`'s child processes, theirs too (a first index's parse children)."""
    total = 0
    for child in psutil.Process(pid).children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:  # ended between the listing and the read
            continue
    return total / 1e6


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB (10^6 bytes) from /proc/<pid>/status."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) * 1024 / 1e6
    return values["VmRSS"], values["VmHWM"]


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (all its threads) from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class RssSampler:
    """Samples a process's RSS (MB) every `interval` seconds in a background thread."""

    def __init__(self, pid: int, interval: float) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._start = time.monotonic()

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic() - self._start, rss_mb(self.pid)))
            except psutil.Error:
                return
            self._stop.wait(self.interval)

    def thirds(self, of: Callable[[list[float]], float] = max) -> tuple[float, float, float]:
        """The max (or `of`) RSS of the first, middle and last third of the samples."""
        values = [mb for _, mb in self.samples]
        n = len(values)
        if n < 3:
            top = of(values) if values else 0.0
            return top, top, top
        cut = [0, n // 3, 2 * n // 3, n]
        first, middle, last = (of(values[cut[i]:cut[i + 1]]) for i in range(3))
        return first, middle, last

    def plateaus(self, slack_mb: float = 20.0) -> bool:
        """True when the last third's peak is within `slack_mb` of the middle third's."""
        _, middle, last = self.thirds()
        return last <= middle + slack_mb

    def series(self, points: int = 24) -> str:
        """The series thinned to about `points` values, compactly: `t s: MB` pairs."""
        step = max(1, -(-len(self.samples) // points))
        picked = self.samples[::step]
        if self.samples and picked[-1] != self.samples[-1]:
            picked.append(self.samples[-1])
        return " ".join(f"{t:.0f}s:{mb:.0f}" for t, mb in picked)

