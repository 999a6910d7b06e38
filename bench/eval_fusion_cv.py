"""e5's cosine in the fusion: its normalisation chosen by leave-languages-out cross-validation.

    python -m bench.eval_honesty capture       (once: every set with the model `auto` picks,
                                                bench-out/capture-honesty.pkl)
    python -m bench.eval_fusion_cv [CAPTURE_FILE]

Today's fusion min-max scales e5's cosine between the best and the lowest candidate's. Each
candidate here replaces that step for the multilingual model only (the English model's sets
are not ranked by it): the gap to the k-th best note's cosine (core/ranking.py
`meaning_floor`, for a grid of k), z-scores of the cosines, the model's calibrated scale. A
candidate is chosen on the dev questions of half the non-English languages (mean nDCG@5) and
measured on the dev and held-out questions of the other half, both ways round, for two
partitions; each language's figure is then that of a value chosen without it. The value kept
in the product is the one the same rule picks on every language's dev questions.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_capture import Captured, load
from bench.eval_fusion import Fuse, dense_chunks, normalised, rank
from bench.eval_honesty import CAPTURE, params_for, ranked
from bench.eval_sets import NO_ANSWER
from bench.eval_support import mean
from vaultmem.core.ranking import MATCH_THRESHOLD, RankingParams

LANGUAGES = ("ru", "zh", "de", "fr", "es", "ja", "ko")
#: Each partition's first half; the second is the rest. The first is the brief's; the second
#: mixes the scripts the other way.
PARTITIONS = (("ru", "de", "ja"), ("ru", "zh", "fr"))
TAILS = (5, 10, 20, 30, 50, 75, 100, 150, 200, 300)


@dataclass(frozen=True)
class Candidate:
    name: str
    tail: int = 0  # RankingParams.cosine_tail (the product's form)
    fuse: Fuse | None = None  # another fusion, through bench/eval_fusion.py's patch


CANDIDATES = (
    Candidate("min-max (today)"),
    *(Candidate(f"gap to the {k}th", tail=k) for k in TAILS),
    Candidate("z-scores of the cosines", fuse=normalised("z", "product")),
    Candidate("the model's calibrated scale", fuse=normalised("calibrated", "product")),
)


def figures(rows: Sequence[Captured], params: RankingParams, candidate: Candidate
            ) -> dict[str, float]:
    """nDCG@5 of the answerable dev and held-out questions; honesty with the product's form."""
    own = replace(params, cosine_tail=candidate.tail)
    out: dict[str, float] = {}
    for split in ("dev", "held-out"):
        chosen = [c for c in rows if c.query.split == split]
        answerable = [c for c in chosen if c.query.group != NO_ANSWER]
        out[split] = mean(METRICS["nDCG@5"](rank(c, own, candidate.fuse), c.query.relevant)
                          for c in answerable)
        if candidate.fuse is None:
            best = {id(c): ranked(c, own, True)[1] for c in chosen}
            empty = [c for c in chosen if c.query.group == NO_ANSWER]
            out[f"{split} refused"] = mean(float(best[id(c)] <= MATCH_THRESHOLD) for c in empty)
            out[f"{split} matched"] = mean(float(best[id(c)] > MATCH_THRESHOLD)
                                           for c in answerable)
    return out


def choose(table: dict[str, dict[str, dict[str, float]]], languages: Sequence[str]) -> str:
    """The candidate with the best mean dev nDCG@5 over `languages` (ties: the first listed,
    today's form first)."""
    return max((c.name for c in CANDIDATES),
               key=lambda n: mean(table[n][lang]["dev"] for lang in languages))


def main(argv: list[str]) -> int:
    sets = {s.name.partition("/")[0].removeprefix("tldr-"): s for s in load(
        Path(argv[0]) if argv else CAPTURE) if s.name.endswith("/multilingual")}
    table: dict[str, dict[str, dict[str, float]]] = {c.name: {} for c in CANDIDATES}
    dense: dict[str, dict[str, float]] = {}
    for language in LANGUAGES:
        data = sets[language]
        params = params_for(data.name, RankingParams())
        for candidate in CANDIDATES:
            table[candidate.name][language] = figures(data.queries, params, candidate)
        dense[language] = {split: mean(METRICS["nDCG@5"](dense_chunks(c), c.query.relevant)
                                       for c in data.answerable(split))
                           for split in ("dev", "held-out")}
    _print_grid(table)
    today = CANDIDATES[0].name
    for first in PARTITIONS:
        second = tuple(lang for lang in LANGUAGES if lang not in first)
        picked = {}
        for chosen_on, measured in ((first, second), (second, first)):
            name = choose(table, chosen_on)
            print(f"\nchosen on the dev questions of {', '.join(chosen_on)}: {name}")
            for language in measured:
                picked[language] = name
        _print_out_of_language(table, picked, dense, today)
    final = choose(table, LANGUAGES)
    print(f"\nchosen on every language's dev questions (the product's value): {final}")
    return 0


def _print_grid(table: dict[str, dict[str, dict[str, float]]]) -> None:
    print("nDCG@5 dev / held-out per candidate (honesty: dev refused / matched)")
    for name, per in table.items():
        cells = "  ".join(f"{lang} {v['dev'] * 100:4.1f}/{v['held-out'] * 100:4.1f}"
                          for lang, v in per.items())
        honest = ""
        if "dev refused" in next(iter(per.values())):
            honest = (f"  | refused {mean(v['dev refused'] for v in per.values()) * 100:4.1f}"
                      f" matched {mean(v['dev matched'] for v in per.values()) * 100:4.1f}")
        print(f"  {name:30s} {cells}  mean dev "
              f"{mean(v['dev'] for v in per.values()) * 100:4.1f}{honest}", flush=True)


def _print_out_of_language(table: dict[str, dict[str, dict[str, float]]],
                           picked: dict[str, str], dense: dict[str, dict[str, float]],
                           today: str) -> None:
    print("  language  chosen without it          dev today→cv   held-out today→cv"
          "   dense chunks dev / held-out")
    wins = {"dev": 0, "held-out": 0}
    losses = {"dev": 0, "held-out": 0}
    for language in LANGUAGES:
        now, cv = table[today][language], table[picked[language]][language]
        for split in wins:
            wins[split] += cv[split] > now[split] + 0.0005
            losses[split] += cv[split] < now[split] - 0.0005
        print(f"  {language:8s}  {picked[language]:26s} {now['dev']:.3f}→{cv['dev']:.3f}"
              f"    {now['held-out']:.3f}→{cv['held-out']:.3f}       "
              f"{dense[language]['dev']:.3f} / {dense[language]['held-out']:.3f}")
    print(f"  against today: dev better {wins['dev']}, worse {losses['dev']}; held-out better "
          f"{wins['held-out']}, worse {losses['held-out']} (of 7)")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
