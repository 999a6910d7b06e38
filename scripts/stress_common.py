"""Shared pieces of scripts/stress_load.py and scripts/stress_scale.py: a real daemon on a
synthetic vault, RSS sampling, percentiles and the machine facts printed with every figure."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
for _path in (str(SCRIPTS), str(REPO)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from bench_support import load_average, machine_lines  # noqa: E402

from tests.daemon._daemon import DaemonProcess  # noqa: E402

REAL_MODEL_ENV = {"VAULTMEM_EMBEDDING_MODEL": "default", "HF_HUB_OFFLINE": "1",
                  "TRANSFORMERS_OFFLINE": "1"}

__all__ = ["DaemonProcess", "RssSampler", "daemon_for", "dir_bytes", "load_average",
           "machine_lines", "percentile", "rss_mb", "say"]


def say(text: str = "") -> None:
    print(text, flush=True)


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank q-th percentile (0-100) of non-empty samples."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def daemon_for(vault: Path, data: Path, *, real_model: bool = False,
               log: Path | None = None, **env: str) -> DaemonProcess:
    """A DaemonProcess (not started) with the fake embedder, or the real model if asked."""
    data.mkdir(parents=True, exist_ok=True)
    daemon = DaemonProcess(vault, data, **(REAL_MODEL_ENV if real_model else {}), **env)
    daemon.output = log
    return daemon


def rss_mb(pid: int) -> float:
    rss: int = psutil.Process(pid).memory_info().rss
    return rss / 1e6


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

