"""What a chunk size costs to index: chunks and the model's seconds for the same notes.

The notes (every `--every`-th Markdown note of the vault set's vault, by path) are chunked as
the indexer does (`note_chunks`, `embedding_text`) with each size, and each size's texts are
embedded by the real model, uncached, the sizes interleaved `--rounds` times (the machine is
shared: the ratio of the medians is the figure, not one timing).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.chunk_cost [--sizes 1000/200,500/100]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from bench.eval_sets import VOK_VAULT
from vaultmem.config import Settings
from vaultmem.core.chunking import embedding_text, note_chunks
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options
from vaultmem.vault.notes import parse_note


def texts(notes: Sequence[Path], root: Path, max_chars: int, min_chars: int) -> list[str]:
    out = []
    for path in notes:
        note = parse_note(path.relative_to(root).as_posix(), path.read_bytes())
        chunks = note_chunks(note.body, note.title, max_chars=max_chars, min_chars=min_chars)
        out.extend(embedding_text(note.title, chunk) for chunk in chunks)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000/200,500/100",
                        help="chunk_max_chars/chunk_min_chars pairs (the first is the baseline)")
    parser.add_argument("--every", type=int, default=25, help="every n-th note of the vault")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vault", type=Path, default=VOK_VAULT)
    args = parser.parse_args(argv)
    notes = sorted(args.vault.rglob("*.md"))[::args.every]
    sizes = [tuple(int(n) for n in pair.split("/")) for pair in args.sizes.split(",")]
    batches = {size: texts(notes, args.vault, *size) for size in sizes}
    embedder = make_embedder("english", embedder_options(Settings()))
    embedder.embed(["warm up the model"])
    seconds: dict[tuple[int, ...], list[float]] = {size: [] for size in sizes}
    for _ in range(args.rounds):
        for size in sizes:
            started = time.perf_counter()
            embedder.embed(batches[size])
            seconds[size].append(time.perf_counter() - started)
    first = statistics.median(seconds[sizes[0]])
    print(f"{len(notes)} notes of {args.vault}, {embedder.name}, {args.rounds} rounds")
    for size in sizes:
        chars = sum(len(t) for t in batches[size])
        median = statistics.median(seconds[size])
        print(f"  {size[0]}/{size[1]}: {len(batches[size])} chunks ({chars} chars), "
              f"median {median:.1f} s ({', '.join(f'{s:.1f}' for s in seconds[size])}), "
              f"{len(batches[size]) / median:.1f} chunks/s, {median / first:.2f}x the first")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
