"""Model calls run on one long-lived thread, whichever thread asks (see embedders.py)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import pytest

from vaultmem.index.embedders import SentenceTransformerEmbedder
from vaultmem.native import Trimmer, trim_malloc, tune_malloc


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


def test_malloc_can_be_tuned_on_linux() -> None:
    capped = tune_malloc(8)  # 8 arenas: glibc's own default per core, harmless here
    assert capped is sys.platform.startswith("linux")
    assert isinstance(trim_malloc(), bool)


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
