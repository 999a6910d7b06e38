"""The int8 form of a local model's ONNX graph (`embedding_precision = int8`), made here from
the fp32 export (onnx_cache.py), never downloaded.

Dynamic quantisation (ONNX Runtime's `quantize_dynamic`) of the MatMul weights, int8 per
output channel, full range (this recipe, `RECIPE`): each weight matrix's columns get their own
scale, activations are quantised per call. Kept fp32: the word-embedding table, LayerNorm, the
attention's products of activations, and each layer's feed-forward output matrix. On
all-MiniLM-L6-v2, over 500 vault chunks (bench/quantise.py, docs/benchmarks.md): cosine to
fp32 min 0.9945, median 0.998, 1.41x the chunks/s on 2 cores; with the feed-forward outputs
int8 too, 2.0x but min 0.987, and the evaluation moved by up to a point; ONNX Runtime's
default settings (every op, one scale per tensor) fell to 0.75 on some chunks.

The vectors differ from fp32's, so the embedder's name says int8 (the index records the name:
switching precision rebuilds it). The files sit beside the fp32 ones, under
`<content hash>-<RECIPE>/`, checked against their manifest like them. They are made in a child
process (`python -m vaultmem.index.onnx_quantise FP32_GRAPH OUT_DIR`): the quantiser loads the
whole model and its tools, which the daemon should not keep.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vaultmem.errors import IndexUnusableError
from vaultmem.index.onnx_cache import FILES, onnx_file, verified_folder
from vaultmem.index.onnx_export import GRAPH_NAME, WEIGHTS_NAME, move_weights_out

PRECISIONS = ("fp32", "int8")
#: The folder suffix of this recipe's files: a new recipe gets a new name, never old files.
RECIPE = "int8-pc-ffn32"
#: Appended to the model's name when it runs int8 (the index identity: a new recipe, new name).
NAME_SUFFIX = f" ({RECIPE})"


def int8_file(cache: Path, model_dir: Path) -> Path:
    """The verified int8 graph of `model_dir` (weights beside it), made first if missing or
    corrupt, from the fp32 export (made first too if need be)."""
    fp32 = onnx_file(cache, model_dir)
    folder = fp32.parent.with_name(f"{fp32.parent.name}-{RECIPE}")
    return verified_folder(folder, FILES, lambda temp: _quantise_aside(fp32, temp),
                           str(fp32)) / GRAPH_NAME


def quantise(fp32: Path, out_dir: Path) -> None:
    """Write the int8 GRAPH_NAME and WEIGHTS_NAME of the graph `fp32` into `out_dir`."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = out_dir / GRAPH_NAME
    nodes = onnx.load(str(fp32), load_external_data=False).graph.node
    kept = [n.name for n in nodes if n.op_type == "MatMul" and _feed_forward_output(n.name)]
    quantize_dynamic(str(fp32), str(graph), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=False, op_types_to_quantize=["MatMul"],
                     nodes_to_exclude=kept, extra_options={"MatMulConstBOnly": True})
    move_weights_out(graph, WEIGHTS_NAME)


def _feed_forward_output(node: str) -> bool:
    """A layer's feed-forward output matrix (BERT's `layer.N/output/dense`), kept fp32: its
    inputs (after GELU) have the widest range, and int8 there cost the most agreement."""
    return "/output/dense/" in node and "/attention/" not in node


def _quantise_aside(fp32: Path, out_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vaultmem.index.onnx_quantise", str(fp32), str(out_dir)],
        capture_output=True, text=True, env=dict(os.environ), check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise IndexUnusableError(f"cannot make the int8 form of {fp32}: {tail}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m vaultmem.index.onnx_quantise FP32_GRAPH OUT_DIR",
              file=sys.stderr)
        return 2
    quantise(Path(argv[0]), Path(argv[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
