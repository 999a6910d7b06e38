"""What the search path retrieved for every judged query, kept to rank again many ways.

Each set of scripts/eval is indexed once (build_app → IndexSync.reindex, the real model, its
vectors from the evaluation's cache); for every query the retrieval `Search.search` runs (the
chunks by meaning and by words, the folder filter) and the query's context from the catalog
(names, thread neighbours) are kept. Ranking them again with other `RankingParams` then takes
milliseconds a query, so an ablation of every rule over every set runs in seconds
(bench/eval_ablation.py). `rank` reproduces `Search.search`'s order for these sets (no
memories among their notes: the memory re-rank changes nothing).
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.eval_sets import (
    LAYOUTS,
    NO_ANSWER,
    TLDR_LANGUAGES,
    Query,
    RetrievalSet,
    build_locomo,
    load_tldr,
    load_vok,
)
from bench.eval_support import CachedEmbedder
from bench.support import make_app
from vaultmem.core.ranking import (
    ChunkHit,
    QueryContext,
    RankingParams,
    note_signals,
    rank_notes,
)
from vaultmem.engine.filters import SearchFilters
from vaultmem.engine.search import TEXT_POOL, VECTOR_POOL
from vaultmem.engine.search_context import query_context

K = 10
#: The thread variants captured, (thread_any_name, thread_short_share): which folders read as
#: threads, by numbered names or any name, and how short their notes must mostly be.
THREADS = [(any_name, share) for any_name in (False, True) for share in (0.0, 0.5, 0.8, 1.0)]
#: Captured deeper than the search's pools, so wider pools can be measured (`rank`'s `pools`).
CAPTURE_POOLS = (4 * VECTOR_POOL, 4 * TEXT_POOL)


@dataclass
class Captured:
    """One query's retrieval, as `Search.search` sees it before ranking."""

    query: Query
    fold: str  # the LoCoMo conversation, or the set's name
    vector_hits: list[ChunkHit]
    text_hits: list[ChunkHit]
    context: QueryContext
    query_vector: list[float] = field(default_factory=list)
    # the context under each thread variant (thread_any_name, thread_short_share) of THREADS
    thread_contexts: dict[tuple[bool, float], QueryContext] = field(default_factory=dict)


@dataclass
class CapturedSet:
    name: str  # e.g. "locomo/dated", "vault", "tldr-ru/multilingual"
    queries: list[Captured]

    def answerable(self, split: str | None = None) -> list[Captured]:
        return [c for c in self.queries if c.query.group != NO_ANSWER
                and (split is None or c.query.split == split)]


def rank(captured: Captured, params: RankingParams, k: int = K,
         pools: tuple[int, int] = (VECTOR_POOL, TEXT_POOL)) -> list[str]:
    """The top-k paths `Search.search` would return with `params` (and candidate pools of
    `pools` chunks by meaning and by words)."""
    signals = note_signals(captured.vector_hits[:pools[0]], captured.text_hits[:pools[1]],
                           text_weight=params.text_weight)
    variant = (params.thread_any_name, params.thread_short_share)
    context = captured.thread_contexts.get(variant, captured.context)
    return [m.path for m in rank_notes(signals, context, params=params, limit=k)]


def capture(data: RetrievalSet, embedder: CachedEmbedder, work: Path, name: str,
            fold_of: dict[str, str] | None = None) -> CapturedSet:
    app = make_app(data.vault, work / name.replace("/", "-"), embedder)
    try:
        app.sync.reindex()
        index = app.index()
        index.optimize()
        out = []
        for query in data.queries:
            allowed = None
            if query.folder:
                filters = SearchFilters(folder=query.folder)
                allowed = app.search.filters.allowed(filters, _NOW, app.store.iter_memories)
            vector = embedder.embed_query(query.text)
            text_hits = index.text_search(query.text, CAPTURE_POOLS[1], paths=allowed,
                                          languages=app.catalog.languages())
            vector_hits = index.vector_search(vector, CAPTURE_POOLS[0], paths=allowed)
            signals = note_signals(vector_hits, text_hits)  # every captured candidate
            context = query_context(app.catalog, query.text, signals)
            variants = {v: query_context(app.catalog, query.text, signals, RankingParams(
                thread_any_name=v[0], thread_short_share=v[1])) for v in THREADS}
            fold = (fold_of or {}).get(query.id, query.folder or data.name)
            out.append(Captured(query, fold, list(vector_hits), list(text_hits), context,
                                [float(v) for v in vector], variants))
        return CapturedSet(name, out)
    finally:
        app.close()
        embedder.save()


def capture_all(embedders: dict[str, CachedEmbedder], *, sets: Sequence[str] = ("locomo",
                "vault", "tldr"), languages: Sequence[str] = TLDR_LANGUAGES,
                layouts: Sequence[str] = LAYOUTS,
                auto_model_only: bool = False) -> Iterator[CapturedSet]:
    """Every set captured: LoCoMo and the vault with the English model, tldr with each (or,
    `auto_model_only`, with the model `auto` picks for that language's vault)."""
    with tempfile.TemporaryDirectory(prefix="vaultmem-capture-") as tmp:
        work = Path(tmp)
        if "locomo" in sets:
            for layout in layouts:
                data = build_locomo(work / f"locomo-{layout}", layout=layout)
                yield capture(data, embedders["english"], work, f"locomo/{layout}")
        if "vault" in sets:
            yield capture(load_vok(), embedders["english"], work, "vault")
        if "tldr" in sets:
            for language in languages:
                for model, embedder in embedders.items():
                    if auto_model_only and not picked_by_auto(language, model):
                        continue
                    yield capture(load_tldr(language), embedder, work,
                                  f"tldr-{language}/{model}")


def picked_by_auto(language: str, model: str) -> bool:
    """Whether `embedding_model = "auto"` picks `model` for a vault in `language`: the
    English model for English, the multilingual one otherwise."""
    return (model == "english") == (language == "en")


def save(sets: list[CapturedSet], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        pickle.dump(sets, out)


def load(path: Path) -> list[CapturedSet]:
    with path.open("rb") as handle:
        sets: list[CapturedSet] = pickle.load(handle)
    return sets


def _now() -> object:
    from bench.eval import NOW

    return NOW


_NOW = _now()


def bundled_embedders() -> dict[str, CachedEmbedder]:
    """Both bundled models (the default settings' options), each behind the eval's cache."""
    from vaultmem.config import Settings
    from vaultmem.index.embedders import make_embedder
    from vaultmem.settings_params import embedder_options

    options = embedder_options(Settings())
    embedders = {}
    for model in ("english", "multilingual"):
        real = make_embedder(model, options)
        embedders[model] = CachedEmbedder(
            real, Path("bench-out/eval-cache") / getattr(real, "runtime", "other"))
    return embedders
