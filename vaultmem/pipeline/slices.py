"""A sync's new chunk texts embedded in slices: waiting edits get in between two slices, and a
stopping daemon ends the sync before the next one (see `Indexer.stop`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from vaultmem.errors import Stopping
from vaultmem.index import inference
from vaultmem.index.base import Embedder
from vaultmem.pipeline.progress import IndexProgress, Run

# Called between two embedding slices with the paths this sync has yet to write.
Between = Callable[[frozenset[str]], None]
# Chunks embedded between two looks at waiting changes: 2 model calls of OpenVINO's 4 texts.
# A note with more chunks than this is a large note: it is embedded alone, in pieces of
# LARGE_PIECE_CHUNKS (one short model call each) at the inference thread's LARGE priority, with
# a look at waiting changes after each piece. So an edit arriving while a large note is embedded
# waits for one short model call, not a slice, and its own embedding (let in between, or from
# another thread) runs before the large note's next piece. Measured (bench/pieces.py,
# docs/benchmarks.md): on ONNX Runtime 1 or 2 chunks per call embed about as fast as 8, and one
# chunk halves what an edit waits for; an embedder whose own call is larger (OpenVINO's 4,
# `texts_per_call`) takes its own call as a piece.
SLICE_CHUNKS = 8
LARGE_PIECE_CHUNKS = 1


class SlicedEmbedding:
    def __init__(self, embedder: Embedder, progress: IndexProgress) -> None:
        self._embedder = embedder
        self._progress = progress
        self._stopping = threading.Event()

    def stop(self) -> None:
        """From any thread: this and every later `embed` end with `Stopping` before their next
        slice (model call)."""
        self._stopping.set()

    def check_stopping(self, left: str) -> None:
        """Stopping, if `stop` was called; `left`: what the next start will index."""
        if self._stopping.is_set():
            raise Stopping(f"stopping: {left} left to index at the next start")

    def embed(
        self, texts: list[str], note: str | None, unwritten: frozenset[str],
        between: Between | None, run: Run,
    ) -> list[Any]:
        """The vectors of `texts` (rows, in order), embedded SLICE_CHUNKS at a time (a large
        note's LARGE_PIECE_CHUNKS at a time, at LARGE priority), longest first as the embedder
        orders them anyway (by its `text_lengths` if it has them), with `between` after each
        slice but the last. `note`: the one note these texts are of, if they are one note's."""
        order = sorted(range(len(texts)), key=_lengths(self._embedder, texts).__getitem__,
                       reverse=True)
        sliced = len(texts) > SLICE_CHUNKS and note is not None
        piece_chunks = max(LARGE_PIECE_CHUNKS, int(getattr(self._embedder, "texts_per_call", 1)))
        step = piece_chunks if sliced else SLICE_CHUNKS
        slices = [order[start:start + step] for start in range(0, len(order), step)]
        if sliced:
            self._progress.slicing(run, note, len(texts))
        rows: list[Any] = [None] * len(texts)
        try:
            for n, piece in enumerate(slices):
                self.check_stopping(f"{len(texts) - n * step} chunks of {note or 'this sync'}")
                with inference.at_priority(inference.LARGE) if sliced else nullcontext():
                    vectors = self._embedder.embed([texts[i] for i in piece])
                for i, vector in zip(piece, vectors, strict=True):
                    rows[i] = vector
                if sliced:
                    self._progress.sliced(run, len(piece))
                if between is not None and n + 1 < len(slices):
                    between(unwritten)
        finally:
            if sliced:
                self._progress.slicing(run, None)
        return rows


def _lengths(embedder: Embedder, texts: list[str]) -> list[int]:
    """The texts' lengths as `embedder` counts them (its tokens, if it says and takes several
    texts a call: they are padded to the longest), else characters."""
    counted = getattr(embedder, "text_lengths", None)
    if counted is not None and texts and int(getattr(embedder, "texts_per_call", 1)) > 1:
        return list(counted(texts))
    return [len(text) for text in texts]


def bulk_work(embedder: Embedder) -> AbstractContextManager[Any]:
    """The embedder's `bulk` block if it has one (onnx_embedder.py): a sync's slices keep the
    model's working memory between them."""
    bulk = getattr(embedder, "bulk", None)
    return bulk() if bulk is not None else nullcontext()
