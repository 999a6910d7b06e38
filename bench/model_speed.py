"""The models' indexing speed in one process: the English model beside the multilingual one
(and beside other graphs of it; an English model on OpenVINO beside the same on ONNX Runtime),
on the same chunk texts, rounds interleaved.

The texts are those the daemon benchmark's first section indexes (bench/daemon.py: the same
fixed sample of vaultofknowledge notes, chunked as the indexer does); each model embeds them as
the daemon does (the default settings: its intra-op threads, its texts per call, longest
first, on the inference thread). Each round times every model once on the same texts, in turn;
the figure is each model's median chunks/s and the median of the rounds' ratios to the English
model (a drift of the machine's load falls on every model of a round alike).

`--folder DIR` adds a multilingual graph made elsewhere, e.g. the model cache's folder that an
older code made (`<user data dir>/models/e5-...`), so an old graph and the new one are timed
in the same run. `--profile N` also times N texts per model with ONNX Runtime's profiler on
and prints where each model's time goes, by operator type.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.model_speed [--notes 300] [--every 3]
        [--rounds 3] [--folder DIR ...] [--profile 60]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.chunk_cost import texts as chunk_texts
from bench.eval_sets import VOK_VAULT
from bench.support import load_average
from vaultmem.config import Settings
from vaultmem.index import multilingual
from vaultmem.index.base import Embedder
from vaultmem.index.embedders import make_embedder
from vaultmem.index.onnx_embedder import OnnxEmbedder
from vaultmem.settings_params import embedder_options
from vaultmem_testing.bench_vault import note_files


def say(text: str = "") -> None:
    print(text, flush=True)


def corpus_texts(notes: int, every: int, settings: Settings) -> list[str]:
    """The chunk texts of the daemon benchmark's corpus sample (copy_notes' seed and order),
    every `every`-th one."""
    files = note_files(VOK_VAULT)
    chosen = sorted(files[i] for i in np.random.default_rng(7).permutation(len(files))[:notes])
    return chunk_texts([VOK_VAULT / rel for rel in chosen], VOK_VAULT,
                       settings.chunk_max_chars, settings.chunk_min_chars)[::every]


def models(folders: Sequence[Path], settings: Settings) -> dict[str, Embedder]:
    options = embedder_options(settings)
    out = {"english": make_embedder("english", options)}
    if getattr(out["english"], "runtime", "") != "onnx":  # OpenVINO: ONNX Runtime beside it
        out["english on onnxruntime"] = make_embedder("english", replace(options, runtime="onnx"))
    out["multilingual"] = make_embedder("multilingual", options)
    for folder in folders:
        files = multilingual.model_files(options.cache)
        inner = OnnxEmbedder(multilingual.MULTILINGUAL_NAME, files, options.cache,
                             threads=options.threads, batch_size=options.batch_size or 1,
                             derived=lambda folder=folder: folder)
        out[f"multilingual {folder.name}"] = make_prompted(inner)
    return out


def make_prompted(inner: OnnxEmbedder) -> Embedder:
    from vaultmem.index.embedders import PromptedEmbedder

    return PromptedEmbedder(inner, multilingual.QUERY_PROMPT, multilingual.PASSAGE_PROMPT)


def onnx_of(embedder: Embedder) -> OnnxEmbedder:
    inner = getattr(embedder, "inner", embedder)
    assert isinstance(inner, OnnxEmbedder), type(inner)
    return inner


def interleaved(embedders: dict[str, Embedder], texts: list[str],
                rounds: int) -> dict[str, list[float]]:
    """Each round: every model embeds `texts` once, in turn; seconds per round per model."""
    seconds: dict[str, list[float]] = {name: [] for name in embedders}
    for index in range(rounds):
        order = list(embedders) if index % 2 == 0 else list(reversed(embedders))
        for name in order:
            started = time.perf_counter()
            embedders[name].embed(texts)
            seconds[name].append(time.perf_counter() - started)
        say(f"  round {index + 1}: " + ", ".join(
            f"{name} {len(texts) / seconds[name][-1]:.1f}/s" for name in embedders)
            + f"   [load {load_average()}]")
    return seconds


def profile(embedder: Embedder, texts: list[str],
            prefix: Path) -> tuple[float, collections.Counter[str]]:
    """Seconds in each operator type over `texts` (one text per call), by ONNX Runtime's
    profiler on a session of the model's own graph and settings."""
    import onnxruntime as ort

    inner = onnx_of(embedder)
    session = inner._session
    options = ort.SessionOptions()
    options.intra_op_num_threads = inner._threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    options.enable_profiling = True
    options.profile_file_prefix = str(prefix)
    graph = session._model_path
    profiled = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    passage = getattr(embedder, "passage_prompt", "")
    feeds = [inner._feed([passage + text]) for text in texts]
    started = time.perf_counter()
    for feed in feeds:
        profiled.run(None, {k: v for k, v in feed.items()
                            if k in {i.name for i in profiled.get_inputs()}})
    wall = time.perf_counter() - started
    events = json.loads(Path(profiled.end_profiling()).read_text(encoding="utf-8"))
    by_op: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"] / 1e6
    return wall, by_op



def say_spent(spent: collections.Counter[str], top: int = 8) -> None:
    """The `top` largest parts of a profile (seconds each), with their share of the whole."""
    total = sum(spent.values()) or 1.0
    for what, seconds in spent.most_common(top):
        say(f"    {what:26s} {seconds:6.3f} s {100 * seconds / total:5.1f} %")


def tokens(embedder: Embedder, texts: list[str]) -> int:
    inner = onnx_of(embedder)
    passage = getattr(embedder, "passage_prompt", "")
    return sum(int(inner._feed([passage + text])["attention_mask"].sum()) for text in texts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=300, help="corpus notes (the daemon "
                        "benchmark's sample: 300)")
    parser.add_argument("--every", type=int, default=3, help="every n-th of their chunks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--folder", type=Path, action="append", default=[],
                        help="another multilingual graph's folder to time beside")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile N texts per model by operator type")
    parser.add_argument("--profile-dir", type=Path, default=Path("/tmp"))
    args = parser.parse_args(argv)
    settings = Settings()
    texts = corpus_texts(args.notes, args.every, settings)
    embedders = models(args.folder, settings)
    say(f"{len(texts)} chunk texts ({sum(map(len, texts)) / len(texts):.0f} chars on average), "
        f"{settings.embedding_threads} threads, {settings.embedding_batch_size} per call; "
        f"load {load_average()}")
    for name, embedder in embedders.items():
        embedder.embed(texts[:5])  # loaded, warm
        say(f"  {name}: {tokens(embedder, texts) / len(texts):.0f} tokens per text")
    seconds = interleaved(embedders, texts, args.rounds)
    english = seconds["english"]
    say(f"\nmedians over {args.rounds} rounds ({len(texts)} texts each):")
    for name, times in seconds.items():
        ratios = [e / t for e, t in zip(english, times, strict=True)]
        say(f"  {name:40s} {len(texts) / statistics.median(times):6.1f} chunks/s   "
            f"x English {statistics.median(ratios):.2f} (rounds {min(ratios):.2f}-"
            f"{max(ratios):.2f})")
    if args.profile:
        sample = texts[:: max(1, len(texts) // args.profile)][: args.profile]
        say(f"\nby operator type, {len(sample)} texts one at a time (ONNX Runtime's profiler):")
        for name, embedder in embedders.items():
            if getattr(embedder, "runtime", "") != "onnx":
                continue  # OpenVINO has no such profiler
            wall, by_op = profile(embedder, sample, args.profile_dir / "model_speed")
            total = sum(by_op.values())
            say(f"  {name}: {wall:.2f} s wall, {total:.2f} s in kernels")
            say_spent(by_op)
    say(f"\nload at the end {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
