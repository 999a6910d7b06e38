"""`embedding_precision = int8`: the setting, the index identity (a switch rebuilds), and
(marked `model`) the quantised graph made locally from the fp32 export, close to its vectors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vaultmem.app import embedder_options, index_options
from vaultmem.config import Settings, load_settings
from vaultmem.errors import ConfigError
from vaultmem.index.embedders import EmbedderOptions, make_embedder
from vaultmem.index.lance import LanceIndex
from vaultmem.index.onnx_cache import is_verified
from vaultmem.index.onnx_export import GRAPH_NAME, WEIGHTS_NAME
from vaultmem.index.onnx_quantise import NAME_SUFFIX, RECIPE

OPTIONS = index_options(Settings())


def _options(cache: Path, precision: str, runtime: str = "onnx") -> EmbedderOptions:
    return EmbedderOptions(runtime=runtime, cache=cache, query_prompt="", passage_prompt="",
                           threads=1, batch_size=1, precision=precision)


def test_a_precision_other_than_fp32_or_int8_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('embedding_precision = "int4"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="embedding_precision must be fp32 or int8"):
        load_settings(config, env={})
    config.write_text('embedding_precision = "int8"\n', encoding="utf-8")
    assert embedder_options(load_settings(config, env={})).precision == "int8"


def test_switching_precision_rebuilds_the_index(tmp_path: Path) -> None:
    """The name is the index's identity: int8 vectors never mix with fp32 ones (nothing loads
    the model here: an embedder's name is known before its first use)."""
    fp32 = make_embedder("english", _options(tmp_path / "models", "fp32"))
    int8 = make_embedder("english", _options(tmp_path / "models", "int8"))
    assert int8.name == f"{fp32.name}{NAME_SUFFIX}"
    folder = tmp_path / "lance"
    LanceIndex(folder, fp32.name, OPTIONS).close()
    switched = LanceIndex(folder, int8.name, OPTIONS)
    assert switched.rebuilt_reason == (
        f"embedding model changed from {fp32.name} to {int8.name}")
    switched.close()
    kept = LanceIndex(folder, int8.name, OPTIONS)
    assert kept.rebuilt_reason is None
    kept.close()
    back = LanceIndex(folder, fp32.name, OPTIONS)
    assert back.rebuilt_reason is not None and NAME_SUFFIX in back.rebuilt_reason
    back.close()


def test_int8_applies_to_an_exported_model_on_onnx_only(tmp_path: Path) -> None:
    """torch runs fp32 whatever the setting, and says so by its name; the multilingual model
    is 4-bit already and keeps its own name."""
    torch_runtime = make_embedder("english", _options(tmp_path, "int8", runtime="torch"))
    assert NAME_SUFFIX not in torch_runtime.name
    multilingual = make_embedder("multilingual", _options(tmp_path, "int8"))
    assert NAME_SUFFIX not in multilingual.name


def test_the_default_settings_say_which_precision(tmp_path: Path) -> None:
    settings = replace(Settings(), embedding_precision="fp32")
    assert embedder_options(settings).precision == "fp32"


# ---- the real model ---------------------------------------------------------------------


@pytest.mark.model
@pytest.mark.timeout(600)
def test_the_int8_graph_is_made_here_and_its_vectors_stay_close_to_fp32(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    cache = tmp_path_factory.mktemp("int8-cache")
    fp32 = make_embedder("english", _options(cache, "fp32"))
    int8 = make_embedder("english", _options(cache, "int8"))
    texts = ["the cat sat on the mat", "a kitten resting on a rug",
             "quarterly tax filing deadline " * 80, "Sauerteig füttern 🍞", "x",
             "## Meeting notes\n- ship the release on Friday\n- ask Dana about the budget"]
    a, b = fp32.embed(texts), int8.embed(texts)
    assert a.shape == b.shape == (6, 384) and b.dtype == np.float32
    cosine = (a * b).sum(1)
    assert float(cosine.min()) > 0.97, cosine
    assert not np.allclose(a, b, atol=1e-4)  # really another graph
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, rtol=1e-5)
    query = "how do I feed a sourdough starter"
    assert float(fp32.embed_query(query) @ int8.embed_query(query)) > 0.97
    # ranking two texts against a query is kept
    about = int8.embed(["feeding a sourdough starter with flour and water",
                        "renewing a car insurance policy"]) @ int8.embed_query(query)
    assert about[0] > about[1]
    (folder,) = [p for p in cache.iterdir() if p.name.endswith(RECIPE)]
    assert is_verified(folder) and (folder / WEIGHTS_NAME).stat().st_size > 20e6
    assert (folder / GRAPH_NAME).stat().st_size < 2**20  # the weights are beside the graph
    with (folder / WEIGHTS_NAME).open("r+b") as handle:  # a corrupt file is made again
        handle.seek(4096)
        handle.write(b"\xff" * 16)
    again = make_embedder("english", _options(cache, "int8"))
    np.testing.assert_allclose(again.embed(texts[:2]), b[:2], atol=1e-5)
    assert is_verified(folder)
