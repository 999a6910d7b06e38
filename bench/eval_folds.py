"""LoCoMo figures as leave-one-conversation-out folds.

Each of the three dev conversations is a fold: vaultmem's values are fixed in the code (none is
fitted to a run), so the figure of a fold is its conversation's, and a set's figure is the mean
over the folds with their spread (the lowest and highest fold). The one value that was tuned
on this data, the fusion weight, is also chosen by nested cross-validation in
bench/eval_ablation.py (on two conversations, measured on the third). R@1 and MRR are printed
beside R@5 and R@10: at k = 10 many systems look alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bench.eval_sets import SESSION_LAYOUT, RetrievalSet
from bench.eval_support import mean, table

Say = Callable[[str], None]
Rows = dict[str, list[dict]]  # system -> per-query rows (metrics by name)


def fold_of(data: RetrievalSet) -> dict[str, str]:
    return {q.id: q.folder or "all" for q in data.queries}


def fold_figures(data: RetrievalSet, results: Rows,
                 metrics: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """{system: {fold: {metric: value}}}, with the categories' `metrics[-1]` too."""
    folds = fold_of(data)
    groups = {q.id: q.group for q in data.queries}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system, rows in results.items():
        out[system] = {}
        for fold in sorted(set(folds.values())):
            wanted = [r for r in rows if folds[r["id"]] == fold]
            values = {m: mean(r[m] for r in wanted) for m in metrics}
            for group in sorted({groups[r["id"]] for r in wanted}):
                values[group] = mean(r[metrics[-1]] for r in wanted if groups[r["id"]] == group)
            out[system][fold] = values
    return out


def report(data: RetrievalSet, results: Rows, metrics: Sequence[str], say: Say) -> None:
    """A layout's table: per system, the headline metric per fold, its mean and spread, then
    the mean over folds of every metric."""
    figures = fold_figures(data, results, metrics)
    head = metrics[-1]
    folds = sorted(next(iter(figures.values())))
    say(f"\n{data.name} [{data.layout}] — leave-one-conversation-out, {len(data.queries)} "
        f"queries: {head} per fold (conversation), mean and spread; means over the folds")
    rows = []
    for system, per_fold in figures.items():
        values = {fold: per_fold[fold][head] for fold in folds}
        values["mean"] = mean(values[f] for f in folds)
        values["spread"] = max(values[f] for f in folds) - min(values[f] for f in folds)
        for metric in metrics[:-1]:
            values[metric] = mean(per_fold[f][metric] for f in folds)
        rows.append((system, values))
    columns = [*folds, "mean", "spread", *metrics[:-1]]
    for line in table(rows, columns, scale=100.0, digits=1):
        say("  " + line)


def summarize(figures: Mapping[str, dict[str, dict[str, dict[str, float]]]], say: Say) -> None:
    """Every turn-note layout's mean over folds side by side, the weakest layout, and each
    fold beside the best baseline of that fold."""
    layouts = [layout for layout in figures if layout != SESSION_LAYOUT]
    if not layouts:
        return
    say("\nlocomo summary — turn-note layouts, R@10, mean over the leave-one-out folds "
        "(multi-hop, temporal: R@10 of that category)")
    systems = list(figures[layouts[0]])
    rows = []
    for system in systems:
        values = {}
        for layout in layouts:
            per_fold = figures[layout][system]
            values[layout] = mean(f["R@10"] for f in per_fold.values())
            values[f"{layout} m-h"] = mean(f.get("multi-hop", 0.0) for f in per_fold.values())
            values[f"{layout} tmp"] = mean(f.get("temporal", 0.0) for f in per_fold.values())
        rows.append((system, values))
    columns = [c for layout in layouts for c in (layout, f"{layout} m-h", f"{layout} tmp")]
    for line in table(rows, columns, scale=100.0, digits=1):
        say("  " + line)
    own = {layout: mean(f["R@10"] for f in figures[layout]["vaultmem"].values())
           for layout in layouts}
    worst, best = min(own, key=own.__getitem__), max(own, key=own.__getitem__)
    say(f"  weakest layout: {worst} R@10 {own[worst] * 100:.1f}; best {best} "
        f"{own[best] * 100:.1f}; spread {(own[best] - own[worst]) * 100:.1f} points")
    for layout in layouts:
        baselines = [s for s in figures[layout] if s != "vaultmem"]
        if not baselines:  # --no-baselines: nothing to set vaultmem beside
            continue
        cells = []
        for fold, value in figures[layout]["vaultmem"].items():
            base = max(figures[layout][s][fold]["R@10"] for s in baselines)
            cells.append(f"{fold} {value['R@10'] * 100:.1f} ({(value['R@10'] - base) * 100:+.1f})")
        say(f"  {layout}: vaultmem per fold (− best baseline of that fold): " + ", ".join(cells))
