"""How honest "nothing relevant" is, ranked again from one capture, under choices of the confidence.

The judged tldr questions with no answer in each language's vault must be refused by
`--matched-only` (best relevance not above the match threshold) while the answerable ones
stay matched; LoCoMo's and the vault set's questions all have an answer, so there the share
matched is what must not drop. Every set is captured once (bench/eval_capture.py: the model
`auto` picks for each tldr language, MiniLM for the English sets) and ranked again with:

* the function words a question skips: English's alone (the rule before) or its own
  language's besides (core/function_words.py);
* each model's cosine bounds (`grid`: the unrelated / same-thing cosines to try, per model).

    python -m bench.eval_honesty capture        # once (bench-out/capture-honesty.pkl)
    python -m bench.eval_honesty table
    python -m bench.eval_honesty grid multilingual 0.83,0.84,0.85 0.90,0.91,0.92
    python -m bench.eval_honesty examples       # the questions of the issue, on the search path

Values are chosen on the dev questions; held-out ones are printed apart.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_capture import (
    Captured,
    CapturedSet,
    bundled_embedders,
    capture_all,
    load,
    save,
)
from bench.eval_sets import NO_ANSWER
from bench.eval_support import CachedEmbedder, mean
from vaultmem.core.function_words import ENGLISH, for_query
from vaultmem.core.ranking import MATCH_THRESHOLD, RankingParams, note_signals, rank_notes
from vaultmem.engine.search import TEXT_POOL, VECTOR_POOL

CAPTURE = Path("bench-out/capture-honesty.pkl")
K = 10


def params_for(name: str, base: RankingParams) -> RankingParams:
    """`base` with the values of the set's model, as Search takes them."""
    from vaultmem.engine.search import ranking_for
    from vaultmem.index.multilingual import MULTILINGUAL_NAME

    if not name.endswith("/multilingual"):
        return base
    own = ranking_for(MULTILINGUAL_NAME)
    return replace(base, cosine_none=own.cosine_none, cosine_full=own.cosine_full,
                   text_weight=own.text_weight, cosine_tail=own.cosine_tail)


def ranked(captured: Captured, params: RankingParams, language_words: bool
           ) -> tuple[list[str], float]:
    """(top-k paths, best relevance) of one captured query."""
    signals = note_signals(captured.vector_hits[:VECTOR_POOL], captured.text_hits[:TEXT_POOL],
                           text_weight=params.text_weight)
    words = for_query(captured.query.text) if language_words else ENGLISH
    variant = (params.thread_any_name, params.thread_short_share)
    context = replace(captured.thread_contexts.get(variant, captured.context),
                      function_words=words)
    matches = rank_notes(signals, context, params=params, limit=K)
    return [m.path for m in matches], max((m.relevance for m in matches), default=0.0)


def shares(rows: Iterable[Captured], params: RankingParams, language_words: bool
           ) -> dict[str, float]:
    """Per split: no-answer refused, answerable matched, nDCG@5 (answerable)."""
    out: dict[str, float] = {}
    rows = list(rows)
    for split in ("dev", "held-out"):
        chosen = [c for c in rows if c.query.split == split] or (rows if split == "dev" else [])
        if not chosen:
            continue
        results = {id(c): ranked(c, params, language_words) for c in chosen}
        empty = [c for c in chosen if c.query.group == NO_ANSWER]
        answerable = [c for c in chosen if c.query.group != NO_ANSWER]
        if empty:
            out[f"{split} refused"] = mean(
                0.0 if results[id(c)][1] > MATCH_THRESHOLD else 1.0 for c in empty)
        out[f"{split} matched"] = mean(
            1.0 if results[id(c)][1] > MATCH_THRESHOLD else 0.0 for c in answerable)
        out[f"{split} nDCG@5"] = mean(
            METRICS["nDCG@5"](results[id(c)][0], c.query.relevant) for c in answerable)
    return out


def report(sets: list[CapturedSet], base: RankingParams, language_words: bool) -> None:
    for data in sets:
        figures = shares(data.queries, params_for(data.name, base), language_words)
        cells = "  ".join(f"{k} {v * 100:5.1f}" for k, v in figures.items())
        print(f"  {data.name:28s} {cells}", flush=True)


def grid(sets: list[CapturedSet], model: str, nones: list[float], fulls: list[float],
         language_words: bool) -> None:
    """Dev (and held-out) honesty of the tldr sets of `model` for each pair of bounds."""
    chosen = [s for s in sets if s.name.startswith("tldr-") and s.name.endswith("/" + model)]
    for none in nones:
        for full in fulls:
            if full <= none:
                continue
            refused, matched, held_refused, held_matched = [], [], [], []
            for data in chosen:
                base = replace(params_for(data.name, RankingParams()), cosine_none=none,
                               cosine_full=full)
                figures = shares(data.queries, base, language_words)
                refused.append(figures["dev refused"])
                matched.append(figures["dev matched"])
                held_refused.append(figures.get("held-out refused", 0.0))
                held_matched.append(figures.get("held-out matched", 0.0))
            print(f"  {model} none {none:.3f} full {full:.3f}: dev refused min "
                  f"{min(refused) * 100:5.1f} mean {mean(refused) * 100:5.1f}, matched min "
                  f"{min(matched) * 100:5.1f} mean {mean(matched) * 100:5.1f} | held-out "
                  f"refused {mean(held_refused) * 100:5.1f} matched "
                  f"{mean(held_matched) * 100:5.1f}", flush=True)


#: Questions no tldr vault answers, each asked on the vaults of ru, zh and de.
EXAMPLES = ("как приготовить борщ", "борщ", "如何做红烧肉", "Wie repariere ich ein Fahrrad")


def examples(embedders: dict[str, CachedEmbedder]) -> None:
    """Each example's best relevance through `Search.search` (the daemon's path), with the
    question's function words and with English's alone: on each vault with the model `auto`
    picks, and on the Russian one with the English model too (`embedding_model = english`)."""
    import tempfile
    from unittest import mock

    from bench.eval import NOW
    from bench.eval_sets import load_tldr
    from bench.eval_tldr import auto_choice
    from bench.support import make_app

    with tempfile.TemporaryDirectory() as work:
        for language, chosen in (("ru", ""), ("zh", ""), ("de", ""), ("ru", "english")):
            data = load_tldr(language)
            model = chosen or auto_choice(data.vault)
            app = make_app(data.vault, Path(work) / f"{language}-{model}", embedders[model])
            try:
                app.sync.reindex()
                app.index().optimize()
                for query in EXAMPLES:
                    now = _best(app, query, NOW)
                    with mock.patch("vaultmem.engine.search_context.for_query",
                                    lambda _query: ENGLISH):
                        before = _best(app, query, NOW)
                    print(f"  [{language} vault, {model}] {query!r}: best relevance {now:.3f} "
                          f"({'matched' if now > MATCH_THRESHOLD else 'nothing relevant'}); "
                          f"English's function words alone: {before:.3f}", flush=True)
            finally:
                app.close()
                embedders[model].save()


def _best(app: object, query: str, now: object) -> float:
    found = app.search.search(query, now, include_review=False)  # type: ignore[attr-defined]
    return max((hit.relevance for hit in found.hits), default=0.0)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "table"
    if command == "examples":
        examples(bundled_embedders())
        return 0
    if command == "capture":
        embedders = bundled_embedders()
        sets = []
        for captured in capture_all(embedders, auto_model_only=True):
            print(f"captured {captured.name}: {len(captured.queries)} queries", flush=True)
            sets.append(captured)
        save(sets, CAPTURE)
        return 0
    sets = load(CAPTURE)
    if command == "grid":
        model, nones, fulls = argv[1], argv[2], argv[3]
        grid(sets, model, [float(v) for v in nones.split(",")],
             [float(v) for v in fulls.split(",")], True)
        return 0
    print("function words: English's alone (before)")
    report(sets, RankingParams(), False)
    print("function words: the question's language's besides")
    report(sets, RankingParams(), True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
