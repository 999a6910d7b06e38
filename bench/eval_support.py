"""Support for scripts/eval: a disk-cached embedder and result tables.

The cache only spares the model repeated work across runs: every vector in it is the real
model's embedding of exactly that text (keyed by the model name and the text's SHA-1), and the
index is still built by `build_app` → `IndexSync.reindex` on every run.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from vaultmem.index.base import Embedder, Vector


class CachedEmbedder:
    """Delegates to the real embedder for texts it has not seen; remembers the rest on disk."""

    def __init__(self, real: Embedder, cache_dir: Path) -> None:
        self.real = real
        self.name = real.name
        digest = hashlib.sha1(real.name.encode()).hexdigest()[:12]
        self.file = cache_dir / f"embeddings-{digest}.npz"
        self._vectors: dict[str, Vector] = {}
        self.misses = 0
        self.hits = 0
        self.seconds = 0.0  # spent in the real model (the texts not in the cache)
        if self.file.exists():
            with np.load(self.file) as stored:
                for key, row in zip(stored["keys"], stored["vectors"], strict=True):
                    self._vectors[str(key)] = row

    @property
    def dim(self) -> int:
        if self._vectors:
            return int(next(iter(self._vectors.values())).shape[0])
        return self.real.dim

    @staticmethod
    def _key(text: str, kind: str) -> str:
        return kind + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._lookup(texts, "d")

    def embed_query(self, text: str) -> Vector:
        row: Vector = self._lookup([text], "q")[0]
        return row

    def _lookup(self, texts: Sequence[str], kind: str) -> Vector:
        keys = [self._key(text, kind) for text in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True)
                          if k not in self._vectors}.items())
        if missing:
            started = time.perf_counter()
            if kind == "q":
                fresh = np.stack([self.real.embed_query(t) for _, t in missing])
            else:
                fresh = self.real.embed([t for _, t in missing])
            for (key, _), row in zip(missing, fresh, strict=True):
                self._vectors[key] = np.asarray(row, dtype=np.float32)
            self.misses += len(missing)
            self.seconds += time.perf_counter() - started
        self.hits += len(keys) - len(missing)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        if not self.misses:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype=object)
        vectors = np.stack(list(self._vectors.values())).astype(np.float32)
        tmp = self.file.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys.astype(str), vectors=vectors)
        tmp.replace(self.file)


def embedding_note(embedder: CachedEmbedder, before: tuple[int, int, float]) -> str:
    """What an indexing run asked of the model: texts embedded (and the model's seconds),
    texts found in the cache."""
    misses, hits, seconds = before
    return (f"{embedder.misses - misses} texts embedded in {embedder.seconds - seconds:.1f} s, "
            f"{embedder.hits - hits} from the cache")


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return statistics.fmean(items) if items else float("nan")


def table(rows: Sequence[tuple[str, Mapping[str, float]]], columns: Sequence[str],
          *, scale: float, digits: int) -> list[str]:
    """Fixed-width text table: one row per system, one column per figure."""
    width = max(len(name) for name, _ in rows) + 2
    cell = max(9, *(len(c) + 2 for c in columns))
    head = "system".ljust(width) + "".join(c.rjust(cell) for c in columns)
    lines = [head, "-" * len(head)]
    for name, values in rows:
        cells = []
        for column in columns:
            value = values.get(column)
            cells.append(("—" if value is None else f"{value * scale:.{digits}f}").rjust(cell))
        lines.append(name.ljust(width) + "".join(cells))
    return lines
