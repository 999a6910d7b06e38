"""int8 dynamic quantisation of the English model's ONNX graph, measured against fp32.

`python -m bench.quantise [--chunks 500] [--speed-chunks 160] [--rounds 3]`

The fp32 graph is the one the daemon uses (made locally by onnx_cache.py from the installed
all-MiniLM-L6-v2); each variant is made from it here with onnxruntime.quantization's
`quantize_dynamic` into --out. For every variant, on the chunk texts vaultmem makes of a fixed
sample of vaultofknowledge notes:
1. agreement with fp32: per-chunk cosine (min, 1st percentile, median) over --chunks chunks;
2. throughput in chunks/s beside fp32 in the same run: the daemon's way (one text per model
   call, longest first, 2 intra-op threads, no spinning), --rounds rounds, the variants
   interleaved in each round, medians reported (the machine is shared and noisy).
The rankings these vectors give were measured with scripts/eval: docs/benchmarks.md, "int8
quantisation of the English model" (not kept: the figures moved beyond 0.3 points).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from bench.eval_sets import VOK_VAULT

CORPUS = VOK_VAULT


def say(text: str = "") -> None:
    print(text, flush=True)


def corpus_texts(limit: int) -> list[str]:
    """The texts vaultmem embeds for a fixed random sample of corpus notes, `limit` of them."""
    import random

    from vaultmem.core.chunking import chunk_markdown, embedding_text
    from vaultmem.vault.notes import read_note
    from vaultmem_testing.bench_vault import note_files

    files = note_files(CORPUS)
    random.Random(7).shuffle(files)
    texts: list[str] = []
    for path in files:
        try:
            note = read_note(CORPUS, path)
        except Exception:  # an unreadable note is skipped, as the indexer does
            continue
        texts += [embedding_text(note.title, chunk) for chunk in chunk_markdown(note.body)]
        if len(texts) >= limit:
            return texts[:limit]
    return texts


def variants(fp32: Path, out: Path) -> dict[str, Path]:
    """The quantised graphs, each made once into `out` (a graph with its weights inside)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    names = [n.name for n in onnx.load(str(fp32), load_external_data=False).graph.node
             if n.op_type == "MatMul"]
    last = sorted({n.split("/")[3] for n in names if "/layer." in n})[-1:]  # e.g. layer.5
    last_layer = [n for n in names if any(f"/{x}/" in n for x in last)]
    ffn_out = [n for n in names if "/output/dense/" in n and "attention" not in n]
    recipes: dict[str, dict[str, Any]] = {
        "int8-default": {},  # the settings of the earlier measurement
        "int8-matmul-pc": {"op_types_to_quantize": ["MatMul"], "per_channel": True},
        "int8-matmul-pc-nolast": {"op_types_to_quantize": ["MatMul"], "per_channel": True,
                                  "nodes_to_exclude": last_layer},
        "int8-matmul-pc-noffnout": {"op_types_to_quantize": ["MatMul"], "per_channel": True,
                                    "nodes_to_exclude": ffn_out},
    }
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, recipe in recipes.items():
        path = out / f"{name}.onnx"
        if not path.exists():
            quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8,
                             reduce_range=False, **recipe)
        made[name] = path
        say(f"{name}: {path.stat().st_size / 1e6:.1f} MB, excluded "
            f"{len(recipe.get('nodes_to_exclude', []))} nodes")
    return made


class Runner:
    """One ONNX session run the daemon's way: its tokenizer, one text per call, its pooling."""

    def __init__(self, path: Path, files: Any, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from vaultmem.index.onnx_embedder import _tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = _tokenizer(Tokenizer, files)
        self.files = files

    def embed(self, texts: list[str]) -> np.ndarray:
        from vaultmem.index.onnx_embedder import _pool

        rows = []
        for text in texts:
            encoded = self.tokenizer.encode_batch([text])
            feed = {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in encoded],
                                               dtype=np.int64)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
            hidden = self.session.run(None, feed)[0]
            rows.append(_pool(hidden, feed["attention_mask"], self.files)[0])
        return np.stack(rows)


def timed(embed: Callable[[list[str]], np.ndarray], texts: list[str]) -> float:
    start = time.perf_counter()
    embed(texts)
    return len(texts) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=500, help="chunks for the agreement")
    parser.add_argument("--speed-chunks", type=int, default=160,
                        help="chunks embedded per variant and round for the throughput")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench-out/quantise"))
    parser.add_argument("--variant", action="append",
                        help="measure only these variants beside fp32 (default: all)")
    args = parser.parse_args(argv)

    from vaultmem.config import Settings
    from vaultmem.index.embedders import _model_source
    from vaultmem.index.model_files import read_model_files
    from vaultmem.index.onnx_cache import onnx_file
    from vaultmem.settings_params import embedder_options

    settings = replace(Settings(), embedding_runtime="onnx")
    files = read_model_files(Path(_model_source(None)))
    fp32 = onnx_file(embedder_options(settings).cache, files.path)
    say(f"fp32 graph: {fp32}")
    made = variants(fp32, args.out)
    graphs = {"fp32": fp32, **{name: path for name, path in made.items()
                               if not args.variant or name in args.variant}}
    runners = {name: Runner(path, files, args.threads) for name, path in graphs.items()}

    texts = sorted(corpus_texts(args.chunks), key=len, reverse=True)
    say(f"\n1. agreement with fp32 over {len(texts)} chunks (cosine per chunk)")
    reference = runners["fp32"].embed(texts)
    for name, runner in runners.items():
        if name == "fp32":
            continue
        cosine = np.sum(runner.embed(texts) * reference, axis=1)
        say(f"  {name:<24} min {cosine.min():.4f}  p1 {np.percentile(cosine, 1):.4f}  "
            f"median {np.median(cosine):.4f}")

    step = max(1, len(texts) // args.speed_chunks)
    sample = sorted(texts[::step][:args.speed_chunks], key=len, reverse=True)
    say(f"\n2. throughput, {len(sample)} chunks, one text a call, {args.threads} threads, "
        f"{args.rounds} interleaved rounds")
    speeds: dict[str, list[float]] = {name: [] for name in runners}
    for number in range(args.rounds):
        order = list(runners) if number % 2 == 0 else list(reversed(runners))
        for name in order:
            speeds[name].append(timed(runners[name].embed, sample))
    base = statistics.median(speeds["fp32"])
    for name, values in speeds.items():
        mid = statistics.median(values)
        say(f"  {name:<24} {mid:6.1f} chunks/s ({mid / base:.2f}x fp32; rounds "
            f"{', '.join(f'{v:.1f}' for v in values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
