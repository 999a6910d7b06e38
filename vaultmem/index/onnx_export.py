"""Export a local sentence-transformers model's transformer to ONNX (fp32): a graph file and
its weights in a file beside it.

Run as a child process (`python -m vaultmem.index.onnx_export MODEL_DIR OUT_DIR`) so that the
daemon asking for it never imports torch itself. The graph takes input_ids, attention_mask and
(if the model uses them) token_type_ids, and returns the last hidden state; pooling and
normalising happen in numpy (onnx_embedder.py), exactly as sentence-transformers does them.

The weights go to their own file, each large tensor at an offset aligned for memory mapping:
ONNX Runtime then maps them instead of reading them onto the heap. The word-embedding table
(47 MB of all-MiniLM-L6-v2's 90) is read a row per token, so only the pages of the words a
vault uses become resident, and they are clean file pages the system may drop and read again;
loaded from one file, the whole table stayed on the heap for good. The vectors are the same
bit for bit, and the session loads in a third of the time (no 90 MB message to parse).

Torch's exporter follows each attention softmax with a guard, `Where(IsNaN(p), 0, p)`, for a
row whose keys are all masked. No row here is: every text has at least its [CLS] and [SEP]
tokens, and the mask hides keys, never a whole row. The guards are removed (GRAPH_REVISION 2):
the same outputs bit for bit, and the model 1.16x as fast on two cores at one text a call
(1.25x at four: they read and write every attention weight twice). `--revise` makes a
revision-2 graph from an earlier one without torch.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

OPSET = 17
#: 1: as torch exported it; 2: without the softmax's NaN guards (see above)
GRAPH_REVISION = 2
GRAPH_NAME = "model.onnx"
WEIGHTS_NAME = "model.weights"
# tensors from this size go to the weights file, at offsets that are multiples of it (64 KiB:
# the largest page or mapping granularity ONNX Runtime meets); smaller ones stay in the graph
WEIGHTS_ALIGN = 64 * 1024


def export(model_dir: Path, out_dir: Path) -> None:
    """Write GRAPH_NAME and WEIGHTS_NAME into `out_dir`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    transformer: Any = model[0].auto_model
    transformer.eval()
    sample = model.tokenizer(["an example", "a longer example text"], padding=True,
                             return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    graph = out_dir / GRAPH_NAME
    with torch.no_grad():
        torch.onnx.export(
            Hidden(), tuple(sample[n] for n in names), str(graph), input_names=names,
            output_names=["hidden"], opset_version=OPSET, dynamo=False,
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
        )
    drop_nan_guards(graph)
    move_weights_out(graph, WEIGHTS_NAME)


def revise(old_dir: Path, out_dir: Path) -> None:
    """A revision-2 graph in `out_dir` from an earlier revision's files in `old_dir`: the
    guards dropped from its graph, its weights file linked (or copied) unchanged."""
    weights = out_dir / WEIGHTS_NAME
    try:
        os.link(old_dir / WEIGHTS_NAME, weights)
    except OSError:  # another file system, or no hard links there
        shutil.copyfile(old_dir / WEIGHTS_NAME, weights)
    shutil.copyfile(old_dir / GRAPH_NAME, out_dir / GRAPH_NAME)
    drop_nan_guards(out_dir / GRAPH_NAME)


def drop_nan_guards(graph: Path) -> int:
    """Remove each `Where(IsNaN(p), 0, p)` after a Softmax from the graph file (its external
    weights untouched), its readers reading `p`; returns how many went."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    nodes = model.graph.node
    made_by = {output: node for node in nodes for output in node.output}
    readers_of: dict[str, str] = {}
    dropped = []
    for node in nodes:
        test = made_by.get(node.input[0]) if node.op_type == "Where" else None
        if test is None or test.op_type != "IsNaN" or test.input[0] != node.input[2]:
            continue
        source = made_by.get(test.input[0])
        if source is None or source.op_type != "Softmax":
            continue
        readers_of[node.output[0]] = node.input[2]
        dropped += [node, test]
    if not dropped or any(output.name in readers_of for output in model.graph.output):
        return 0  # nothing to drop, or a guard's output is the graph's own: left as it is
    for node in dropped:
        nodes.remove(node)
    for node in nodes:
        for n, name in enumerate(node.input):
            node.input[n] = readers_of.get(name, name)
    read = {name for node in nodes for name in node.input}
    read.update(output.name for output in model.graph.output)
    for node in [n for n in nodes if n.op_type == "Constant" and n.output[0] not in read]:
        nodes.remove(node)  # a guard's zero
    onnx.save_model(model, str(graph))
    return len(dropped) // 2


def move_weights_out(graph: Path, weights_name: str) -> int:
    """Move the graph's large tensors to `weights_name` beside it (aligned offsets) and
    rewrite the graph to refer to them; returns how many moved."""
    import onnx
    from onnx.external_data_helper import set_external_data

    model = onnx.load(str(graph))
    moved = offset = 0
    with open(graph.parent / weights_name, "wb") as weights:
        for tensor in model.graph.initializer:
            if not tensor.HasField("raw_data") or len(tensor.raw_data) < WEIGHTS_ALIGN:
                continue
            offset += weights.write(b"\0" * (-offset % WEIGHTS_ALIGN))
            set_external_data(tensor, weights_name, offset=offset,
                              length=len(tensor.raw_data))
            offset += weights.write(tensor.raw_data)
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
            moved += 1
    onnx.save_model(model, str(graph))
    return moved


def main(argv: list[str]) -> int:
    revising = argv[:1] == ["--revise"]
    paths = argv[1:] if revising else argv
    if len(paths) != 2:
        print("usage: python -m vaultmem.index.onnx_export [--revise OLD_DIR | MODEL_DIR] "
              "OUT_DIR", file=sys.stderr)
        return 2
    (revise if revising else export)(Path(paths[0]), Path(paths[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
