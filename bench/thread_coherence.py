"""Whether a folder's name order carries meaning, read from its notes' vectors.

    python -m bench.thread_coherence [--languages en,ru,zh]

The thread rule (core/relevance.py) lets a short note lend its score to its neighbours in name
order in any folder of mostly short notes: right for a conversation's turns, wrong for a folder
of reference pages listed alphabetically (tldr's `common/`, where it costs nDCG@5). This asks
whether the vectors could tell the two apart: for every folder that reads as a thread, the
mean cosine of neighbours in name order (`adj`) against that of notes half the folder apart
(`far`) and of all pairs (`all`), and the neighbours' share of the way from `all` to 1
(`ratio`). A conversation should stand out; each set is indexed as `scripts/eval` does
(build_app, the real models, the evaluation's vector cache).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from bench.eval_capture import bundled_embedders
from bench.eval_sets import RetrievalSet, build_locomo, load_tldr, load_vok
from bench.support import make_app
from vaultmem.app import App
from vaultmem.core.ranking import DEFAULT_RANKING
from vaultmem.core.relevance import thread_key
from vaultmem.engine.search_context import thread_notes

#: (folder, notes, adj, far, all) of one thread folder
Row = tuple[str, int, float, float, float]


def folder_rows(app: App) -> list[Row]:
    """Each thread folder of `app`'s index (at least 4 notes with vectors) and its cosines."""
    catalog = app.catalog
    vectors = app.index().note_vectors()
    params = DEFAULT_RANKING
    threads: dict[tuple[str, str, str], list[str]] = {}
    for path in sorted(vectors):
        key = thread_key(path, any_name=params.thread_any_name)
        if key is None or key in threads:
            continue
        threads[key] = [p for p in thread_notes(catalog, key, params) if p in vectors]
    rows = []
    for key, thread in threads.items():
        if len(thread) < 4:
            continue
        matrix = np.array([vectors[p] for p in thread], dtype=np.float64)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        n = len(matrix)
        adj = float(np.mean(np.sum(matrix[:-1] * matrix[1:], axis=1)))
        far = float(np.mean(np.sum(matrix * np.roll(matrix, n // 2, axis=0), axis=1)))
        total = matrix.sum(axis=0)
        every = float((total @ total - n) / (n * (n - 1)))
        rows.append((key[0] or "/", n, adj, far, every))
    return rows


def report(name: str, rows: list[Row], top: int) -> list[str]:
    notes = sum(row[1] for row in rows)
    lines = [f"== {name}: {len(rows)} thread folders, {notes} notes"]
    for folder, n, adj, far, every in sorted(rows, key=lambda row: -row[1])[:top]:
        ratio = (adj - every) / (1.0 - every) if every < 1.0 else 0.0
        lines.append(f"   {folder[:40]:40} n={n:5d} adj={adj:.3f} far={far:.3f} "
                     f"all={every:.3f} ratio={ratio:+.3f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default="en,ru,zh")
    parser.add_argument("--top", type=int, default=8, help="folders shown per set")
    args = parser.parse_args(argv)
    embedders = bundled_embedders()
    with tempfile.TemporaryDirectory(prefix="vaultmem-coherence-") as tmp:
        work = Path(tmp)
        sets: list[tuple[str, RetrievalSet, str]] = [
            (f"locomo {layout}", build_locomo(work / f"locomo-{layout}", layout=layout),
             "english") for layout in ("dated", "plain", "folders")]
        sets.append(("vault", load_vok(), "english"))
        sets += [(f"tldr {language}", load_tldr(language),
                  "english" if language == "en" else "multilingual")
                 for language in args.languages.split(",")]
        for name, data, model in sets:
            app = make_app(data.vault, work / name.replace(" ", "-"), embedders[model])
            try:
                app.sync.reindex()
                rows = folder_rows(app)
            finally:
                app.close()
            print("\n".join(report(name, rows, args.top)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
