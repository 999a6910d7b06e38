"""Honesty: e5's cosine bounds, and a query word's evidence weighted by its rarity in the vault,
from one capture.

A search's best relevance is its confidence: the best absolute evidence among its first
notes (core/ranking.py `CONFIDENCE_DEPTH`), the stronger of meaning (the cosine between the
model's bounds) and words (the share of the query's content words the note holds). Neither
the bounds nor the words' weights move the ranking, so each query is ranked once and its first
notes kept; every choice is then measured in milliseconds.

* bounds: e5's (unrelated, same thing) cosines, re-fitted on the dev questions;
* rarity: each word counts by log((N + 1) / (df + 1)) / log(N + 1) to the power p
  (1 for a word no note holds, 0 for a word every note holds; p = 0 is
  today's rule, each word alike), df counted over the vault's notes, or (`--pool`) over the
  search's own candidates.

    python -m bench.eval_honesty capture       (once: bench-out/capture-honesty.pkl)
    python -m bench.eval_rarity bounds         the grid of e5's bounds, dev and held-out
    python -m bench.eval_rarity rarity [--pool] [none,full]   each set, for each p

Values are chosen on the dev questions; held-out ones are printed apart.
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.eval_capture import Captured, CapturedSet, load
from bench.eval_honesty import CAPTURE, K, params_for
from bench.eval_sets import NO_ANSWER, build_locomo, load_tldr, load_vok, read_notes
from bench.eval_support import mean
from vaultmem.core.function_words import FunctionWords, for_query
from vaultmem.core.ranking import MATCH_THRESHOLD, RankingParams, note_signals, rank_notes
from vaultmem.core.relevance import cosine_evidence, name_matches, words_found
from vaultmem.core.words import WordKeys, english_keys
from vaultmem.engine.search import TEXT_POOL, VECTOR_POOL

POWERS = (0.0, 0.5, 1.0, 2.0)
NONES = (0.82, 0.83, 0.84, 0.85, 0.86)
FULLS = (0.88, 0.89, 0.90, 0.91, 0.92, 0.93, 0.95)


def document_frequencies(query: str, texts: Sequence[str], keys: WordKeys,
                         function: FunctionWords) -> tuple[int, ...]:
    """For each content word of `query` (as core/relevance.py `word_evidence` counts them),
    how many of `texts` hold it."""
    counts = [0] * words_found(query, "", keys, function)[1]
    for text in texts:
        for place in words_found(query, text, keys, function)[0]:
            counts[place] += 1
    return tuple(counts)


def rarity_weights(frequencies: Sequence[int], notes: int) -> tuple[float, ...]:
    """log((N + 1) / (df + 1)) / log(N + 1): 1 for a word no note holds, 0 for one every
    note holds."""
    scale = math.log(notes + 1) or 1.0
    return tuple(math.log((notes + 1) / (df + 1)) / scale for df in frequencies)


def weighted_words(query: str, text: str, keys: WordKeys, function: FunctionWords,
                   weights: Sequence[float] | None) -> float:
    """`word_evidence`, each word counting by its weight (None: each alike)."""
    found, wanted = words_found(query, text, keys, function)
    if not wanted:
        return 0.0
    if weights is None:
        return len(found) / wanted
    total = sum(weights)
    return sum(weights[i] for i in found) / total if total > 0 else 0.0


@dataclass(frozen=True)
class Top:
    """One of a query's first notes: what its evidence is made of."""

    exact: bool
    cosine: float | None
    text: str
    keys: WordKeys


@dataclass
class Ranked:
    captured: Captured
    tops: list[Top]
    pool_texts: list[str]  # the candidates' texts (best chunk, best words chunk)

    @property
    def answerable(self) -> bool:
        return self.captured.query.group != NO_ANSWER


def rank_once(captured: Captured, params: RankingParams) -> Ranked:
    signals = note_signals(captured.vector_hits[:VECTOR_POOL], captured.text_hits[:TEXT_POOL],
                           text_weight=params.text_weight)
    variant = (params.thread_any_name, params.thread_short_share)
    context = replace(captured.thread_contexts.get(variant, captured.context),
                      function_words=for_query(captured.query.text))
    order = [m.path for m in rank_notes(signals, context, params=params, limit=K)]
    first = order[:params.confidence_depth]
    names = name_matches(context.query, context.names, first, context.keys_of)
    tops = [Top(names[p].exact, signals[p].cosine,
                " ".join([signals[p].best.text, signals[p].words_text,
                          *context.names.get(p, ())]), context.keys_of(p)) for p in first]
    return Ranked(captured, tops, [f"{s.best.text} {s.words_text}" for s in signals.values()])


def best_relevance(ranked: Ranked, none: float, full: float,
                   weights: Sequence[float] | None) -> float:
    """The search's best relevance: its confidence (core/ranking.py `rank_notes`)."""
    query = ranked.captured.query.text
    function = for_query(query)
    best = 0.0
    for top in ranked.tops:
        if top.exact:
            return 1.0
        meaning = cosine_evidence(top.cosine, none=none, full=full)
        lexical = weighted_words(query, top.text, top.keys, function, weights)
        best = max(best, 1.0 - (1.0 - meaning) * (1.0 - lexical))
    return round(best, 6)


def honesty(rows: Sequence[Ranked], none: float, full: float,
            weights: dict[int, tuple[float, ...]] | None = None, power: float = 0.0
            ) -> dict[str, float]:
    """Per split: no-answer refused, answerable matched."""
    out: dict[str, float] = {}
    for split in ("dev", "held-out"):
        chosen = [r for r in rows if r.captured.query.split == split]
        if not chosen:
            continue
        matched = {}
        for r in chosen:
            own = None
            if power and weights is not None:
                own = tuple(w ** power for w in weights[id(r.captured)])
            matched[id(r)] = best_relevance(r, none, full, own) > MATCH_THRESHOLD
        empty = [r for r in chosen if not r.answerable]
        if empty:
            out[f"{split} refused"] = mean(0.0 if matched[id(r)] else 1.0 for r in empty)
        out[f"{split} matched"] = mean(1.0 if matched[id(r)] else 0.0
                                       for r in chosen if r.answerable)
    return out


def vault_notes(name: str, work: Path) -> list[str]:
    """The texts of the notes of a captured set's vault."""
    kind, _, variant = name.partition("/")
    if kind == "locomo":
        return list(read_notes(build_locomo(work / variant, layout=variant).vault).values())
    if kind == "vault":
        return list(read_notes(load_vok().vault).values())
    return list(read_notes(load_tldr(kind.removeprefix("tldr-")).vault).values())


def rarities(rows: Sequence[Ranked], notes: Sequence[str] | None) -> dict[int, tuple[float, ...]]:
    """Each query's word weights (power 1): df over `notes`, or (None) over its candidates."""
    out = {}
    for r in rows:
        query = r.captured.query.text
        keys = r.tops[0].keys if r.tops else english_keys
        texts = r.pool_texts if notes is None else notes
        df = document_frequencies(query, texts, keys, for_query(query))
        out[id(r.captured)] = rarity_weights(df, len(texts))
    return out


def _ranked_sets(sets: list[CapturedSet]) -> dict[str, list[Ranked]]:
    out = {}
    for data in sets:
        params = params_for(data.name, RankingParams())
        out[data.name] = [rank_once(c, params) for c in data.queries]
        print(f"  ranked {data.name}", file=sys.stderr, flush=True)
    return out


def bounds(ranked: dict[str, list[Ranked]]) -> None:
    chosen = {n: r for n, r in ranked.items() if n.endswith("/multilingual")}
    for none in NONES:
        for full in FULLS:
            per = [honesty(rows, none, full) for rows in chosen.values()]
            cells = "  ".join(f"{k} {mean(f[k] for f in per) * 100:5.1f} (min "
                              f"{min(f[k] for f in per) * 100:5.1f})" for k in per[0])
            print(f"  none {none:.2f} full {full:.2f}: {cells}", flush=True)


def rarity(ranked: dict[str, list[Ranked]], pool: bool, scale: tuple[float, float] | None
           ) -> None:
    from vaultmem.index.multilingual import COSINE_SCALE

    e5 = scale or COSINE_SCALE
    summary: dict[float, dict[str, list[float]]] = {p: {} for p in POWERS}
    with tempfile.TemporaryDirectory(prefix="vaultmem-rarity-") as tmp:
        for name, rows in ranked.items():
            weights = rarities(rows, None if pool else vault_notes(name, Path(tmp)))
            none, full = e5 if name.endswith("/multilingual") else (
                RankingParams().cosine_none, RankingParams().cosine_full)
            for power in POWERS:
                figures = honesty(rows, none, full, weights, power)
                if name.startswith("tldr-"):
                    for key, value in figures.items():
                        summary[power].setdefault(key, []).append(value)
                cells = "  ".join(f"{k} {v * 100:5.1f}" for k, v in figures.items())
                print(f"  {name:26s} p {power:3.1f}  {cells}", flush=True)
    print("means over the tldr languages (min):")
    for power, figures in summary.items():
        cells = "  ".join(f"{k} {mean(v) * 100:5.1f} ({min(v) * 100:5.1f})"
                          for k, v in figures.items())
        print(f"  p {power:3.1f}  {cells}")


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "rarity"
    sets = load(CAPTURE)
    if command == "bounds":
        sets = [s for s in sets if s.name.endswith("/multilingual")]
    ranked = _ranked_sets(sets)
    if command == "bounds":
        bounds(ranked)
        return 0
    values = [a for a in argv[1:] if a != "--pool"]
    scale = tuple(float(v) for v in values[0].split(",")) if values else None
    rarity(ranked, "--pool" in argv, scale if scale is None or len(scale) == 2 else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
