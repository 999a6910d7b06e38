"""Two ONNX graphs of the English model side by side: the same outputs, and the speed.

The graph the daemon loads (its cached revision, onnx_export.GRAPH_REVISION) against another
graph of the same model, by default the cache's revision-1 folder (the graph as torch exported
it, `<hash>` beside `<hash>-r2`) if it is there; each with the daemon's session settings
(intra-op threads, no spinning), on the daemon benchmark's chunk texts in calls of
`embedding_batch_size` texts, longest first, rounds interleaved. It prints whether the two give
the same pooled vectors bit for bit (else the smallest cosine), each graph's median chunks/s
and the median of the rounds' ratios; `--profile` adds where each graph's time goes: the dense
matmuls (the model's fixed fp32 arithmetic), the attention's core, the rest.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.graph_speed [--baseline-graph FILE]
        [--rounds 6] [--profile]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.model_speed import corpus_texts, onnx_of, say, say_spent
from bench.support import load_average
from vaultmem.config import Settings
from vaultmem.index.embedders import make_embedder
from vaultmem.index.onnx_cache import graph_folders, onnx_file
from vaultmem.settings_params import embedder_options

DENSE = ("query/", "key/", "value/", "output/dense", "intermediate/dense")


def session(graph: Path, threads: int, profile_prefix: Path | None = None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def pooled(run: Any, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:
    out = []
    for feed in feeds:
        hidden = run.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        vectors = (hidden * mask).sum(1) / mask.sum(1)
        out.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return np.concatenate(out)


def part(node: str, op: str) -> str:
    if op == "MatMul" and any(f"/{name}" in node for name in DENSE):
        return "dense matmuls"
    if "attention/self/" in node:
        return "attention core"
    return f"other: {op}"


def profile(graph: Path, threads: int, feeds: list[dict[str, np.ndarray]],
            prefix: Path) -> collections.Counter[str]:
    """Kernel seconds by part (see `part`) over `feeds`, by ONNX Runtime's profiler."""
    profiled = session(graph, threads, prefix)
    for feed in feeds:
        profiled.run(None, feed)
    events = json.loads(Path(profiled.end_profiling()).read_text(encoding="utf-8"))
    spent: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[part(event["name"], event["args"]["op_name"])] += event["dur"] / 1e6
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline-graph", type=Path, help="default: the cache's revision 1")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profile-dir", type=Path, default=Path("/tmp"))
    args = parser.parse_args(argv)
    settings = Settings()
    options = embedder_options(settings)
    inner = onnx_of(make_embedder("english", replace(options, runtime="onnx")))
    current = onnx_file(options.cache, inner._files.path)
    baseline = args.baseline_graph or graph_folders(
        options.cache, inner._files.path)[1] / current.name
    if not baseline.is_file():
        raise SystemExit(f"no baseline graph at {baseline} (--baseline-graph FILE)")
    inner.load()
    texts = sorted(corpus_texts(args.notes, args.every, settings), key=len, reverse=True)
    size, threads = settings.embedding_batch_size or 1, settings.embedding_threads
    feeds = [inner._feed(texts[n:n + size]) for n in range(0, len(texts), size)]
    feeds = [{k: v for k, v in feed.items() if k in set(inner._inputs)} for feed in feeds]
    graphs = {"baseline": session(baseline, threads), "current": session(current, threads)}
    say(f"baseline {baseline}\ncurrent  {current}\n{len(texts)} chunk texts, {size} per call, "
        f"{threads} threads; load {load_average()}")
    a, b = (pooled(graphs[name], feeds) for name in ("baseline", "current"))
    same = np.array_equal(a, b)
    say("the same vectors bit for bit" if same else
        f"vectors differ: smallest cosine {float((a * b).sum(1).min()):.7f}")
    seconds: dict[str, list[float]] = {name: [] for name in graphs}
    for index in range(args.rounds):
        for name in list(graphs) if index % 2 == 0 else list(reversed(graphs)):
            started = time.perf_counter()
            for feed in feeds:
                graphs[name].run(None, feed)
            seconds[name].append(time.perf_counter() - started)
        say(f"  round {index + 1}: " + ", ".join(
            f"{name} {len(texts) / s[-1]:.1f}/s" for name, s in seconds.items())
            + f"   [load {load_average()}]")
    ratios = [old / new for old, new in zip(seconds["baseline"], seconds["current"],
                                            strict=True)]
    for name, times in seconds.items():
        say(f"{name:9s} {len(texts) / statistics.median(times):6.1f} chunks/s (median)")
    say(f"current / baseline: {statistics.median(ratios):.3f} "
        f"(rounds {min(ratios):.3f}-{max(ratios):.3f})")
    if args.profile:
        for name, graph in (("baseline", baseline), ("current", current)):
            spent = profile(graph, threads, feeds, args.profile_dir / f"graph_speed_{name}")
            say(f"{name}: {sum(spent.values()):.2f} s in kernels")
            say_spent(spent)
    say(f"load at the end {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
