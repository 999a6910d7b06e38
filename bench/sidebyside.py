"""Indexing throughput of the ONNX runtime: one model call at a time with two intra-op threads
(the code before) against two one-thread calls side by side (`OnnxEmbedder(side_by_side=…)`).

Run: .venv/bin/python -m bench.sidebyside [--model english|multilingual] [--chunks 240]
     [--rounds 4]

Each round embeds the same chunk texts (what the indexer makes of a fixed sample of
vaultofknowledge notes) once per variant, each in a fresh process (the inference threads are
per process), alternating which goes first. Per variant: wall seconds, chunks per second and
CPU seconds per chunk (the figure a machine busy with other work disturbs least), medians
over the rounds, and the paired ratio (side by side / before) of each round; and whether the
vectors are the same (max abs difference).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.support import load_average, machine_lines, now_utc
from vaultmem_testing.daemon import REPO

CORPUS = REPO.parent / "shared" / "corpora" / "vaultofknowledge"


def chunk_texts(count: int) -> list[str]:
    from vaultmem.core.chunking import embedding_text, note_chunks
    from vaultmem.vault.notes import parse_note

    texts: list[str] = []
    for path in sorted(CORPUS.rglob("*.md"))[::7]:
        note = parse_note(path.name, path.read_bytes())
        for chunk in note_chunks(note.body, note.title, max_chars=1500, min_chars=200):
            texts.append(embedding_text(note.title, chunk))
            if len(texts) == count:
                return texts
    return texts


def child(model: str, side_by_side: bool, count: int, out: Path) -> None:
    from vaultmem.config import Settings
    from vaultmem.index.embedders import make_embedder
    from vaultmem.settings_params import embedder_options

    embedder = make_embedder(model, embedder_options(Settings()))
    inner = getattr(embedder, "inner", embedder)
    inner._side_by_side = side_by_side  # before it loads
    _ = embedder.dim
    texts = chunk_texts(count)
    cpu0 = _cpu()
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    wall = time.perf_counter() - start
    cpu = _cpu() - cpu0
    np.save(out, vectors)
    print(json.dumps({"wall": wall, "cpu": cpu, "chunks": len(texts)}))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(model: str, side_by_side: bool, count: int, out: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-m", "bench.sidebyside", "--child", model,
         "1" if side_by_side else "0", str(count), str(out)],
        cwd=REPO, capture_output=True, text=True, check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false"})
    data: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), Path(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="english")
    parser.add_argument("--chunks", type=int, default=240)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print(f"ONNX side by side, {now_utc():%Y-%m-%d %H:%M} UTC; model {args.model}, "
          f"{args.chunks} chunks, {args.rounds} rounds")
    print(*machine_lines(), sep="\n", flush=True)
    names = {False: "one 2-thread call", True: "two 1-thread calls"}
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    diff = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            order = [False, True] if i % 2 == 0 else [True, False]
            for variant in order:
                one = run(args.model, variant, args.chunks, Path(tmp) / f"{variant}.npy")
                results[variant].append(one)
                print(f"  round {i + 1} {names[variant]}: {one['chunks'] / one['wall']:.1f} "
                      f"chunks/s, {one['cpu'] / one['chunks'] * 1000:.1f} CPU ms/chunk; "
                      f"load {load_average()}", flush=True)
            a, b = np.load(Path(tmp) / "False.npy"), np.load(Path(tmp) / "True.npy")
            diff = max(diff, float(np.abs(a - b).max()))
    for variant, rounds in results.items():
        rate = statistics.median(r["chunks"] / r["wall"] for r in rounds)
        cpu = statistics.median(r["cpu"] / r["chunks"] * 1000 for r in rounds)
        print(f"{names[variant]:>20}: median {rate:.1f} chunks/s, {cpu:.1f} CPU ms per chunk")
    ratios = [b["wall"] / a["wall"] for a, b in zip(results[False], results[True], strict=True)]
    cpu_ratios = [(b["cpu"] / b["chunks"]) / (a["cpu"] / a["chunks"])
                  for a, b in zip(results[False], results[True], strict=True)]
    print(f"paired wall-time ratio (side by side / before): median "
          f"{statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}); "
          f"CPU per chunk ratio {statistics.median(cpu_ratios):.2f}")
    print(f"vectors: max abs difference {diff:.2e}")


if __name__ == "__main__":
    main()
