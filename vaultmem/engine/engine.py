"""The use cases: short orchestrations of core + vault + index, shared by every interface.

Every method takes an explicit `now`; the edges (CLI, server, scheduler) read the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from vaultmem.core.decay import DecayParams, score
from vaultmem.core.decisions import Policy, decide
from vaultmem.core.language import language_share
from vaultmem.core.memory import ACTIVE, PROMOTED, STATUSES, MemoryState, future_problem
from vaultmem.core.planning import plan_sweep
from vaultmem.core.ranking import (
    MATCH_THRESHOLD,
    ChunkHit,
    Ranked,
    blend_review,
    note_signals,
    rank_notes,
    rerank,
)
from vaultmem.core.reinforce import (
    ReinforceParams,
    adjust_strength,
    observe,
    review_priority,
    touch,
)
from vaultmem.engine.filters import FilterIndex
from vaultmem.engine.indexer import Indexer, Progress, SyncReport
from vaultmem.engine.journal import FlushReport
from vaultmem.engine.memory_notes import MemoryNote
from vaultmem.engine.memory_store import MemoryStore
from vaultmem.engine.results import (
    MemoryView,
    Observation,
    ObserveResult,
    RelatedNote,
    RelatedResult,
    ReviewResult,
    SearchHit,
    SearchResult,
)
from vaultmem.engine.search_context import query_context
from vaultmem.engine.shapes import JSON, coverage_json, languages_json, obsidian_uri
from vaultmem.engine.successors import mark_superseded, prefer_current
from vaultmem.engine.sync_gate import SyncGate
from vaultmem.errors import InvalidInput, NoteError, NotFound
from vaultmem.index.base import Embedder, NoteRecord, Vector
from vaultmem.index.catalog import Catalog
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import Note, read_note

REVIEW_RELEVANCE_FLOOR = 0.3
# Candidates per search: chunks by meaning, chunks by words, notes re-ranked by memory score.
VECTOR_POOL = 400
TEXT_POOL = 150
RERANK_POOL = 50
LANGUAGE_SAMPLE = 100  # notes `status` reads to tell how much of the vault is not English
LANGUAGE_CHARS = 4000  # of each


class SearchIndex(Protocol):
    def vector_search(
        self, vector: Any, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]: ...
    def text_search(
        self, query: str, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]: ...
    def related(self, path: str, k: int) -> list[tuple[str, float]]: ...
    def note_vectors(self, paths: Collection[str] | None = None) -> dict[str, Vector]: ...


@dataclass(frozen=True)
class EngineParams:
    """The engine's tunables; `app.engine_params` fills them from Settings, which holds the
    defaults."""

    vault_name: str
    decay: DecayParams
    policy: Policy
    reinforce: ReinforceParams
    top_k: int
    review_fraction: float
    related_links: int
    memory_folder: str
    promoted_folder: str
    archive_folder: str
    cluster_threshold: float
    cluster_max_size: int
    merge_cohesion: float
    review_cohesion: float
    near_duplicate_cosine: float
    min_content_chars: int
    max_content_chars: int
    resave_window_hours: float = 6.0
    similar_memory_cosine: float = 0.8


@dataclass(frozen=True)
class SearchFilters:
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    type: str | None = None
    statuses: tuple[str, ...] = (ACTIVE, PROMOTED)
    folder: str | None = None
    window_days: float | None = None
    include_regular: bool = True

    def __post_init__(self) -> None:
        bad = [s for s in self.statuses if s not in STATUSES]
        if bad:
            raise InvalidInput(f"unknown status {bad[0]!r}: use one of {', '.join(STATUSES)}")
        if self.window_days is not None and self.window_days <= 0:
            raise InvalidInput("window_days must be positive")

    @property
    def narrows(self) -> bool:
        return bool(self.tags_any or self.tags_all or self.type or self.folder
                     or self.window_days or not self.include_regular
                     or set(self.statuses) != {ACTIVE, PROMOTED})


class Engine:
    def __init__(
        self,
        *,
        root: Path,
        rules: IgnoreRules,
        catalog: Catalog,
        memories: MemoryStore,
        indexer: Indexer,
        index: Callable[[], SearchIndex],
        embedder: Embedder,
        params: EngineParams,
    ) -> None:
        self.root = root
        self.rules = rules
        self.catalog = catalog
        self.memories = memories
        self.indexer = indexer
        self._index = index
        self._language_cache: tuple[int, JSON] | None = None
        self.embedder = embedder
        self.params = params
        self._gate = SyncGate(indexer)  # one index writer at a time
        self._written: dict[str, Note] = {}  # flushed notes the catalog has not recorded yet
        self._written_lock = threading.Lock()
        self.filters = FilterIndex(catalog)

    # indexing -----------------------------------------------------------------------------

    def reindex(self, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
        return self._gate.reindex(full=full, progress=progress)

    def flush_usage(self) -> FlushReport:
        """Write the journal's pending uses into their notes (the daemon's flush job) and record
        the notes as written in the catalog: no note is read again, LanceDB is not written.
        Each note is known as written from the moment it is, so the watcher's echo of a write
        that arrives while the flush goes on needs no read either."""
        report = self.memories.flush(on_written=self._remember_written)
        if report.written:
            self.sync_paths(report.written)
        return report

    def _remember_written(self, note: Note) -> None:
        with self._written_lock:
            self._written[note.path] = note

    def sync_paths(self, paths: Collection[str]) -> SyncReport:
        """Sync just these paths (the watcher's batches, vaultmem's own writes); a note the
        flush wrote is taken as written while its file is (see Indexer.sync)."""
        return self._gate.sync_paths(paths, self._take_written(paths))

    def _take_written(self, paths: Collection[str]) -> dict[str, Note]:
        with self._written_lock:
            return {p: self._written.pop(p) for p in paths if p in self._written}

    def let_in(self, take: Callable[[frozenset[str]], Collection[str]],
               on_report: Callable[[SyncReport], None]) -> None:
        """Between the slices of a long sync, also sync the paths `take` hands over (it is
        given the paths that sync has yet to write): the watcher's next batches."""
        def source(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, Note]] | None:
            paths = take(unwritten)
            return (paths, self._take_written(paths)) if paths else None
        self._gate.let_in(source, on_report)

    def indexing(self) -> JSON:
        """What the index writer is doing: the running syncs' notes done / total, the note
        embedded in slices, and `waiting`: paths left for the writer by other callers."""
        return {**self.indexer.progress.snapshot(), "waiting": self._gate.queued()}

    # reading ------------------------------------------------------------------------------

    def view(self, memory: MemoryNote, now: datetime) -> MemoryView:
        value = score(memory.state, now, self.params.decay)
        return MemoryView(
            path=memory.path, title=memory.note.title,
            uri=obsidian_uri(self.params.vault_name, memory.path), state=memory.state,
            score=value, decision=decide(memory.state, now, self.params.decay, self.params.policy),
            review_priority=review_priority(value, self.params.reinforce),
        )

    def get(self, ref: str, now: datetime) -> MemoryView:
        return self.view(self.memories.load(ref), now)

    def review(self, now: datetime, *, limit: int = 20) -> ReviewResult:
        items = []
        for memory in self.memories.iter_memories():
            if memory.state.status != ACTIVE or memory.state.superseded_by is not None:
                continue
            view = self.view(memory, now)
            if round(view.review_priority, 6) > 0:
                items.append(view)
        # ordered by the priority as answered (rounded), so equal-looking ones go by path
        items.sort(key=lambda v: (-round(v.review_priority, 6), v.path))
        return ReviewResult(items=tuple(items[:limit]), total=len(items))

    def neighbours(self, path: str, k: int) -> list[tuple[str, float]]:
        """The `k` notes nearest to the note at `path` by meaning, with their similarity."""
        return self._index().related(path, k)

    def note_vectors(self, paths: Collection[str]) -> dict[str, Vector]:
        """Each indexed note's vector (the mean of its chunks'), for the notes at `paths`."""
        return self._index().note_vectors(paths)

    def related(self, ref: str, *, k: int = 5) -> RelatedResult:
        path = self._note_path(ref)
        neighbours = self.neighbours(path, k)
        records = self.catalog.records_for(p for p, _ in neighbours)
        return RelatedResult(path=path, related=tuple(
            RelatedNote(path=p, title=records[p].title if p in records else Path(p).stem,
                        similarity=sim)
            for p, sim in neighbours))

    def status(self, now: datetime, *, per_file: bool = False) -> JSON:
        records = self.catalog.records()
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        active: list[tuple[str, MemoryState]] = []
        for memory in self.memories.iter_memories():
            by_status[memory.state.status] = by_status.get(memory.state.status, 0) + 1
            kind = memory.state.type or "untyped"
            by_type[kind] = by_type.get(kind, 0) + 1
            if memory.state.status == ACTIVE:
                active.append((memory.path, memory.state))
        # the sweep's own plan, so the counts include what the active-memory cap archives
        plan = plan_sweep(active, now, self.params.decay, self.params.policy)
        decisions = {"keep": len(plan.keep), "forget": len(plan.archive),
                     "promote": len(plan.promote)}
        coverage = coverage_json(records, self.rules.problems)
        if per_file:
            coverage["files"] = [
                {"path": r.path, "status": r.status, "reason": r.reason, "chunks": r.chunk_count}
                for r in sorted(records.values(), key=lambda r: r.path)
            ]
        return {
            "vault": str(self.root),
            "notes": len(records),
            "memories": {"total": sum(by_status.values()), "by_status": by_status,
                         "by_type": by_type, "decisions": decisions},
            "coverage": coverage,
            "embedder": self.embedder.name,
            "languages": self._languages(records),
        }

    def _languages(self, records: dict[str, NoteRecord]) -> JSON:
        """How much of the vault is not English, judged on up to LANGUAGE_SAMPLE indexed notes
        spread over it (read from the vault: status must not load the index). Kept until the
        number of indexed notes changes."""
        indexed = sorted(p for p, r in records.items() if r.status == "indexed")
        cached = self._language_cache
        if cached is not None and cached[0] == len(indexed):
            return cached[1]
        texts = []
        for path in indexed[:: max(1, len(indexed) // LANGUAGE_SAMPLE)][:LANGUAGE_SAMPLE]:
            try:
                texts.append(read_note(self.root, path).body[:LANGUAGE_CHARS])
            except (NoteError, NotFound, OSError):
                continue  # gone or unreadable since it was indexed: judged next time
        result = languages_json(language_share(texts), self.embedder.name)
        self._language_cache = (len(indexed), result)
        return result

    # reinforcement ------------------------------------------------------------------------

    def touch(self, ref: str, now: datetime, *, boost: bool = False) -> MemoryView:
        def use(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            return touch(memory.state, now, self.params.reinforce, boost=boost)

        return self.view(self.memories.update(ref, use), now)

    def feedback(self, ref: str, helpful: bool, now: datetime) -> MemoryView:
        """Helpful: a use with a strength boost. Unhelpful: strength lowered by the feedback
        penalty (floor 0), not counted as a use."""
        if helpful:
            return self.touch(ref, now, boost=True)
        penalty = -self.params.reinforce.feedback_penalty

        def lower(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            return adjust_strength(memory.state, penalty, self.params.reinforce)

        return self.view(self.memories.update(ref, lower), now)

    def set_pinned(self, ref: str, pinned: bool, now: datetime) -> MemoryView:
        """Pin (never forgotten, archived or merged away) or unpin a memory; not a use."""
        updated = self.memories.update(ref, lambda memory: replace(memory.state, pinned=pinned))
        return self.view(updated, now)

    def observe(self, refs: Sequence[str], context_tags: Sequence[str],
                now: datetime) -> ObserveResult:
        if not refs:
            raise InvalidInput("give at least one memory id to observe")
        cross: dict[str, bool] = {}

        def use(memory: MemoryNote) -> MemoryState:
            _check_use(memory, now)
            new, cross[memory.path] = observe(memory.state, now, context_tags,
                                              self.params.reinforce)
            return new

        return ObserveResult(observed=tuple(
            Observation(self.view(memory, now), cross[memory.path])
            for memory in self.memories.update_each(refs, use)))  # all or nothing

    # search -------------------------------------------------------------------------------

    def search(
        self, query: str, now: datetime, *, top_k: int | None = None,
        filters: SearchFilters = SearchFilters(), include_review: bool = True,
        min_relevance: float = 0.0,
    ) -> SearchResult:
        """Hybrid search (docs/architecture.md, "Search"). Only notes whose relevance is at
        least `min_relevance` are returned (MATCH_THRESHOLD: real matches only)."""
        query = query.strip()
        if not 0.0 <= min_relevance <= 1.0:
            raise InvalidInput("min_relevance must be between 0 and 1")
        if not query:
            raise InvalidInput("the search query is empty")
        top_k = top_k or self.params.top_k
        if not 1 <= top_k <= 200:
            raise InvalidInput("top_k must be between 1 and 200")
        # A narrowing filter becomes the set of notes retrieval may return, answered from the
        # in-memory filter index (vaultmem/engine/filters.py), not by reading every catalog row.
        allowed = (self.filters.allowed(filters, now, self.memories.iter_memories)
                   if filters.narrows else None)
        if allowed is not None and not allowed:
            return SearchResult(query=query, hits=())
        index = self._index()
        vector_hits = index.vector_search(
            self.embedder.embed_query(query), VECTOR_POOL, paths=allowed)
        text_hits = index.text_search(query, TEXT_POOL, paths=allowed)
        signals = note_signals(vector_hits, text_hits)
        matches = rank_notes(signals, query_context(self.catalog, query, signals),
                             limit=max(RERANK_POOL, top_k * 5))
        matches = [m for m in matches if m.relevance >= min_relevance]
        records = self.catalog.records_for(m.path for m in matches)
        copies = self._listed_copies(records)
        matches = [m for m in matches if m.path not in copies]
        records = {p: r for p, r in records.items() if p not in copies}
        memories = self._candidate_memories(records)
        matches = [m for m in matches if self._visible(m.path, filters, memories)]
        scores = {p: score(m.state, now, self.params.decay) for p, m in memories.items()}
        matched = {m.path for m in matches}
        ranked = prefer_current(rerank(matches, {p: s for p, s in scores.items() if p in matched}),
                                memories)
        # review items must be relevant too: at least a fraction of the best match's relevance
        floor = REVIEW_RELEVANCE_FLOOR * max((r.relevance for r in ranked), default=0.0)
        relevant = {r.path for r in ranked if r.relevance >= floor}
        priorities = {p: review_priority(s, self.params.reinforce) for p, s in scores.items()
                      if memories[p].state.status == ACTIVE and p in relevant
                      and memories[p].state.superseded_by is None}
        fraction = self.params.review_fraction if include_review else 0.0
        blended = blend_review(ranked, priorities, top_k, fraction=fraction)
        hits = mark_superseded([self._hit(r, records, memories) for r in blended], memories,
                               self.memories, self.catalog, self.params.vault_name)
        return SearchResult(query=query, hits=tuple(hits))

    def _listed_copies(self, records: dict[str, NoteRecord]) -> set[str]:
        """Sync conflict copies whose memory's own note is also a candidate, so one memory is
        listed once (a copy is listed only when its memory's own note is not)."""
        copies: set[str] = set()
        for note_id in {r.note_id for r in records.values() if r.note_id}:
            paths = self.catalog.paths_for_note_id(note_id)
            if len(paths) > 1 and (keep := self.memories.canonical(paths)) in records:
                copies.update(p for p in paths if p != keep)
        return copies

    def _candidate_memories(self, records: dict[str, NoteRecord]) -> dict[str, MemoryNote]:
        loaded = (self.memories.try_load(path) for path, rec in records.items() if rec.note_id)
        return {memory.path: memory for memory in loaded if memory is not None}

    def _visible(self, path: str, filters: SearchFilters, memories: dict[str, MemoryNote]) -> bool:
        memory = memories.get(path)
        if memory is None:
            return filters.include_regular and not filters.type
        return memory.state.status in filters.statuses

    def _hit(
        self, ranked: Ranked, records: dict[str, NoteRecord], memories: dict[str, MemoryNote]
    ) -> SearchHit:
        memory = memories.get(ranked.path)
        record = records.get(ranked.path)
        title = memory.note.title if memory else (record.title if record else ranked.path)
        tags = memory.state.tags if memory else (record.tags if record else ())
        return SearchHit(
            path=ranked.path, title=title,
            uri=obsidian_uri(self.params.vault_name, ranked.path), snippet=ranked.snippet,
            relevance=ranked.relevance, score=ranked.memory_score, final=ranked.final,
            review=ranked.review, memory_id=memory.state.id if memory else None, tags=tuple(tags),
            matched=ranked.relevance >= MATCH_THRESHOLD,
        )

    # helpers ------------------------------------------------------------------------------

    def _note_path(self, ref: str) -> str:
        try:
            return self.memories.resolve(ref)
        except NotFound:
            raise NotFound(f"no note or memory {ref!r} in this vault") from None


def _check_use(memory: MemoryNote, now: datetime) -> None:
    """A use may not update a memory whose dates lie in the future."""
    problem = future_problem(memory.state, now)
    if problem is not None:
        raise InvalidInput(f"{memory.path}: {problem}; fix the note's dates first")
