"""The ranking's coverage weighted by each query word's rarity, on every check of the ablation.

    python -m bench.eval_rarity_coverage [--powers 1,0.5]   (capture: bench/eval_ablation.py)

BM25 is weighed by the share of the query's content words a note holds (core/ranking.py
`hybrid_scores`, `coverage`), each word alike. Here each word counts by its rarity in the
vault, log((N + 1) / (df + 1)) / log(N + 1) to the power p (bench/eval_rarity.py, df over
the set's notes): a note holding only a word that most notes hold ("disk", "image") covers
little. Measured on the ablation's checks (LoCoMo folds and layouts, the vault set, tldr with
the model `auto` picks), each against today's ranking. For the measurement alone, the
ranking's coverage function is replaced while a set is ranked; nothing of it is in the
product (docs/benchmarks.md, "Tried and dropped").
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import vaultmem.core.ranking as ranking
from bench.eval_ablation import CAPTURE, checks
from bench.eval_capture import CapturedSet, load, picked_by_auto
from bench.eval_rarity import document_frequencies, rarity_weights, vault_notes
from vaultmem.core.function_words import ENGLISH
from vaultmem.core.relevance import words_found
from vaultmem.core.words import WordKeys, english_keys
from vaultmem.engine.search import ranking_for
from vaultmem.index.analysis import STEMMERS, word_keys

Coverage = Callable[[str, Iterable[tuple[str, str]], Callable[[str], WordKeys]],
                    dict[str, float]]


def set_keys(name: str) -> WordKeys:
    """The word keys of a captured set's notes (tldr: its language's)."""
    kind = name.partition("/")[0]
    language = kind.removeprefix("tldr-") if kind.startswith("tldr-") else "en"
    return word_keys(frozenset({language})) if language in STEMMERS else english_keys


def rarity_coverage(notes: Sequence[str], keys: WordKeys, power: float) -> Coverage:
    """A replacement of core/relevance.py's `word_evidences`: each held word counts by its
    rarity among `notes` to `power`, the query's weights counted once per query."""
    weights: dict[str, tuple[float, ...]] = {}

    def coverage(query: str, texts: Iterable[tuple[str, str]],
                 keys_of: Callable[[str], WordKeys]) -> dict[str, float]:
        own = weights.get(query)
        if own is None:
            frequencies = document_frequencies(query, notes, keys, ENGLISH)
            own = weights[query] = tuple(
                w ** power for w in rarity_weights(frequencies, len(notes)))
        total = sum(own)
        found = {}
        for path, text in texts:
            held, _ = words_found(query, text, keys_of(path), ENGLISH)
            found[path] = sum(own[i] for i in held if i < len(own)) / total if total else 0.0
        return found

    return coverage


def measure(sets: list[CapturedSet], powers: Sequence[float]) -> dict[str, dict[str, float]]:
    """Every check's figure today and with each power (the tldr sets of the model `auto`
    picks only)."""
    base = ranking_for("")
    chosen = [s for s in sets if not s.name.startswith("tldr-") or picked_by_auto(
        s.name.partition("/")[0].removeprefix("tldr-"), s.name.partition("/")[2])]
    runs: dict[str, dict[str, float]] = {"today": {}, **{f"p {p:g}": {} for p in powers}}
    today = ranking.word_evidences
    with tempfile.TemporaryDirectory(prefix="vaultmem-rarity-coverage-") as tmp:
        for data in chosen:
            runs["today"].update(checks([data], base))
            notes = vault_notes(data.name, Path(tmp))
            for power in powers:
                ranking.word_evidences = rarity_coverage(notes, set_keys(data.name), power)
                try:
                    runs[f"p {power:g}"].update(checks([data], base))
                finally:
                    ranking.word_evidences = today
            print(f"  measured {data.name}", flush=True)
    return runs


def render(runs: dict[str, dict[str, float]]) -> str:
    today = runs["today"]
    others = [name for name in runs if name != "today"]
    lines = ["check".ljust(44) + "today".rjust(8) + "".join(f"{n:>9}" for n in others)]
    for check, value in today.items():
        lines.append(check.ljust(44) + f"{value * 100:8.1f}" + "".join(
            f"{(runs[n][check] - value) * 100:+9.1f}" for n in others))
    for name in others:
        deltas = [runs[name][c] - today[c] for c in today]
        lines.append(f"  {name}: better on {sum(d > 0.0005 for d in deltas)}, worse on "
                     f"{sum(d < -0.0005 for d in deltas)} of {len(deltas)} checks")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--powers", default="1,0.5")
    args = parser.parse_args(argv)
    if not CAPTURE.exists():
        parser.error(f"no capture at {CAPTURE}: run python -m bench.eval_ablation capture")
    powers = [float(p) for p in args.powers.split(",")]
    print(render(measure(load(CAPTURE), powers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
