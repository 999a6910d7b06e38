"""The ranking's rules, each switched off in turn, on every fold and every unseen check.

    scripts/eval --ablation            capture (cached in bench-out/) and print the table
    python -m bench.eval_ablation capture [--languages en,ru] | table

(`--languages`: only these tldr languages, each with the model `auto` picks for its vault.)

The checks: LoCoMo, leave-one-conversation-out (each of the three dev conversations is a fold:
nothing is tuned on the fold it is measured on, and since no value below is fitted per fold,
a fold's figure is that conversation's), in every layout (turn notes: R@10; one note per
session: R@5); the vault set's held-out half (nDCG@5); the tldr pages in English and, with
the multilingual model, in the other seven languages (nDCG@5, dev and held-out together). A
rule earns its place by helping on a clear majority of those, without a file-name pattern.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_capture import CapturedSet, bundled_embedders, capture_all, load, rank, save
from bench.eval_sets import SESSION_LAYOUT, TLDR_LANGUAGES
from bench.eval_support import mean
from vaultmem.core.ranking import RankingParams

CAPTURE = Path("bench-out/capture.pkl")

#: Each rule of the ranking, as the change of values that switches it off.
RULES: dict[str, Callable[[RankingParams], RankingParams]] = {
    "words weighed by the share of the query they cover": lambda p: replace(
        p, coverage_power=0.0),
    "thread neighbours (folders of mostly short notes, in name order)": lambda p: replace(
        p, thread_share=0.0),
    "names lift (title, aliases, short properties)": lambda p: replace(p, name_boost=0.0),
    "a note named exactly as the query first": lambda p: replace(p, exact_name_first=False),
}

#: Other forms of a rule, each measured against the full ranking as the rules above are.
VARIANTS: dict[str, Callable[[RankingParams], RankingParams]] = {
    "threads: any name, every folder": lambda p: replace(
        p, thread_any_name=True, thread_short_share=0.0),
    "threads: any name, folders of >= 50 % short notes": lambda p: replace(
        p, thread_any_name=True, thread_short_share=0.5),
    "threads: any name, folders of short notes only": lambda p: replace(
        p, thread_any_name=True, thread_short_share=1.0),
    "threads: numbered names, every folder (the rule before)": lambda p: replace(
        p, thread_any_name=False, thread_short_share=0.0),
    "threads: numbered names, folders of >= 80 % short notes": lambda p: replace(
        p, thread_any_name=False, thread_short_share=0.8),
    "names lift by coverage squared (half a name named: a quarter)": lambda p: replace(
        p, name_power=2.0),
    "names lift by coverage cubed": lambda p: replace(p, name_power=3.0),
    "words weighed by their coverage to the power 1.5": lambda p: replace(
        p, coverage_power=1.5),
    "words weighed by their coverage squared": lambda p: replace(p, coverage_power=2.0),
}


def checks(sets: list[CapturedSet], params: RankingParams) -> dict[str, float]:
    """Every check's figure for `params` (see the module's docstring)."""
    out: dict[str, float] = {}
    for data in sets:
        kind, _, variant = data.name.partition("/")
        if kind == "locomo":
            metric = "R@5" if variant == SESSION_LAYOUT else "R@10"
            for fold in sorted({c.fold for c in data.queries}):
                rows = [c for c in data.queries if c.fold == fold]
                out[f"locomo {variant} {fold} {metric}"] = _metric(rows, params, metric)
        elif kind == "vault":
            out["vault held-out nDCG@5"] = _metric(data.answerable("held-out"), params, "nDCG@5")
            out["vault dev nDCG@5"] = _metric(data.answerable("dev"), params, "nDCG@5")
        elif kind.startswith("tldr-"):
            out[f"{kind} ({variant}) nDCG@5"] = _metric(
                data.answerable(), _for_model(params, variant), "nDCG@5")
    return out


def _for_model(params: RankingParams, model: str) -> RankingParams:
    """`params` with the values of `model`'s vectors, as Search takes them."""
    from vaultmem.engine.search import ranking_for
    from vaultmem.index.multilingual import MULTILINGUAL_NAME

    if model != "multilingual":
        return params
    own = ranking_for(MULTILINGUAL_NAME)
    return replace(params, cosine_none=own.cosine_none, cosine_full=own.cosine_full,
                   text_weight=own.text_weight, cosine_tail=own.cosine_tail)


def _metric(rows: list, params: RankingParams, metric: str) -> float:
    return mean(METRICS[metric](rank(c, params), c.query.relevant) for c in rows)


def table(sets: list[CapturedSet], base: RankingParams,
          rules: Mapping[str, Callable[[RankingParams], RankingParams]] = RULES) -> str:
    full = checks(sets, base)
    lines = ["check".ljust(44) + "full".rjust(8) + "".join(
        f"{i + 1:>8}" for i in range(len(rules)))]
    without = {name: checks(sets, off(base)) for name, off in rules.items()}
    for check, value in full.items():
        cells = "".join(f"{(without[name][check] - value) * 100:+8.1f}" for name in rules)
        lines.append(check.ljust(44) + f"{value * 100:8.1f}" + cells)
    lines.append("")
    for i, name in enumerate(rules):
        deltas = [without[name][c] - full[c] for c in full]
        helps = sum(1 for d in deltas if d < -0.0005)
        hurts = sum(1 for d in deltas if d > 0.0005)
        how = "without" if rules is RULES else "with"
        lines.append(f"  {i + 1}. {how} {name}: worse on {helps}, better on {hurts}, "
                     f"same on {len(deltas) - helps - hurts} of {len(deltas)} checks")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "table"
    if command == "capture" or not CAPTURE.exists():
        embedders = bundled_embedders()
        sets = []
        languages = TLDR_LANGUAGES
        if "--languages" in argv:
            languages = tuple(argv[argv.index("--languages") + 1].split(","))
        for captured in capture_all(embedders, languages=languages,
                                    auto_model_only=languages != TLDR_LANGUAGES):
            print(f"captured {captured.name}: {len(captured.queries)} queries", flush=True)
            sets.append(captured)
        save(sets, CAPTURE)
    sets = load(CAPTURE)
    from vaultmem.engine.search import ranking_for

    base = ranking_for("")
    print(table(sets, base))
    print("\nvariants, each in place of the full ranking's form of its rule:")
    print(table(sets, base, VARIANTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
