"""The ONNX runtime: a local sentence-transformers model served by ONNX Runtime and tokenizers.

fp32, and the same steps sentence-transformers takes (its tokenizer, truncation at the model's
max_seq_length, the transformer, mean or CLS pooling over the attention mask, L2 normalising),
so the vectors are those of the torch runtime (cosine >= 0.9999999) and an index built by one
serves the other. Neither torch nor sentence-transformers is imported here: the process starts
in about a second and stays small.

Memory for a daemon that runs all day: one session whose intra-op threads (`embedding_threads`,
two: the vectors are the same bit for bit with one) never spin, and one text per model call by
default (no padding; a 16 x 256-token batch took RSS to ~700 MB, 4 x 256 to ~350). Its memory
arena is on, and emptied after each bulk embedding (a sync's slices: once, at its end, `bulk`):
the arena would keep the largest batch's peak for good, and without it every activation of
every batch was a fresh mapping (the daemon fixes glibc's mmap threshold, daemon/native.py)
whose pages were faulted in again, which slowed indexing to ~0.6x. The weights are mapped
from their file, and the word-embedding table's pages kept to the rows in use
(mapped_weights.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vaultmem.errors import IndexUnusableError
from vaultmem.index import inference
from vaultmem.index.base import Vector
from vaultmem.index.libc import trim_heap
from vaultmem.index.mapped_weights import MappedWeights
from vaultmem.index.model_files import ModelFiles
from vaultmem.index.onnx_export import GRAPH_NAME, WEIGHTS_NAME
from vaultmem.index.openvino_runtime import PAD_TO
from vaultmem.index.sp_tokenizer import SentencePieceTokenizer


def onnx_available() -> bool:
    """Whether onnxruntime and tokenizers are installed (found without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None
               for name in ("onnxruntime", "tokenizers"))


class OnnxEmbedder:
    """Embeds on the process's inference thread, like the torch runtime: a query waits for at
    most one bulk batch. The model loads on first use (thread-safe)."""

    def __init__(self, name: str, files: ModelFiles, cache: Path, *, threads: int = 1,
                 batch_size: int = 1, derived: Callable[[], Path] | None = None,
                 side_by_side: bool = False, openvino: bool = False, bf16: bool = False
                 ) -> None:
        """`derived`: for a model made here from another form (multilingual.py), the folder
        of its verified files (graph, weights, SentencePiece tokenizer); otherwise the graph
        is exported from the sentence-transformers directory `files.path`. `side_by_side`:
        `threads` one-thread model calls run side by side (bulk pieces on as many inference
        threads); otherwise (the default) one call at a time with `threads` intra-op threads.
        Side by side measured no faster on 2 busy cores, and two calls at once wrote a page
        of the mapped weights (their release then stops): docs/benchmarks.md. `openvino`: the
        graph runs on OpenVINO (openvino_runtime.py), in bf16 if `bf16`, which `name` must
        then say (the vectors differ from fp32's)."""
        self.name = name
        self.runtime = "openvino" if openvino else "onnx"
        self._openvino = openvino
        self._bf16 = bf16
        self._pad_to = PAD_TO if openvino else None  # ONNX Runtime: no padding, same bits
        self._files = files
        self._cache = cache
        self._derived = derived
        self._threads = max(1, threads)
        self._side_by_side = side_by_side
        self._batch_size = max(1, batch_size)
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._emptying: Any = None  # run options that empty the arena at the end of the run
        self._smallest: dict[str, Any] = {}  # the feed of a one-token text
        self._dim: int | None = None
        self._weights: MappedWeights | None = None
        self._lock = threading.Lock()
        self._bulk = 0  # open `bulk` blocks: the working memory is kept until the last ends
        self._bulk_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def texts_per_call(self) -> int:
        """Texts per model call in bulk work (a large note's pieces are one call each)."""
        return self._batch_size

    @property
    def dim(self) -> int:
        if self._dim is None:
            inference.shared().run(inference.QUERY, self._ensure_loaded)
        assert self._dim is not None
        return self._dim

    def load(self) -> None:
        """Load now (the daemon does this at start, beside opening the index)."""
        inference.shared().run(inference.QUERY, self._ensure_loaded)

    def text_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count as the model reads it (truncated): several texts a call
        are padded to the longest, so bulk work groups texts of like counts (a first index's
        pieces, ordered by characters, computed 1.22x their tokens; by tokens 1.10x)."""
        self._ensure_loaded()
        return [sum(e.attention_mask) for e in self._tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str]) -> Vector:
        if self._batch_size > 1 and len(texts) > 1:  # tokenized once: grouped, then fed
            self._ensure_loaded()
            feed = self._feed(list(texts))
            lengths = feed["attention_mask"].sum(1).tolist()
            vectors = inference.embed_in_pieces(range(len(texts)), self._encode_rows,
                                                self._batch_size, self.dim, feed,
                                                lengths=lengths)
        else:
            vectors = inference.embed_in_pieces(texts, self._encode, self._batch_size, self.dim)
        if texts and not self._bulk:
            self._hand_back()
        return vectors

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Within, embeddings keep the model's working memory and the weight pages they read
        between calls, handed back once when the last block ends. A sync embeds a slice at a
        time; handing them back after each slice made and faulted them in again for the next:
        ~10 % of a first index's CPU on OpenVINO (docs/benchmarks.md)."""
        with self._bulk_lock:
            self._bulk += 1
        try:
            yield
        finally:
            with self._bulk_lock:
                self._bulk -= 1
                last = self._bulk == 0
            if last and self.loaded:
                self._hand_back()

    def _hand_back(self) -> None:
        inference.shared().run(inference.QUERY, self._empty_arena)
        if self._weights is not None:
            self._weights.release()  # the rows the texts read (mapped_weights.py)

    def embed_query(self, text: str) -> Vector:
        vector: Vector = inference.shared().run(inference.QUERY, self._encode, [text])[0]
        return vector

    def _encode(self, texts: list[str]) -> Vector:
        self._ensure_loaded()
        feed = self._feed(texts)
        hidden = self._session.run(None, feed)[0]
        return _pool(hidden, feed["attention_mask"], self._files)

    def _encode_rows(self, rows: list[int], feed: dict[str, Any]) -> Vector:
        """`_encode` of the texts at `rows` of a feed tokenized for many texts at once (padded
        to the longest of all): each array cut to the piece's own padded length, as the
        tokenizer pads a piece of its own (right-padded: the same arrays)."""
        longest = int(feed["attention_mask"][rows].sum(1).max())
        width = -(-longest // self._pad_to) * self._pad_to if self._pad_to else longest
        piece = {name: array[rows, :width] for name, array in feed.items()}
        hidden = self._session.run(None, piece)[0]
        return _pool(hidden, piece["attention_mask"], self._files)

    def _feed(self, texts: list[str]) -> dict[str, Any]:
        encoded = self._tokenizer.encode_batch(texts)
        feed = {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
        return feed

    def _empty_arena(self) -> Any:
        """Hand the model's working memory back after bulk work: ONNX Runtime shrinks an arena
        only at the end of a run that asks for it, so a one-token run asks (a few ms, once
        per bulk embedding); OpenVINO hands its intermediate buffers back without a run.
        Returns the run's token vectors (the load reads the model's dimension from them)."""
        if self._openvino:
            self._session.release()
            return None
        return self._session.run(None, self._smallest, self._emptying)[0]

    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._load()

    def _load(self) -> None:
        from vaultmem.index.onnx_cache import onnx_file

        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise IndexUnusableError(f"the ONNX runtime is not installed: {exc}") from exc
        if self._derived is not None:
            path = self._derived() / GRAPH_NAME
            tokenizer: Any = SentencePieceTokenizer(path.parent, self._files.max_tokens)
        else:
            tokenizer = _tokenizer(Tokenizer, self._files, self._pad_to)
            path = onnx_file(self._cache, self._files.path)
        if self._openvino:
            session, weights = _openvino_session(path, self._threads, self._bf16)
        else:
            session, self._emptying = _ort_session(
                path, 1 if self._side_by_side else self._threads, self._files.path)
            weights = path.parent / WEIGHTS_NAME
        self._weights = MappedWeights(weights)
        self._weights.settle()
        self._inputs = tuple(i.name for i in session.get_inputs())
        self._tokenizer = tokenizer
        self._smallest = self._feed(["a"])
        self._session = session
        probe = self._session.run(None, self._smallest, self._emptying)[0]  # empties the arena
        self._dim = int(probe.shape[-1])
        if self._side_by_side:
            inference.shared().widen(self._threads)
        trim_heap()


def _ort_session(path: Path, threads: int, source: Path) -> tuple[Any, Any]:
    """An ONNX Runtime session, and the run options that empty its arena."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise IndexUnusableError(f"the ONNX runtime is not installed: {exc}") from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise IndexUnusableError(f"cannot load the ONNX model of {source}: {exc}") from exc
    emptying = ort.RunOptions()
    emptying.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return session, emptying


def _openvino_session(graph: Path, threads: int, bf16: bool) -> tuple[Any, Path]:
    """An OpenVINO session, and its mapped weights file (the word-embedding table is read
    from it as ONNX Runtime reads its own: mapped_weights.py)."""
    from vaultmem.index.openvino_runtime import IR_FILES, OpenVinoSession, ir_file

    xml = ir_file(graph)
    try:
        return OpenVinoSession(xml, threads, bf16), xml.parent / IR_FILES[1]
    except ImportError as exc:
        raise IndexUnusableError(f"OpenVINO is not installed: {exc}") from exc
    except Exception as exc:  # OpenVINO raises its own exception types
        raise IndexUnusableError(f"cannot load the OpenVINO model {xml}: {exc}") from exc


def _tokenizer(tokenizer_class: Any, files: ModelFiles, pad_to: int | None = None) -> Any:
    """A sentence-transformers model's own `tokenizer.json`, truncating and padding as it
    does (and to a multiple of `pad_to` tokens if given)."""
    tokenizer = tokenizer_class.from_file(str(files.path / "tokenizer.json"))
    tokenizer.enable_truncation(files.max_tokens)
    padding = tokenizer.padding or {}
    tokenizer.enable_padding(pad_id=int(padding.get("pad_id", 0)),
                             pad_token=str(padding.get("pad_token", "[PAD]")),
                             pad_to_multiple_of=pad_to)
    return tokenizer


def _pool(hidden: Any, mask: Any, files: ModelFiles) -> Vector:
    if files.pooling == "cls":
        vectors = hidden[:, 0]
    else:
        weights = mask[..., None].astype(np.float32)
        vectors = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
    norms = np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
    # vaultmem compares by cosine: its vectors are unit length whether the model normalises
    out: Vector = np.ascontiguousarray(vectors / norms, dtype=np.float32)
    return out

