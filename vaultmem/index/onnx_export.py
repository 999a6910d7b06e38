"""Export a local sentence-transformers model's transformer to an ONNX file (fp32).

Run as a child process (`python -m vaultmem.index.onnx_export MODEL_DIR OUT_FILE`) so that the
daemon asking for it never imports torch itself. The graph takes input_ids, attention_mask and
(if the model uses them) token_type_ids, and returns the last hidden state; pooling and
normalising happen in numpy (onnx_embedder.py), exactly as sentence-transformers does them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

OPSET = 17


def export(model_dir: Path, out_file: Path) -> None:
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

    with torch.no_grad():
        torch.onnx.export(
            Hidden(), tuple(sample[n] for n in names), str(out_file), input_names=names,
            output_names=["hidden"], opset_version=OPSET, dynamo=False,
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
        )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m vaultmem.index.onnx_export MODEL_DIR OUT_FILE", file=sys.stderr)
        return 2
    export(Path(argv[0]), Path(argv[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
