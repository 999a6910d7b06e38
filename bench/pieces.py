"""vaultmem model-call size benchmark: what embedding a large note N chunks per call costs.

A large note is embedded in pieces of a few chunks (pipeline/slices.py, LARGE_PIECE_CHUNKS) so
that an edit waits for one short model call; this measures the large note's own throughput
for 1, 2, 4 and 8 chunks per call, sizes interleaved (each round in a rotated order) so that
the machine's load hits them alike. The texts: `--chunks` chunks of `scripts/bench bignote`'s
large note, across its length range, longest first; the configured model and runtime.

    .venv/bin/python -m bench.pieces [--chunks 24] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.bignote import big_note_text
from bench.support import load_average, machine_lines, now_utc
from vaultmem.config import Settings
from vaultmem.core.chunking import chunk_markdown, embedding_text
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options

SIZES = (1, 2, 4, 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    settings = Settings()
    model = "english" if settings.embedding_model == "auto" else settings.embedding_model
    embedder = make_embedder(model, embedder_options(settings))  # auto: the vault chooses
    embedder.embed_query("warm up")
    chunks = chunk_markdown(big_note_text(0.05, "end"), max_chars=settings.chunk_max_chars,
                            min_chars=settings.chunk_min_chars)
    texts = sorted((embedding_text("Large pasted transcript", c) for c in chunks),
                   key=len, reverse=True)
    texts = texts[:: max(1, len(texts) // args.chunks)][: args.chunks]
    print(f"vaultmem model-call size benchmark, {now_utc():%Y-%m-%d %H:%M} UTC")
    print(*machine_lines(), sep="\n")
    print(f"{len(texts)} chunks, {args.rounds} rounds, runtime "
          f"{getattr(embedder, 'runtime', '?')}", flush=True)
    seconds: dict[int, list[float]] = {size: [] for size in SIZES}
    for n in range(args.rounds):
        for size in SIZES[n % len(SIZES):] + SIZES[: n % len(SIZES)]:
            started = time.perf_counter()
            for start in range(0, len(texts), size):
                embedder.embed(texts[start : start + size])
            seconds[size].append(time.perf_counter() - started)
    base = statistics.median(seconds[max(SIZES)])
    print(f"seconds for {len(texts)} chunks, median of {args.rounds} "
          f"(load average {load_average()}):")
    for size, values in seconds.items():
        median = statistics.median(values)
        print(f"  {size} chunks per call: {median:6.2f} s  ({median / base:.2f}x of "
              f"{max(SIZES)} per call; rounds {' '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
