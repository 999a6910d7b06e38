"""The exported graph's revision 2: the softmax's NaN guards dropped (the same outputs bit for
bit), and an earlier revision's cached files revised without torch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vaultmem.errors import IndexUnusableError
from vaultmem.index import onnx_cache
from vaultmem.index.onnx_cache import FILES, is_verified, model_key, onnx_file, publish
from vaultmem.index.onnx_export import (
    GRAPH_NAME,
    GRAPH_REVISION,
    WEIGHTS_NAME,
    drop_nan_guards,
    move_weights_out,
)

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

KEYS, WIDTH = 5, 8


def _attention_like(path: Path, *, guard_is_output: bool = False) -> None:
    """Scores masked by an additive mask, a softmax and torch's guard after it, then the
    weights applied to a stored value table (large: it goes to the weights file)."""
    from onnx import TensorProto, helper, numpy_helper

    values = np.random.default_rng(3).standard_normal((KEYS, 4096)).astype(np.float32)
    guard_out = "out" if guard_is_output else "guarded"
    nodes = [
        helper.make_node("Add", ["scores", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Constant", [], ["zero"],
                         value=numpy_helper.from_array(np.zeros((), np.float32))),
        helper.make_node("Where", ["nan", "zero", "p"], [guard_out]),
    ]
    if not guard_is_output:
        nodes.append(helper.make_node("MatMul", ["guarded", "values"], ["out"]))
    width = 4096 if not guard_is_output else KEYS
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, KEYS]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [None, KEYS])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, width])],
        [numpy_helper.from_array(values, "values")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, str(path))


def _run(path: Path, scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out: np.ndarray = session.run(None, {"scores": scores, "mask": mask})[0]
    return out


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    scores = rng.standard_normal((WIDTH, KEYS)).astype(np.float32) * 4
    mask = np.where(rng.random((WIDTH, KEYS)) < 0.4, -np.inf, 0.0).astype(np.float32)
    mask[:, 0] = 0.0  # every row keeps a key, as every text keeps its [CLS]
    return scores, mask


def _ops(path: Path) -> list[str]:
    return [n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node]


def test_dropping_the_guards_keeps_every_output_bit_for_bit(tmp_path: Path) -> None:
    path = tmp_path / GRAPH_NAME
    _attention_like(path)
    scores, mask = _inputs()
    before = _run(path, scores, mask)
    assert drop_nan_guards(path) == 1
    assert _ops(path) == ["Add", "Softmax", "MatMul"]  # the guard's zero went with it
    np.testing.assert_array_equal(_run(path, scores, mask), before)
    assert drop_nan_guards(path) == 0  # nothing left to drop


def test_a_guard_whose_output_is_the_graphs_stays(tmp_path: Path) -> None:
    path = tmp_path / GRAPH_NAME
    _attention_like(path, guard_is_output=True)
    data = path.read_bytes()
    assert drop_nan_guards(path) == 0
    assert path.read_bytes() == data


def _earlier_revision(cache: Path, model_dir: Path) -> Path:
    """A verified revision-1 folder, as the code before left it in the cache."""
    folder = cache / model_key(cache, model_dir)[:32]

    def make(temp: Path) -> None:
        _attention_like(temp / GRAPH_NAME)
        move_weights_out(temp / GRAPH_NAME, WEIGHTS_NAME)

    publish(folder, FILES, make, str(model_dir))
    assert is_verified(folder)
    return folder


def _model_dir(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    return model


@pytest.fixture
def cached(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(cache, model directory, the cache's verified revision-1 folder of that model)."""
    cache, model = tmp_path / "models", _model_dir(tmp_path)
    return cache, model, _earlier_revision(cache, model)


@pytest.mark.timeout(120)
def test_an_earlier_revision_is_revised_without_torch_and_kept(
    cached: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache, model, earlier = cached
    scores, mask = _inputs()
    before = _run(earlier / GRAPH_NAME, scores, mask)
    weights = (earlier / WEIGHTS_NAME).read_bytes()

    def no_export(model_dir: Path, out_dir: Path) -> None:
        raise AssertionError("exported with torch")

    monkeypatch.setattr(onnx_cache, "_export", no_export)
    graph = onnx_file(cache, model)
    assert graph.parent.name == f"{earlier.name}-r{GRAPH_REVISION}"
    assert is_verified(graph.parent) and is_verified(earlier)  # an earlier vaultmem's, kept
    assert "IsNaN" not in _ops(graph) and (graph.parent / WEIGHTS_NAME).read_bytes() == weights
    assert (graph.parent / WEIGHTS_NAME).stat().st_ino == (earlier / WEIGHTS_NAME).stat().st_ino
    np.testing.assert_array_equal(_run(graph, scores, mask), before)
    assert onnx_file(cache, model) == graph  # verified: nothing made again


@pytest.mark.timeout(120)
def test_an_earlier_revision_that_fails_its_check_is_exported_again(
    cached: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache, model, earlier = cached
    with (earlier / WEIGHTS_NAME).open("r+b") as handle:
        handle.write(b"\xff" * 8)
    exported: list[Path] = []

    def export(model_dir: Path, out_dir: Path) -> None:
        exported.append(model_dir)
        raise IndexUnusableError("cannot export in this test")

    monkeypatch.setattr(onnx_cache, "_export", export)
    with pytest.raises(IndexUnusableError):
        onnx_file(cache, model)
    assert exported == [model]
