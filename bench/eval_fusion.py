"""Fusion that listens to each signal's confidence per query, against today's fixed weight.

    python -m bench.eval_ablation capture --languages en,ru,zh     (once: the captured retrieval;
                                    without --languages: all eight, each with both models)
    python -m bench.eval_fusion [CAPTURE_FILE]

Today's fusion (core/ranking.py `hybrid_scores`): (1 - w) · min-max cosine + w · BM25 / best
BM25 · coverage, w fixed per model (0.55 MiniLM, 0.45 e5). Each variant here replaces that one
step (or, for a note's dense evidence, its best chunk's cosine) while every other rule stays,
on the captured retrieval of scripts/eval's sets (bench/eval_capture.py): every LoCoMo fold and
layout, the vault set and the tldr pages per language, dev and held-out apart, beside the
dense-chunk baseline. The last column is a bound no per-query weighting of the two signals can
pass: each query ranked with the best of a grid of fixed weights (an oracle that knows the
answer). None of the variants was kept (docs/benchmarks.md, "Tried and dropped").
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from unittest import mock

from bench.eval_ablation import CAPTURE, _for_model
from bench.eval_baselines import METRICS
from bench.eval_capture import Captured, CapturedSet, load
from bench.eval_sets import SESSION_LAYOUT
from bench.eval_support import mean
from vaultmem.core import ranking
from vaultmem.core.ranking import NoteSignals, RankingParams, note_signals, rank_notes
from vaultmem.engine.search import TEXT_POOL, VECTOR_POOL, ranking_for

Scores = dict[str, float]
#: A fusion: the notes' signals, the ranking's values and each note's word coverage → scores.
Fuse = Callable[[Mapping[str, NoteSignals], RankingParams, Mapping[str, float]], Scores]
_HYBRID = ranking.hybrid_scores  # today's fusion (`rank` puts a variant in its place)
WEIGHTS = (0.0, 0.15, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.85)  # the oracle's grid


def _signals(signals: Mapping[str, NoteSignals], coverage: Mapping[str, float],
             params: RankingParams) -> tuple[Scores, Scores, list[float], list[float]]:
    """Each note's cosine (the pool's lowest where the model did not find it) and words score
    (BM25 · coverage^p), and each signal's own pool of values, best first."""
    cosines = [s.cosine for s in signals.values() if s.cosine is not None]
    low = min(cosines, default=0.0)
    meaning = {p: low if s.cosine is None else s.cosine for p, s in signals.items()}
    words = {p: s.text_score * coverage.get(p, 0.0) ** params.coverage_power
             for p, s in signals.items()}
    return (meaning, words, sorted(cosines, reverse=True),
            sorted((v for v in words.values() if v > 0), reverse=True))


def _normalise(values: Scores, pool: Sequence[float], how: str, k: int = 30) -> Scores:
    """`z`: (x - mean) / sd of the signal's pool; `tail`: (x - its k-th best) / (best - k-th),
    floored at 0; `max`: x / best."""
    if not pool:
        return dict.fromkeys(values, 0.0)
    top = pool[0]
    if how == "z":
        mu, sd = statistics.fmean(pool), statistics.pstdev(pool)
        return {p: (v - mu) / sd if sd > 0 else 0.0 for p, v in values.items()}
    if how == "tail":
        tail = pool[min(k, len(pool)) - 1]
        return {p: max(v - tail, 0.0) / (top - tail) if top > tail else float(v >= top)
                for p, v in values.items()}
    return {p: v / top if top > 0 else 0.0 for p, v in values.items()}


def _unit(scores: Scores) -> Scores:
    low, high = min(scores.values()), max(scores.values())
    return {p: (v - low) / (high - low) if high > low else 1.0 for p, v in scores.items()}


def normalised(how_meaning: str, how_words: str, k: int = 30) -> Fuse:
    """The fixed weight over each signal normalised by its own pool's distribution."""
    def fuse(signals: Mapping[str, NoteSignals], params: RankingParams,
             coverage: Mapping[str, float]) -> Scores:
        meaning, words, m_pool, w_pool = _signals(signals, coverage, params)
        if how_meaning == "minmax":
            m = _unit(meaning)
        elif how_meaning == "calibrated":  # the model's own scale: 0 unrelated, 1 same thing
            span = params.cosine_full - params.cosine_none
            m = {p: max(v - params.cosine_none, 0.0) / span for p, v in meaning.items()}
        else:
            m = _normalise(meaning, m_pool, how_meaning, k)
        if how_words == "product":  # today's words: BM25 / best BM25 · coverage^p
            best = max(s.text_score for s in signals.values())
            w = {p: v / best if best > 0 else 0.0 for p, v in words.items()}
        else:
            w = _normalise(words, w_pool, how_words, k)
        t = params.text_weight
        return _unit({p: (1 - t) * m[p] + t * w[p] for p in signals})
    return fuse


def _peak(pool: Sequence[float]) -> float:
    """How far a signal's best value stands out of its pool (z of the top)."""
    if len(pool) < 2:
        return 0.0
    sd = statistics.pstdev(pool)
    return (pool[0] - statistics.fmean(pool)) / sd if sd > 0 else 0.0


def weighted(confidence: str, power: float = 1.0) -> Fuse:
    """Today's normalisation, the weight set per query: w · cw^g / (w · cw^g + (1 - w) · cm^g)
    with each signal's confidence c: `peak` (its top's z in its pool) or `absolute` (words: the
    best coverage of the query; meaning: the best cosine on the model's calibrated scale)."""
    def fuse(signals: Mapping[str, NoteSignals], params: RankingParams,
             coverage: Mapping[str, float]) -> Scores:
        _, _, m_pool, w_pool = _signals(signals, coverage, params)
        if confidence == "peak":
            cw, cm = _peak(w_pool), _peak(m_pool)
        else:
            cw = max(coverage.values(), default=0.0)
            span = params.cosine_full - params.cosine_none
            cm = min(max((m_pool[0] - params.cosine_none) / span, 0.0), 1.0) if m_pool else 0.0
        a, b = params.text_weight * cw ** power, (1 - params.text_weight) * cm ** power
        weight = a / (a + b) if a + b > 0 else params.text_weight
        return _HYBRID(signals, text_weight=weight, coverage=coverage,
                                     coverage_power=params.coverage_power)
    return fuse


def chunk_cosines(combine: Callable[[list[float]], float]
                  ) -> Callable[..., dict[str, NoteSignals]]:
    """Note signals whose dense evidence is `combine` of the note's chunk cosines in the pool
    (best first)."""
    def signals(vector_hits: Sequence[ranking.ChunkHit], text_hits: Sequence[ranking.ChunkHit],
                *, text_weight: float) -> dict[str, NoteSignals]:
        found = note_signals(vector_hits, text_hits, text_weight=text_weight)
        chunks: dict[str, list[float]] = {}
        for hit in vector_hits:
            chunks.setdefault(hit.path, []).append(hit.score)
        for path, cosines in chunks.items():
            found[path] = found[path]._replace(cosine=combine(sorted(cosines, reverse=True)))
        return found
    return signals


def soft_max_cosine(temperature: float) -> Callable[..., dict[str, NoteSignals]]:
    """A note's dense evidence from all its chunks in the pool: log-sum-exp of their cosines at
    `temperature` (the best chunk's cosine alone as it tends to 0)."""
    def soft(cosines: list[float]) -> float:
        top = cosines[0]
        return top + temperature * math.log(sum(math.exp((c - top) / temperature)
                                                 for c in cosines))
    return chunk_cosines(soft)


def best_two_cosine(second: float) -> Callable[..., dict[str, NoteSignals]]:
    """A note's dense evidence from its two best chunks in the pool: (best + `second` · the
    second best) / (1 + `second`) (`second` 1: their mean); a note of one chunk in the pool
    keeps its cosine."""
    def best_two(cosines: list[float]) -> float:
        if len(cosines) == 1:
            return cosines[0]
        return (cosines[0] + second * cosines[1]) / (1.0 + second)
    return chunk_cosines(best_two)


VARIANTS: dict[str, tuple[Fuse | None, Callable[..., dict[str, NoteSignals]]]] = {
    "z-scores, both signals": (normalised("z", "z"), note_signals),
    "cosine by its top's gap to its 10th": (normalised("tail", "product", 10), note_signals),
    "cosine by its top's gap to its 30th": (normalised("tail", "product", 30), note_signals),
    "cosine by its top's gap to its 100th": (normalised("tail", "product", 100), note_signals),
    "both by the gap to their 30th": (normalised("tail", "tail", 30), note_signals),
    "cosine on the model's calibrated scale": (normalised("calibrated", "product"),
                                               note_signals),
    "weight by each top's z (peakedness)": (weighted("peak"), note_signals),
    "weight by each top's z, squared": (weighted("peak", 2.0), note_signals),
    "weight by absolute confidence": (weighted("absolute"), note_signals),
    "dense evidence: soft max of chunks (0.01)": (None, soft_max_cosine(0.01)),
    "dense evidence: mean of the best two chunks": (None, best_two_cosine(1.0)),
    "dense evidence: best chunk + 0.25 · second": (None, best_two_cosine(0.25)),
}


def rank(captured: Captured, params: RankingParams, fuse: Fuse | None = None,
         signals_of: Callable[..., dict[str, NoteSignals]] = note_signals,
         k: int = 10) -> list[str]:
    """eval_capture.rank with the fusion step (and the notes' signals) replaced."""
    signals = signals_of(captured.vector_hits[:VECTOR_POOL], captured.text_hits[:TEXT_POOL],
                         text_weight=params.text_weight)
    if fuse is None:
        return [m.path for m in rank_notes(signals, captured.context, params=params, limit=k)]

    def hybrid(found: Mapping[str, NoteSignals], *, text_weight: float,
               coverage: Mapping[str, float], coverage_power: float,
               cosine_tail: int = 0) -> Scores:
        return fuse(found, replace(params, text_weight=text_weight,
                                   coverage_power=coverage_power), coverage)
    with mock.patch.object(ranking, "hybrid_scores", hybrid):
        return [m.path for m in rank_notes(signals, captured.context, params=params, limit=k)]


def dense_chunks(captured: Captured, k: int = 10) -> list[str]:
    """The baseline: notes by their best chunk's cosine (scripts/eval's `dense (chunks, max)`)."""
    best: dict[str, float] = {}
    for hit in captured.vector_hits[:VECTOR_POOL]:
        best[hit.path] = max(best.get(hit.path, -1.0), hit.score)
    return sorted(best, key=lambda p: (-best[p], p))[:k]


def groups(data: CapturedSet) -> dict[str, tuple[str, list[Captured]]]:
    """Each check of a set: its name, metric and queries."""
    kind, _, variant = data.name.partition("/")
    if kind == "locomo":
        metric = "R@5" if variant == SESSION_LAYOUT else "R@10"
        return {f"locomo {variant} {fold}": (metric, [c for c in data.queries if c.fold == fold])
                for fold in sorted({c.fold for c in data.queries})}
    name = "vault" if kind == "vault" else kind
    return {f"{name} {split}": ("nDCG@5", data.answerable(split)) for split in ("dev", "held-out")}


def table(sets: list[CapturedSet]) -> str:
    base = ranking_for("")
    names = list(VARIANTS)
    lines = ["check".ljust(26) + "today".rjust(7) + "dense".rjust(7)
             + "".join(f"{i + 1:>6}" for i in range(len(names))) + "oracle".rjust(8)]
    deltas: dict[str, list[float]] = {n: [] for n in names}
    for data in sets:
        params = _for_model(base, data.name.partition("/")[2])
        for check, (metric, rows) in groups(data).items():
            def figure(ranker: Callable[[Captured], list[str]], rows: list[Captured] = rows,
                       metric: str = metric) -> float:
                return mean(METRICS[metric](ranker(c), c.query.relevant) for c in rows)
            today = figure(lambda c, p=params: rank(c, p))
            cells = []
            for name, (fuse, signals_of) in VARIANTS.items():
                value = figure(lambda c, p=params, f=fuse, s=signals_of: rank(c, p, f, s))
                deltas[name].append(value - today)
                cells.append(f"{(value - today) * 100:+6.1f}")
            oracle = mean(max(METRICS[metric](rank(c, replace(params, text_weight=w)),
                                              c.query.relevant) for w in WEIGHTS) for c in rows)
            lines.append(check.ljust(26) + f"{today * 100:7.1f}"
                         + f"{figure(dense_chunks) * 100:7.1f}" + "".join(cells)
                         + f"{oracle * 100:8.1f}")
    lines.append("")
    for i, name in enumerate(names):
        better = sum(d > 0.0005 for d in deltas[name])
        worse = sum(d < -0.0005 for d in deltas[name])
        lines.append(f"  {i + 1}. {name}: better on {better}, worse on {worse} of "
                     f"{len(deltas[name])} checks")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    print(table(load(Path(argv[0]) if argv else CAPTURE)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
