"""multilingual-e5-small as an ONNX graph, built here from the packed 4-bit weights (e5_file.py).

The weights stay 4-bit: every matrix is a `MatMulNBits` (ONNX Runtime's block-quantised matmul:
blocks of 32 weights, one fp32 scale each, zero point 8, which is exactly the file's Q4_0) and
the word-embedding table a `GatherBlockQuantized`. With `accuracy_level` 4 ONNX Runtime
multiplies int8 activations by the 4-bit weights, the arithmetic of the package's own engine:
the vectors match it to a cosine of 0.9999 or better (tests/index/test_multilingual.py), at the
speed of ONNX Runtime's kernels. The rest is a BERT encoder (XLM-RoBERTa's positions start
at the table's first row here: the file keeps the rows a text uses), returning the last hidden
state; pooling (mean) and normalising happen in numpy, as for every model (onnx_embedder.py).

Each layer's query, key and value projections are one MatMulNBits and its attention one
`MultiHeadAttention` (ONNX Runtime's contrib operators; its session fuses neither in a graph
written by hand): the same values bit for bit as separate matmuls and a plain attention
(scores, mask, softmax), at less cost (docs/benchmarks.md). The residual adds and layer norms
stay plain: SkipLayerNormalization sums in another order, and the int8 rounding of the next
matmul's input turns that into a change of the vectors (a cosine of 0.99996 to the plain ones).
GRAPH_VERSION names this layout: the model cache keeps a graph under it, so a changed builder
makes its graph anew (multilingual.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vaultmem.index.e5_file import BLOCK, E5File
from vaultmem.index.onnx_export import GRAPH_NAME, OPSET, WEIGHTS_NAME, move_weights_out

ACCURACY_LEVEL = 4  # int8 activations x 4-bit weights, as the package's engine computes
#: The graph's layout; 2: one MatMulNBits for Q, K and V, MultiHeadAttention (1: plain ops).
GRAPH_VERSION = 2
MS = "com.microsoft"


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def weight(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], domain=domain or None,
                                           **attrs))
        return out


def build_graph(model: E5File, out_dir: Path) -> Path:
    """Write GRAPH_NAME and WEIGHTS_NAME (aligned, memory-mapped at load) into `out_dir`."""
    import onnx
    from onnx import TensorProto, helper

    b = _Builder()
    hidden = _embeddings(b, model)
    mask = _key_mask(b)
    for layer in range(model.layers):
        hidden = _layer(b, model, layer, hidden, mask)
    b.nodes[-1].output[0] = "last_hidden_state"
    graph = helper.make_graph(
        b.nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "tokens", model.hidden])],
        b.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid(MS, 1)])
    proto.ir_version = 9
    path = out_dir / GRAPH_NAME
    onnx.save_model(proto, str(path))
    move_weights_out(path, WEIGHTS_NAME)
    return path


def _embeddings(b: _Builder, model: E5File) -> str:
    h = model.hidden
    scales, values = model.q4("emb.word", model.vocab_rows, h)
    words = b.op("GatherBlockQuantized", [
        b.weight("word_values", _pack(values).reshape(model.vocab_rows, h // 2)),
        "input_ids",
        b.weight("word_scales", scales),
        b.weight("word_zero", np.full((model.vocab_rows, (h // BLOCK + 1) // 2), 0x88, np.uint8)),
    ], MS, bits=4, block_size=BLOCK, gather_axis=0, quantize_axis=1)
    tokens = b.op("Shape", ["input_ids"], start=1, end=2)
    zero = b.weight("zero", np.array([0], np.int64))
    positions = b.op("Slice", [b.weight("positions", model.vector(
        "emb.pos", (model.max_positions, h))), zero, tokens, zero])
    summed = b.op("Add", [b.op("Add", [words, positions]),
                          b.weight("token_type", model.vector("emb.type", (2, h))[0])])
    return _norm(b, model, summed, "emb.ln")


def _key_mask(b: _Builder) -> str:
    """The attention mask as MultiHeadAttention reads it: [batch, tokens], int32 (its padded
    keys get -10000 added to their scores, as before the softmax of the plain graph)."""
    from onnx import TensorProto

    return b.op("Cast", ["attention_mask"], to=TensorProto.INT32)


def _layer(b: _Builder, model: E5File, layer: int, x: str, mask: str) -> str:
    h, heads = model.hidden, model.heads
    queries, keys, values = _qkv(b, model, layer, x)
    context = b.op("MultiHeadAttention", [queries, keys, values, "", mask], MS, num_heads=heads,
                   mask_filter_value=-1e4)
    attended = _linear(b, model, f"l{layer}.ao", context, h, h)
    x = _norm(b, model, b.op("Add", [x, attended]), f"l{layer}.aln")
    inner = b.op("Gelu", [_linear(b, model, f"l{layer}.fi", x, h, model.ffn)], MS)
    out = _linear(b, model, f"l{layer}.fo", inner, model.ffn, h)
    return _norm(b, model, b.op("Add", [x, out]), f"l{layer}.oln")


def _qkv(b: _Builder, model: E5File, layer: int, x: str) -> list[str]:
    """The query, key and value projections as one MatMulNBits (N = 3 x hidden: the input's
    int8 form made once, not three times), split after. Each output row is the same dot
    product as in three matmuls, so the values are the same bit for bit."""
    from onnx import helper

    h = model.hidden
    parts = [model.q4(f"l{layer}.{name}.w", h, h) for name in "qkv"]
    scales = np.concatenate([scale for scale, _ in parts])
    values = np.concatenate([value for _, value in parts])
    bias = np.concatenate([model.vector(f"l{layer}.{name}.b", (h,)) for name in "qkv"])
    name = f"l{layer}.qkv"
    joined = _matmul(b, name, x, scales, values, bias)
    outputs = [f"{name}_{part}" for part in "qkv"]
    b.nodes.append(helper.make_node(
        "Split", [joined, b.weight(f"{name}.split", np.array([h, h, h], np.int64))], outputs,
        axis=-1))
    return outputs


def _linear(b: _Builder, model: E5File, name: str, x: str, n_in: int, n_out: int) -> str:
    scales, values = model.q4(f"{name}.w", n_out, n_in)
    return _matmul(b, name, x, scales, values, model.vector(f"{name}.b", (n_out,)))


def _matmul(b: _Builder, name: str, x: str, scales: np.ndarray, values: np.ndarray,
            bias: np.ndarray) -> str:
    """x @ W.T + bias, W's rows in Q4_0 blocks (`scales` [rows, blocks], `values` [rows,
    blocks, 32]), as one MatMulNBits."""
    n_out, blocks = scales.shape
    return b.op("MatMulNBits", [
        x, b.weight(f"{name}.w", _pack(values)), b.weight(f"{name}.s", scales.reshape(-1)),
        "", "", b.weight(f"{name}.b", bias),
    ], MS, K=blocks * BLOCK, N=n_out, bits=4, block_size=BLOCK, accuracy_level=ACCURACY_LEVEL)


def _norm(b: _Builder, model: E5File, x: str, name: str) -> str:
    h = model.hidden
    return b.op("LayerNormalization", [x, b.weight(f"{name}.w", model.vector(f"{name}.w", (h,))),
                                       b.weight(f"{name}.b", model.vector(f"{name}.b", (h,)))],
                axis=-1, epsilon=model.eps)


def _pack(values: np.ndarray) -> np.ndarray:
    """Weights in order, two to a byte as ONNX Runtime packs them: even index in the low
    nibble, odd index in the high one."""
    packed: np.ndarray = values[..., 0::2] | (values[..., 1::2] << 4)
    return packed
