"""Model calls run on one long-lived thread, whichever thread asks (see embedders.py)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import pytest

from vaultmem.daemon.native import Trimmer, tune_malloc
from vaultmem.index import inference
from vaultmem.index.embedders import SentenceTransformerEmbedder
from vaultmem.index.inference import embed_in_pieces
from vaultmem.index.libc import trim_heap


class _RecordingModel:
    def __init__(self) -> None:
        self.threads: list[str] = []

    def encode(self, texts: list[str], **options: Any) -> np.ndarray:
        self.threads.append(threading.current_thread().name)
        return np.ones((len(texts), 4), dtype=np.float32)


@pytest.mark.timeout(30)
def test_every_model_call_runs_on_the_same_inference_thread() -> None:
    embedder = SentenceTransformerEmbedder()
    model = _RecordingModel()
    embedder._model, embedder._dim = model, 4  # a stand-in: no weights needed
    callers = [threading.Thread(target=embedder.embed_query, args=(f"q{i}",)) for i in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    embedder.embed(["a", "b"])
    assert len(model.threads) == 5
    assert len(set(model.threads)) == 1
    assert model.threads[0].startswith("vaultmem-inference")
    assert embedder.embed([]).shape == (0, 4)


class _SlowModel:
    """Encodes each text as [len(text), 0, ...]; the first call blocks until released."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.started = threading.Event()

    def encode(self, texts: list[str], **options: Any) -> np.ndarray:
        if not self.calls:
            self.started.set()
            self.release.wait(10)
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 4), dtype=np.float32)
        out[:, 0] = [len(t) for t in texts]
        return out


@pytest.mark.timeout(30)
def test_a_query_runs_before_queued_bulk_batches_and_bulk_keeps_its_order() -> None:
    embedder = SentenceTransformerEmbedder(batch_size=2)
    model = _SlowModel()
    embedder._model, embedder._dim = model, 4
    texts = ["a" * n for n in (3, 1, 7, 5, 2, 6)]
    result: list[np.ndarray] = []
    bulk = threading.Thread(target=lambda: result.append(embedder.embed(texts)))
    bulk.start()
    assert model.started.wait(10)  # the first batch runs
    while len(inference.shared()._queue.queue) < 2:  # and the other two wait
        threading.Event().wait(0.01)
    query = threading.Thread(target=embedder.embed_query, args=("the query",))
    query.start()
    while not any(task[0] == inference.QUERY for task in inference.shared()._queue.queue):
        threading.Event().wait(0.01)
    model.release.set()
    bulk.join(10)
    query.join(10)
    # one model call per batch of 2, longest first; the query right after the first batch
    assert model.calls == [["a" * 7, "a" * 6], ["the query"], ["a" * 5, "a" * 3],
                           ["a" * 2, "a" * 1]]
    assert list(result[0][:, 0]) == [3, 1, 7, 5, 2, 6]  # rows in the caller's order



@pytest.mark.timeout(30)
def test_bulk_work_runs_before_a_large_notes_queued_pieces() -> None:
    embedder = SentenceTransformerEmbedder(batch_size=1)
    model = _SlowModel()
    embedder._model, embedder._dim = model, 4
    large = ["L" * n for n in (9, 8, 7)]
    result: list[np.ndarray] = []

    def embed_large() -> None:
        with inference.at_priority(inference.LARGE):
            result.append(embedder.embed(large))
    bulk = threading.Thread(target=embed_large)
    bulk.start()
    assert model.started.wait(10)  # the large note's first piece runs
    while len(inference.shared()._queue.queue) < 2:  # and its other two wait
        threading.Event().wait(0.01)
    other = threading.Thread(target=embedder.embed, args=(["small"],))
    other.start()
    while not any(task[0] == inference.BULK for task in inference.shared()._queue.queue):
        threading.Event().wait(0.01)
    model.release.set()
    bulk.join(10)
    other.join(10)
    assert model.calls == [["L" * 9], ["small"], ["L" * 8], ["L" * 7]]
    assert list(result[0][:, 0]) == [9, 8, 7]

def test_an_error_in_a_model_call_reaches_the_caller_and_the_thread_goes_on() -> None:
    thread = inference.InferenceThread(name="vaultmem-inference-test")

    def fail() -> None:
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        thread.run(inference.BULK, fail)
    assert thread.run(inference.QUERY, lambda x: x + 1, 41) == 42
    thread.close()
    assert not [t for t in threading.enumerate() if t.name == "vaultmem-inference-test"]


def test_malloc_can_be_tuned_on_linux() -> None:
    capped = tune_malloc(8)  # 8 arenas: glibc's own default per core, harmless here
    assert capped is sys.platform.startswith("linux")
    assert isinstance(trim_heap(), bool)


def test_the_trimmer_trims_at_most_once_per_interval() -> None:
    now = [100.0]
    trims: list[float] = []
    trimmer = Trimmer(10.0, clock=lambda: now[0], trim=lambda: trims.append(now[0]) is None)
    assert trimmer.maybe_trim()  # the first request trims
    for step in (1.0, 4.0, 4.9):  # 9.9 s later: still inside the interval
        now[0] += step
        assert not trimmer.maybe_trim()
    now[0] += 0.1
    assert trimmer.maybe_trim()
    assert not trimmer.maybe_trim()
    assert trims == [100.0, 110.0]


@pytest.mark.timeout(30)
def test_a_widened_inference_thread_runs_bulk_pieces_side_by_side_and_queries_first() -> None:
    thread = inference.InferenceThread(name="test-inference")
    thread.widen(2)
    both_in, release = threading.Barrier(3, timeout=10), threading.Event()
    order: list[str] = []

    def piece(name: str) -> str:
        if name in ("a", "b"):
            both_in.wait()  # two pieces run at the same time, or this times out
            assert release.wait(10)
        order.append(name)
        return name

    try:
        futures = [thread.submit(inference.BULK, piece, name) for name in ("a", "b", "c")]
        both_in.wait()
        query = thread.submit(inference.QUERY, piece, "query")
        release.set()
        assert [f.result(10) for f in futures] == ["a", "b", "c"] and query.result(10)
        assert order.index("query") < order.index("c")  # ahead of the queued bulk piece
        assert len({t.name for t in thread._threads}) == 2
    finally:
        thread.close()
    assert not thread._threads


def test_bulk_pieces_group_texts_by_the_lengths_given() -> None:
    texts = ["a" * 50, "bb", "c" * 40, "dddd"]
    seen: list[list[str]] = []

    def encode(piece: list[str]) -> np.ndarray:
        seen.append(piece)
        return np.array([[float(len(t)), 0.0] for t in piece], dtype=np.float32)

    tokens = [1, 30, 2, 20]  # e.g. a long text of few tokens
    out = embed_in_pieces(texts, encode, 2, 2, lengths=tokens)
    assert seen == [["bb", "dddd"], ["c" * 40, "a" * 50]]
    assert out[:, 0].tolist() == [50.0, 2.0, 40.0, 4.0]  # rows in the order of the texts
    seen.clear()
    embed_in_pieces(texts, encode, 2, 2)  # no lengths: by characters
    assert seen == [["a" * 50, "c" * 40], ["dddd", "bb"]]
