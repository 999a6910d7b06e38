"""scripts/eval's multilingual set: the judged tldr questions (tests/data/retrieval/
tldr-multilingual.json) asked in each language over the pages of that language.

Per language, vaultmem is measured with each bundled model (the row `auto` picks for that vault
is the default configuration), beside same-run baselines: BM25 (bench/eval_baselines.py: words,
CJK text as two-character words, no stemming), each model's dense chunk ranking, and their
naive fusion. Ranking metrics count the answerable questions (dev and held-out apart); the
questions with no answer measure "nothing relevant": the share `--matched-only` refuses (no
result at relevance above the match threshold), beside the share of answerable questions still
matched (their best result at that relevance) and matched right (that result a judged page).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.eval_baselines import BM25, METRICS, fusion, top
from bench.eval_sets import NO_ANSWER, Query, RetrievalSet, load_tldr, read_notes
from bench.eval_support import CachedEmbedder, embedding_note, mean, table
from bench.support import make_app
from vaultmem.app import App
from vaultmem.engine.model_choice import choose_for_vault
from vaultmem.vault.ignore import IgnoreRules

K = 10
RANK_METRICS = ("nDCG@5", "R@1", "R@10", "MRR")
Say = Callable[[str], None]


@dataclass
class Answers:
    """One system's top-10 per query, and (vaultmem) the best relevance per query."""

    rankings: dict[str, list[str]]
    best_relevance: dict[str, float] = field(default_factory=dict)


@dataclass
class LanguageResult:
    data: RetrievalSet
    chosen: str  # the model `auto` picks for this language's vault
    systems: dict[str, Answers]

    @property
    def default(self) -> Answers:
        return self.systems[f"vaultmem ({self.chosen})"]


def auto_choice(vault: Path) -> str:
    """The model `embedding_model = auto` picks for a vault."""
    choice, _ = choose_for_vault(vault, IgnoreRules(vault))
    return choice.model


def run_language(language: str, embedders: Mapping[str, CachedEmbedder], work: Path,
                 now: datetime, say: Say, **overrides: int) -> LanguageResult:
    """vaultmem with each model, and the baselines, over one language's vault (`overrides`:
    settings to index with, the chunk sizes)."""
    data = load_tldr(language)
    bm25 = BM25(read_notes(data.vault))
    lexical = {q.id: bm25.scores(q.text) for q in data.queries}
    systems: dict[str, Answers] = {}
    for model, embedder in embedders.items():
        started = time.perf_counter()
        app = make_app(data.vault, work / f"tldr-{language}-{model}", embedder, **overrides)
        try:
            before = (embedder.misses, embedder.hits, embedder.seconds)
            sync = app.sync.reindex()
            app.index().optimize()  # as the daemon does after an indexing run
            say(f"   [{language}] {model}: {sync.added} notes indexed in "
                f"{time.perf_counter() - started:.1f} s, {app.index().stats()['chunks']} chunks "
                f"({embedding_note(embedder, before)})")
            systems[f"vaultmem ({model})"] = _vaultmem(app, data.queries, now)
            dense = {q.id: _dense(app, embedder, q) for q in data.queries}
        finally:
            app.close()
            embedder.save()
        systems[f"dense chunks ({model})"] = Answers({i: top(s, K) for i, s in dense.items()})
        systems[f"fusion bm25+dense ({model})"] = Answers(
            {i: top(fusion(lexical[i], dense[i]), K) for i in dense})
    systems["bm25"] = Answers({i: top(s, K) for i, s in lexical.items()})
    return LanguageResult(data, auto_choice(data.vault), systems)


def _vaultmem(app: App, queries: Sequence[Query], now: datetime) -> Answers:
    answers = Answers({}, {})
    for query in queries:
        found = app.search.search(query.text, now, top_k=K, include_review=False)
        answers.rankings[query.id] = [hit.path for hit in found.hits]
        answers.best_relevance[query.id] = max((h.relevance for h in found.hits), default=0.0)
    return answers


def _dense(app: App, embedder: CachedEmbedder, query: Query) -> dict[str, float]:
    """Each note's best chunk cosine (every chunk of the vault is scored)."""
    best: dict[str, float] = {}
    for hit in app.index().vector_search(embedder.embed_query(query.text), 5000):
        best[hit.path] = max(best.get(hit.path, -1.0), hit.score)
    return best


def figures(data: RetrievalSet, answers: Answers, split: str) -> dict[str, float]:
    """The ranking metrics over one split's answerable queries."""
    chosen = [q for q in data.queries if q.split == split and q.group != NO_ANSWER]
    return {m: mean(METRICS[m](answers.rankings[q.id], q.relevant) for q in chosen)
            for m in RANK_METRICS}


def honesty(data: RetrievalSet, answers: Answers, threshold: float,
            split: str | None = None) -> dict[str, float]:
    """Shares: no-answer questions refused, answerable ones matched, and matched right."""
    queries = [q for q in data.queries if split is None or q.split == split]
    empty = [q for q in queries if q.group == NO_ANSWER]
    answerable = [q for q in queries if q.group != NO_ANSWER]

    def matched(q: Query) -> bool:
        return answers.best_relevance.get(q.id, 0.0) > threshold

    def right(q: Query) -> bool:
        ranking = answers.rankings[q.id]
        return matched(q) and bool(ranking) and q.relevant.get(ranking[0], 0) > 0

    return {"no-answer refused": mean(0.0 if matched(q) else 1.0 for q in empty),
            "answerable matched": mean(1.0 if matched(q) else 0.0 for q in answerable),
            "matched right": mean(1.0 if right(q) else 0.0 for q in answerable)}


def report(results: Mapping[str, LanguageResult], threshold: float, say: Say) -> None:
    """Per split: nDCG@5 of every system per language; the default configuration's figures
    beside the best baseline; then how honest "nothing relevant" is."""
    systems = list(next(iter(results.values())).systems)
    for split in ("dev", "held-out"):
        say(f"\ntldr multilingual — {split}: nDCG@5 per language (answerable questions; "
            "default = the model auto picks)")
        rows = [("vaultmem default", {lang: figures(r.data, r.default, split)["nDCG@5"]
                                      for lang, r in results.items()})]
        rows += [(system, {lang: figures(r.data, r.systems[system], split)["nDCG@5"]
                           for lang, r in results.items()}) for system in systems]
        for line in table(rows, list(results), scale=1.0, digits=3):
            say("  " + line)
        _beside_baselines(results, split, say)
    say(f"\ntldr multilingual — \"nothing relevant\" (--matched-only: relevance > {threshold}), "
        "default configuration, dev / held-out")
    for split in ("dev", "held-out"):
        rows = [(f"{lang} ({r.chosen})", honesty(r.data, r.default, threshold, split))
                for lang, r in results.items()]
        say(f"  {split}:")
        for line in table(rows, ["no-answer refused", "answerable matched", "matched right"],
                          scale=100.0, digits=1):
            say("  " + line)


def _beside_baselines(results: Mapping[str, LanguageResult], split: str, say: Say) -> None:
    english = figures(results["en"].data, results["en"].default, split)["nDCG@5"] \
        if "en" in results else None
    for language, result in results.items():
        own = figures(result.data, result.default, split)
        baselines = {s: figures(result.data, a, split)["nDCG@5"]
                     for s, a in result.systems.items() if not s.startswith("vaultmem")}
        best = max(baselines, key=lambda s: baselines[s])
        gap = f"; {own['nDCG@5'] - english:+.3f} vs English" if english is not None else ""
        say(f"  {language} ({result.chosen}): nDCG@5 {own['nDCG@5']:.3f}, R@1 {own['R@1']:.3f}, "
            f"MRR {own['MRR']:.3f}; best baseline {best} {baselines[best]:.3f} "
            f"({own['nDCG@5'] - baselines[best]:+.3f}){gap}")


def per_query_rows(language: str, result: LanguageResult) -> list[dict[str, object]]:
    """Every query's top 10 per system, for --per-query."""
    by_id = {q.id: q for q in result.data.queries}
    return [{"set": "tldr", "layout": language, "system": system, "id": qid,
             "query": by_id[qid].text, "group": by_id[qid].group, "split": by_id[qid].split,
             "relevant": by_id[qid].relevant, "ranking": ranking,
             **({"best_relevance": answers.best_relevance[qid]} if answers.best_relevance else {})}
            for system, answers in result.systems.items()
            for qid, ranking in answers.rankings.items()]
