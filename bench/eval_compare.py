"""Variants of scripts/eval side by side: each check's figure per run, from their --per-query files.

A variant is a run of `scripts/eval --set all --per-query FILE` with another setting (say
`--chunk-max-chars 500`). This reads the files and prints one Markdown row per check: LoCoMo
R@10 per layout and fold (R@5 for the session layout), the vault set's nDCG@5 (dev, held-out)
and tldr's (dev, held-out; answerable questions) in English and the e5 languages asked for,
each run's vaultmem figure and its best baseline of the same run, and vaultmem's margin over
the first run's best baseline too (a chunking change moves the `dense chunks` baseline, which
ranks vaultmem's own chunk vectors). The last row counts the checks each variant holds or
improves on against the first run.

    python -m bench.eval_compare main=main.jsonl c500=c500.jsonl [--languages en,ru,zh,de]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_sets import NO_ANSWER, SESSION_LAYOUT, TLDR_LANGUAGES
from bench.eval_support import mean

Check = tuple[str, str, str, str]  # (set, layout, part, metric): part a fold or a split
Figures = dict[Check, dict[str, float]]  # check -> system -> figure
TURN_LAYOUTS = ("dated", "plain", "folders")


def read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as rows:
        return [json.loads(line) for line in rows if line.strip()]


def figures(rows: Iterable[dict], languages: Sequence[str]) -> Figures:
    """Every check's figure per system, from one run's per-query rows."""
    groups: dict[Check, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        check = _check(row, languages)
        if check is not None:
            metric = check[3]
            groups[check][row["system"]].append(METRICS[metric](row["ranking"], row["relevant"]))
    return {check: {system: mean(values) for system, values in systems.items()}
            for check, systems in groups.items()}


def _check(row: dict, languages: Sequence[str]) -> Check | None:
    kind = row["set"]
    if kind == "locomo":
        metric = "R@5" if row["layout"] == SESSION_LAYOUT else "R@10"
        return kind, row["layout"], row["id"].rsplit("-q", 1)[0], metric
    if kind == "tldr":
        if row["layout"] not in languages or row["group"] == NO_ANSWER:
            return None
        return kind, row["layout"], row["split"], "nDCG@5"
    return kind, "", row["split"], "nDCG@5"


def own_system(check: Check) -> str:
    """The system that is the product in a check: the model `auto` picks for tldr."""
    if check[0] == "tldr":
        return "vaultmem (english)" if check[1] == "en" else "vaultmem (multilingual)"
    return "vaultmem"


def best_baseline(systems: dict[str, float]) -> tuple[str, float]:
    baselines = {s: v for s, v in systems.items() if not s.startswith("vaultmem")}
    if not baselines:
        return "—", float("nan")
    name = max(baselines, key=lambda s: baselines[s])
    return name, baselines[name]


def _order(check: Check) -> tuple[int, int, str, str]:
    sets = {"locomo": 0, "vault": 1, "tldr": 2}
    layouts = {name: n for n, name in enumerate((*TURN_LAYOUTS, SESSION_LAYOUT,
                                                 *TLDR_LANGUAGES))}
    return sets.get(check[0], 9), layouts.get(check[1], 9), check[1], check[2]


def _scale(check: Check) -> tuple[float, int]:
    return (100.0, 1) if check[0] == "locomo" else (1.0, 3)


def table(runs: dict[str, Figures]) -> list[str]:
    """Markdown rows: per check, each run's vaultmem (its best baseline), its change from the
    first run, and its margin over the first run's best baseline."""
    names = list(runs)
    first = runs[names[0]]
    head = ["check", *(f"{n}: vaultmem (best baseline)" for n in names),
            *(f"{n} − {names[0]}" for n in names[1:]),
            *(f"{n} − {names[0]}'s baseline" for n in names[1:])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    better = dict.fromkeys(names[1:], 0)
    worse = dict.fromkeys(names[1:], 0)
    for check in sorted(first, key=_order):
        scale, digits = _scale(check)
        own = own_system(check)
        cells, changes, margins = [], [], []
        _, first_base = best_baseline(first[check])
        for name in names:
            systems = runs[name].get(check, {})
            value = systems.get(own, float("nan"))
            base_name, base = best_baseline(systems)
            cells.append(f"{value * scale:.{digits}f} ({base_name} {base * scale:.{digits}f})")
            if name == names[0]:
                continue
            change = value - first[check].get(own, float("nan"))
            changes.append(f"{change * scale:+.{digits}f}")
            margins.append(f"{(value - first_base) * scale:+.{digits}f}")
            rounded = round(change * scale, digits)
            better[name] += rounded > 0
            worse[name] += rounded < 0
        label = " ".join(part for part in (check[0], check[1], check[2], check[3]) if part)
        lines.append("| " + " | ".join([label, *cells, *changes, *margins]) + " |")
    tally = [f"better {better[n]}, worse {worse[n]}" for n in names[1:]]
    lines.append("| checks better / worse than " + names[0] + " | "
                 + " | ".join([""] * len(names) + tally + [""] * len(tally)) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("runs", nargs="+", metavar="NAME=FILE",
                        help="a run's --per-query file; the first is the reference")
    parser.add_argument("--languages", default="en,ru,zh,de",
                        help="tldr languages to show (default: en,ru,zh,de)")
    args = parser.parse_args(argv)
    languages = args.languages.split(",")
    runs: dict[str, Figures] = {}
    for item in args.runs:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            parser.error(f"expected NAME=FILE, got {item!r}")
        runs[name] = figures(read(Path(file)), languages)
    for line in table(runs):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
