"""Search: the hybrid search over the index and the notes it finds related.

A query is embedded and searched by meaning and by words, the notes ranked (core.ranking),
re-ranked by memory score and blended with review items (docs/architecture.md, "A search").
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmem.core.decay import score
from vaultmem.core.display import display_text, snippet
from vaultmem.core.memory import ACTIVE
from vaultmem.core.ranking import (
    Ranked,
    RankingParams,
    is_match,
    note_signals,
    rank_notes,
)
from vaultmem.core.reinforce import review_priority
from vaultmem.core.rerank import blend_review, rerank
from vaultmem.engine.filters import FilterIndex, SearchFilters
from vaultmem.engine.parts import EngineParams, IndexOpener
from vaultmem.engine.results import RelatedNote, RelatedResult, SearchHit, SearchResult
from vaultmem.engine.search_context import QueryContexts
from vaultmem.engine.shapes import obsidian_uri
from vaultmem.engine.successors import mark_superseded, prefer_current
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index import inference
from vaultmem.index.base import Embedder, NoteRecord
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import model_ranking
from vaultmem.store.memory_notes import MemoryNote
from vaultmem.store.memory_store import MemoryStore

REVIEW_RELEVANCE_FLOOR = 0.3
# Candidates per search: chunks by meaning, chunks by words, notes re-ranked by memory score.
VECTOR_POOL = 400
TEXT_POOL = 150
RERANK_POOL = 50
NO_FILTERS = SearchFilters()


def ranking_for(model_name: str) -> RankingParams:
    """The ranking's values for a model: its own cosine scale and text weight where it has
    them."""
    values = model_ranking(model_name)
    if values is None:
        return RankingParams()
    return RankingParams(cosine_none=values.cosine_none, cosine_full=values.cosine_full,
                         text_weight=values.text_weight, cosine_tail=values.cosine_tail)


class Search:
    def __init__(
        self, *, catalog: Catalog, store: MemoryStore, index: IndexOpener, embedder: Embedder,
        filters: FilterIndex, params: EngineParams,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._index = index
        self._embedder = embedder
        self.filters = filters
        self._params = params
        self.ranking = ranking_for(embedder.name)
        self._contexts = QueryContexts(catalog)

    def related(self, ref: str, *, k: int = 5) -> RelatedResult:
        path = self._note_path(ref)
        neighbours = self._index().related(path, k)
        records = self._catalog.records_for(p for p, _ in neighbours)
        return RelatedResult(path=path, related=tuple(
            RelatedNote(path=p, title=records[p].title if p in records else Path(p).stem,
                        similarity=sim)
            for p, sim in neighbours))

    # search -------------------------------------------------------------------------------

    def search(
        self, query: str, now: datetime, *, top_k: int | None = None,
        filters: SearchFilters = NO_FILTERS, include_review: bool = True,
        min_relevance: float = 0.0,
    ) -> SearchResult:
        """Hybrid search (docs/architecture.md, "Search"). Only notes whose relevance is at
        least `min_relevance` are returned (MATCH_FLOOR: real matches only, relevance above
        MATCH_THRESHOLD)."""
        query = query.strip()
        if not 0.0 <= min_relevance <= 1.0:
            raise InvalidInput("min_relevance must be between 0 and 1")
        if not query:
            raise InvalidInput("the search query is empty")
        top_k = top_k or self._params.top_k
        if not 1 <= top_k <= 200:
            raise InvalidInput("top_k must be between 1 and 200")
        # A narrowing filter becomes the set of notes retrieval may return, answered from the
        # in-memory filter index (vaultmem/engine/filters.py), not by reading every catalog row.
        allowed = (self.filters.allowed(filters, now, self._store.iter_memories)
                   if filters.narrows else None)
        if allowed is not None and not allowed:
            return SearchResult(query=query, hits=())
        index = self._index()
        # the model embeds the query on its own thread while this one runs the text search
        vector = inference.shared().submit(inference.QUERY, self._embedder.embed_query, query)
        text_hits = index.text_search(query, TEXT_POOL, paths=allowed,
                                      languages=self._catalog.languages())
        vector_hits = index.vector_search(vector.result(), VECTOR_POOL, paths=allowed)
        signals = note_signals(vector_hits, text_hits, text_weight=self.ranking.text_weight)
        context = self._contexts(query, signals, self.ranking)
        matches = rank_notes(signals, context, params=self.ranking,
                             limit=max(RERANK_POOL, top_k * 5))
        matches = [m for m in matches if m.relevance >= min_relevance]
        records = self._catalog.known_records_for(m.path for m in matches)
        copies = self._listed_copies(records)
        matches = [m for m in matches if m.path not in copies]
        records = {p: r for p, r in records.items() if p not in copies}
        memories = self._candidate_memories(records)
        matches = [m for m in matches if self._visible(m.path, filters, memories)]
        scores = {p: score(m.state, now, self._params.decay) for p, m in memories.items()}
        matched = {m.path for m in matches}
        ranked = prefer_current(rerank(matches, {p: s for p, s in scores.items() if p in matched}),
                                memories)
        # review items must be relevant too: at least a fraction of the best match's relevance
        floor = REVIEW_RELEVANCE_FLOOR * max((r.relevance for r in ranked), default=0.0)
        relevant = {r.path for r in ranked if r.relevance >= floor}
        priorities = {p: review_priority(s, self._params.reinforce) for p, s in scores.items()
                      if memories[p].state.status == ACTIVE and p in relevant
                      and memories[p].state.superseded_by is None}
        fraction = self._params.review_fraction if include_review else 0.0
        blended = blend_review(ranked, priorities, top_k, fraction=fraction)
        hits = mark_superseded([self._hit(r, query, records, memories) for r in blended], memories,
                               self._store, self._catalog, self._params.vault_name)
        return SearchResult(query=query, hits=tuple(hits))

    def _listed_copies(self, records: dict[str, NoteRecord]) -> set[str]:
        """Sync conflict copies whose memory's own note is also a candidate, so one memory is
        listed once (a copy is listed only when its memory's own note is not)."""
        copies: set[str] = set()
        for note_id in {r.note_id for r in records.values() if r.note_id}:
            paths = self._catalog.paths_for_note_id(note_id)
            if len(paths) > 1 and (keep := self._store.canonical(paths)) in records:
                copies.update(p for p in paths if p != keep)
        return copies

    def _candidate_memories(self, records: dict[str, NoteRecord]) -> dict[str, MemoryNote]:
        loaded = (self._store.try_load(path) for path, rec in records.items() if rec.note_id)
        return {memory.path: memory for memory in loaded if memory is not None}

    def _visible(self, path: str, filters: SearchFilters, memories: dict[str, MemoryNote]) -> bool:
        memory = memories.get(path)
        if memory is None:
            return filters.include_regular and not filters.type
        return memory.state.status in filters.statuses

    def _hit(
        self, ranked: Ranked, query: str, records: dict[str, NoteRecord],
        memories: dict[str, MemoryNote],
    ) -> SearchHit:
        memory = memories.get(ranked.path)
        record = records.get(ranked.path)
        title = memory.note.title if memory else (record.title if record else ranked.path)
        tags = memory.state.tags if memory else (record.tags if record else ())
        return SearchHit(
            path=ranked.path, title=title,
            uri=obsidian_uri(self._params.vault_name, ranked.path),
            snippet=snippet(display_text(ranked.text, title), query),
            relevance=ranked.relevance, score=ranked.memory_score, final=ranked.final,
            review=ranked.review, memory_id=memory.state.id if memory else None, tags=tuple(tags),
            matched=is_match(ranked.relevance),
        )

    # helpers ------------------------------------------------------------------------------

    def _note_path(self, ref: str) -> str:
        try:
            return self._store.resolve(ref)
        except NotFound:
            raise NotFound(f"no note or memory {ref!r} in this vault") from None
