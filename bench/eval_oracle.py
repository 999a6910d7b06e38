"""How far the multilingual set's figures can go with the signals one run has: the best of
every system, chosen per question after the fact.

    python -m bench.eval_oracle FILE        (FILE: `scripts/eval --set tldr --per-query FILE`)

For each tldr language and split, the mean nDCG@5 of each system of the run (vaultmem with
either model, dense chunks and BM25 + dense fusion with either model, BM25) and of the
per-question oracle: for every answerable question the best figure any of them reached. No
ranking can be chosen that way (it needs the judgments); it bounds what picking one of these
systems per question could give (a fusion passes it only where each signal finds part of
the answer), and so says whether a target is a matter of ranking or of the signals
themselves (docs/benchmarks.md, "Search in other languages").
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_compare import read
from bench.eval_sets import TLDR_LANGUAGES
from bench.eval_support import mean

ORACLE = "oracle (best system per question)"


def oracle_table(rows: list[dict]) -> dict[tuple[str, str], dict[str, float]]:
    """(language, split) -> system -> mean nDCG@5 over the answerable questions, the oracle
    among them."""
    per_question: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row.get("set") != "tldr" or not row.get("relevant"):
            continue
        figure = METRICS["nDCG@5"](row["ranking"], row["relevant"])
        per_question[(row["layout"], row["split"], row["id"])][row["system"]] = figure
    grouped: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for (language, split, _), systems in per_question.items():
        for system, figure in systems.items():
            grouped[(language, split)][system].append(figure)
        grouped[(language, split)][ORACLE].append(max(systems.values()))
    return {key: {system: mean(values) for system, values in systems.items()}
            for key, systems in grouped.items()}


def render(table: dict[tuple[str, str], dict[str, float]]) -> str:
    lines = []
    for split in ("dev", "held-out"):
        languages = [lang for lang in TLDR_LANGUAGES if (lang, split) in table]
        if not languages:
            continue
        systems = sorted({s for lang in languages for s in table[(lang, split)]},
                         key=lambda s: (s == ORACLE, s))
        lines.append(f"tldr — {split}: nDCG@5 per language")
        lines.append("  " + "system".ljust(38) + "".join(f"{lang:>8}" for lang in languages))
        for system in systems:
            cells = "".join(f"{table[(lang, split)].get(system, float('nan')):8.3f}"
                            for lang in languages)
            lines.append("  " + system[:38].ljust(38) + cells)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a scripts/eval --per-query file")
    args = parser.parse_args(argv)
    table = oracle_table(read(args.file))
    if not table:
        parser.error(f"{args.file}: no tldr rows (run scripts/eval --set tldr --per-query)")
    print(render(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
