"""FakeEmbedder behaviour, make_embedder dispatch, and (marked) the real default model."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index.embedders import (
    DEFAULT_MODEL_NAME,
    FakeEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_fake_embedder_shape_norm_and_determinism() -> None:
    embedder = FakeEmbedder(32)
    vectors = embedder.embed(["memory decays", "", "Memory DECAY!"])
    assert vectors.shape == (3, 32) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(vectors[0], vectors[2])  # case, punctuation and stem
    np.testing.assert_array_equal(embedder.embed_query(""), vectors[1])
    np.testing.assert_array_equal(FakeEmbedder(32).embed_query("memory decays"), vectors[0])
    assert embedder.name == "fake/hashed-words-v1:32" != FakeEmbedder(64).name


def test_fake_embedder_is_stable_across_processes() -> None:
    code = (
        "from vaultmem.index.embedders import FakeEmbedder;"
        "print(FakeEmbedder(16).embed_query('stable hashing please').tolist())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1


def test_fake_embedder_shared_words_are_closer() -> None:
    embedder = FakeEmbedder(256)
    anchor = embedder.embed_query("the memory decays over weeks")
    near = embedder.embed_query("memories decay slowly")
    far = embedder.embed_query("quarterly tax filing deadline")
    assert _cosine(anchor, near) > _cosine(anchor, far)


def test_importing_embedders_does_not_import_torch() -> None:
    code = (
        "import sys; import vaultmem.index.embedders as e;"
        "e.FakeEmbedder().embed(['x']); e.SentenceTransformerEmbedder().name;"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_make_embedder_dispatch() -> None:
    assert make_embedder("fake").name == "fake/hashed-words-v1:64"
    assert make_embedder("fake:12").dim == 12
    default = make_embedder("default")
    assert isinstance(default, SentenceTransformerEmbedder)
    assert default.name == make_embedder("").name == DEFAULT_MODEL_NAME
    assert not default.loaded
    assert make_embedder("org/some-model").name == "org/some-model"
    with pytest.raises(ConfigError):
        make_embedder("fake:many")


@pytest.mark.model
def test_default_model_offline() -> None:
    embedder = SentenceTransformerEmbedder()
    assert embedder.dim == 384
    cat, kitten, tax = embedder.embed(
        ["the cat sat on the mat", "a kitten resting on a rug", "quarterly tax filing deadline"]
    )
    for vector in (cat, kitten, tax):
        assert vector.dtype == np.float32
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert _cosine(cat, kitten) > _cosine(cat, tax) + 0.1
    query = embedder.embed_query("the cat sat on the mat")
    assert query.shape == (384,)
    np.testing.assert_allclose(query, cat, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)
