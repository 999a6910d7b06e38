"""Helpers for bench/engine.py: machine facts, timing statistics, embedder wrappers, app setup.

The wrappers only delegate to or stand in for the embedder that `build_app` receives; every
measurement still runs through `build_app`, `IndexSync` and `Indexer`.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.index.base import Embedder, Vector
from vaultmem.index.embedders import FakeEmbedder

# ---- machine --------------------------------------------------------------------------------


def machine_lines() -> list[str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = ", ".join(
        f"{name} {_version(name)}"
        for name in ("torch", "sentence-transformers", "lancedb", "pyarrow", "numpy")
    )
    return [
        f"CPU: {cpu}; {os.cpu_count()} logical cores ({usable} usable); RAM {ram}",
        f"Python {platform.python_version()} on {platform.system()} {platform.release()}; "
        f"{versions}",
        f"load average at start: {load_average()}",
    ]


def load_average() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "?"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def now_utc() -> datetime:
    return datetime.now(UTC)


# ---- statistics -----------------------------------------------------------------------------


def p50(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


# ---- app ------------------------------------------------------------------------------------


def make_app(vault: Path, data_dir: Path, embedder: Embedder, **overrides: Any) -> App:
    """build_app with this vault and data dir only: no config file, no VAULTMEM_* variables."""
    settings = load_settings(
        data_dir.parent / "no-such-config.toml",
        env={},
        overrides={"vault": str(vault), "data_dir": str(data_dir), **overrides},
    )
    return build_app(settings, embedder=embedder)


# ---- embedders ------------------------------------------------------------------------------


class TimingEmbedder:
    """Delegates to the real embedder and records every embed() call: texts, vectors, seconds."""

    def __init__(self, real: Embedder) -> None:
        self.real = real
        self.name = real.name
        self.calls: list[tuple[list[str], Vector, float]] = []

    @property
    def dim(self) -> int:
        return self.real.dim

    def embed(self, texts: Sequence[str]) -> Vector:
        start = time.perf_counter()
        vectors = self.real.embed(texts)
        self.calls.append((list(texts), vectors, time.perf_counter() - start))
        return vectors

    def embed_query(self, text: str) -> Vector:
        return self.real.embed_query(text)

    @property
    def seconds(self) -> float:
        return sum(seconds for _, _, seconds in self.calls)

    @property
    def texts(self) -> list[str]:
        return [text for texts, _, _ in self.calls for text in texts]


class PairedEmbedder(TimingEmbedder):
    """Like TimingEmbedder, but each embed() call is paired with a raw embedding of the same
    texts outside the pipeline (before the real call on even calls, after it on odd ones), so
    that raw and in-pipeline embedding are measured seconds apart under the same machine load.
    The raw time is recorded in `raw_seconds`; the caller subtracts it from the index time."""

    def __init__(self, real: Embedder) -> None:
        super().__init__(real)
        self.raw_seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Vector:
        raw_first = len(self.calls) % 2 == 0
        if raw_first:
            self._raw(texts)
        vectors = super().embed(texts)
        if not raw_first:
            self._raw(texts)
        return vectors

    def _raw(self, texts: Sequence[str]) -> None:
        start = time.perf_counter()
        self.real.embed(list(texts))
        self.raw_seconds += time.perf_counter() - start


SUFFIX_CHARS = 160


class PoolEmbedder:
    """Stands in for the model when indexing synthetic notes built from real corpus chunks.

    A chunk's vector is the real model's embedding of the corpus chunk it came from (found by
    the chunk's last characters, or else by the most word-similar corpus chunk), plus Gaussian
    noise (sigma per dimension; 0.02 gives cosine ~0.93 to the original), renormalised.
    Deterministic per text. Queries go to the real model.
    """

    def __init__(
        self, real: Embedder, texts: Sequence[str], vectors: Vector, sigma: float = 0.02
    ) -> None:
        self.real = real
        self.name = real.name
        self._vectors = vectors
        self._dim = int(vectors.shape[1])
        self._sigma = sigma
        self._by_suffix = {text.strip()[-SUFFIX_CHARS:]: row for row, text in enumerate(texts)}
        self._words = FakeEmbedder(self._dim)
        self._word_vectors = self._words.embed(list(texts))
        self.exact = 0
        self.nearest = 0

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            row = self._by_suffix.get(text.strip()[-SUFFIX_CHARS:])
            if row is None:
                row = int(np.argmax(self._word_vectors @ self._words.embed_query(text)))
                self.nearest += 1
            else:
                self.exact += 1
            rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
            vector = self._vectors[row] + rng.normal(0.0, self._sigma, self._dim)
            out[i] = vector / np.linalg.norm(vector)
        return out

    def embed_query(self, text: str) -> Vector:
        return self.real.embed_query(text)
