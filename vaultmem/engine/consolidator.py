"""Consolidation (SPEC §5): cluster near-duplicate memories and merge a cluster into one.

Only active, unpinned memories take part: pinned memories are never merged away, so they are
left out of clustering entirely; so are superseded ones (a stale fact is not merged into the
current one). Similarities are the cosines of the notes' vectors as the index
holds them (the daemon's watcher keeps it current; one-shot callers reindex first); memories
the index has no vector for yet are not clustered.

A merge writes one new memory note and archives the originals; nothing is deleted. Order of
writes, each step harmless if it is the last one to happen:

1. the new note is created in the memory folder (never overwriting), from the originals as
   they are now;
2. in the same `MemoryStore.rewrite` (the store's lock held throughout: no touch is lost in
   between; pending journalled uses are carried), each original gets `stm_status: archived`
   and `stm_merged_into: <new id>`, written to the note at once (guarded, other bytes kept) so
   the move never carries a note whose file still says active;
3. an explanation (when, why, where the originals are, how to restore one) is appended to
   the new note, guarded; it is left out until now so that after a crash in 2 the new note's
   text stays close to the originals' and the next listing clusters them again;
4. the originals move to the archive folder; the index follows.

A crash after 1 leaves the originals active. When the next listing shows them in a cluster with
the new memory, merging that cluster again loses nothing (its body repeats some text). When it
shows the same cluster without it (the new note not indexed yet, or not close enough to each
original), merging it that day finishes the interrupted merge: the new memory's id is the
cluster's and the day's, so the note already carrying it is found (catalog, else that day's
files in the memory folder) and the originals are archived into it; a second note with that id
is never written. An id whose memory is gone or archived (the user deleted it, or undo
archived it, and the members were merged again that day) is not taken again: each id is
spent as its note is written, and the day's next id is taken. The same holds when an archive
write is refused because the user edited that original meanwhile (ConcurrentEdit): the
originals written before it are archived, the rest stay active. A crash during 4 leaves
archived notes outside the archive folder; the next sweep moves them (`Lifecycle.finish_moves`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Protocol

import numpy as np

from vaultmem.core.consolidation import (
    KEEP_APART,
    MERGE,
    REVIEW,
    Cluster,
    merge_states,
    plan_clusters,
)
from vaultmem.core.decay import score
from vaultmem.core.device_sync import consolidated_id
from vaultmem.core.memory import ACTIVE, ARCHIVED, MemoryState, state_to_fields
from vaultmem.engine.merged_note import merge_explanation, merged_body, merged_link, same_body
from vaultmem.engine.moves import Mover
from vaultmem.engine.parts import EngineParams, IndexOpener
from vaultmem.engine.results import (
    AutoMergeResult,
    ClusterMember,
    ClustersResult,
    ClusterView,
    MergeResult,
    MergeSkipped,
)
from vaultmem.engine.upkeep_results import Move
from vaultmem.engine.views import Views
from vaultmem.errors import ConcurrentEdit, InvalidInput, NoteError, NotFound
from vaultmem.index.base import Vector
from vaultmem.index.catalog import Catalog
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.store.memory_notes import MemoryNote, Rewrite
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.memories import create_memory_note, memory_filename

SOURCE = "consolidation"


class SpentIds(Protocol):
    """The ids merges have written memories under (`engine/operation_log.py`)."""

    def spend(self, memory_id: str, day: date) -> None: ...

    def spent(self, memory_id: str) -> bool: ...


_MAX_MERGES_A_DAY = 20  # of one cluster's members: beyond it, something loops
_ROWS_PER_BLOCK = 1024  # bounds the similarity matrix held at once to 1024 × N floats


@dataclass(frozen=True)
class _Clusters:
    clusters: list[Cluster]
    memories: dict[str, MemoryNote]  # by memory id
    vectors: dict[str, Vector]  # the clustered memories' note vectors, by path


class Consolidator:
    def __init__(
        self, *, root: Path, catalog: Catalog, store: MemoryStore, sync: IndexSync,
        views: Views, mover: Mover, index: IndexOpener, params: EngineParams,
        spent_ids: SpentIds,
    ) -> None:
        """`spent_ids` remembers the ids merges wrote memories under (the operation log): a
        merged note the user deleted leaves no other trace."""
        self.root = root
        self.catalog = catalog
        self.store = store
        self.sync = sync
        self.views = views
        self.mover = mover
        self.index = index
        self.params = params
        self.spent_ids = spent_ids

    # listing ------------------------------------------------------------------------------

    def clusters(self) -> list[Cluster]:
        """Clusters of active, unpinned memories, best cohesion first."""
        return self._clusters(self.store.snapshot()).clusters

    def list_clusters(self, now: datetime) -> ClustersResult:
        return ClustersResult(self._cluster_views(self._clusters(self.store.snapshot()), now))

    # merging ------------------------------------------------------------------------------

    def merge(self, cluster_id: str, now: datetime) -> MergeResult:
        """Merge one listed cluster into a new memory and archive its members."""
        snapshot = self.store.snapshot()
        return self._merge(cluster_id, self._clusters(snapshot), now, snapshot)

    def auto_merge(self, now: datetime) -> AutoMergeResult:
        """Merge every cluster cohesive enough to merge on its own (the scheduled job); list the
        review-band clusters left for a decision. A cluster that changed meanwhile, or whose
        note could not be written safely, is skipped with the reason. The catalog, the vault
        and the note vectors are read once: after each merge the clusters are planned again
        from that snapshot as the merge left it (only the notes it wrote are read again)."""
        merged: list[MergeResult] = []
        skipped: list[MergeSkipped] = []
        snapshot = self.store.snapshot()
        current = self._clusters(snapshot)
        for cluster in [c for c in current.clusters if c.action == MERGE]:
            try:
                merged.append(self._merge(cluster.id, current, now, snapshot))
            except (NotFound, NoteError) as exc:
                skipped.append(MergeSkipped(cluster.id, exc.message))
            current = self._clusters(snapshot, current.vectors)
        review = tuple(c for c in self._cluster_views(current, now) if c.action == REVIEW)
        return AutoMergeResult(merged=tuple(merged), review=review, skipped=tuple(skipped))

    def _merge(self, cluster_id: str, current: _Clusters, now: datetime,
               snapshot: Snapshot) -> MergeResult:
        """Merge the cluster `cluster_id` of `current` (planned from `snapshot`, which then
        follows every note the merge writes, creates or moves)."""
        cluster = _find(current.clusters, cluster_id)
        planned = self._best_first(cluster, current.memories, now)
        new_id, earlier = self._merged_id(cluster.id, now.date())
        created: list[tuple[str, str, str | None]] = []  # the merged note's path, title, body

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            # the members as they are now, pending uses included: none is lost in between
            by_id = {m.state.id: m for m in current if m.state.status == ACTIVE
                     and not m.state.pinned and m.state.superseded_by is None}
            if set(by_id) != set(cluster.members):
                raise NotFound(f"cluster {cluster.id!r}: cluster changed: list clusters again")
            members = [by_id[m.state.id] for m in planned]
            if earlier is not None:  # an interrupted merge of these members wrote it
                created.append((earlier.path, earlier.note.title, None))
            else:
                state = replace(
                    merge_states([m.state for m in members], cluster.cohesion, new_id,
                                 now, strength_max=self.params.reinforce.strength_max,
                                 decay=self.params.decay),
                    source=SOURCE,
                )
                self.spent_ids.spend(new_id, now.date())  # before the note: never forgotten
                created.append(self._write_merged(members, state, now, snapshot))
            return [Rewrite(m, replace(m.state, status=ARCHIVED, merged_into=new_id))
                    for m in members]

        store = self.store
        try:
            archived = store.rewrite([m.path for m in planned], plan)
        except Exception:  # some notes may be written: the snapshot reads them again
            store.follow(snapshot, [*(m.path for m in planned), *(c[0] for c in created)])
            raise
        path, title, body = created[0]
        self._explain(path, body, len(archived), cluster.cohesion, now.date())
        self.sync.sync_paths([path])
        store.follow(snapshot, [path, *(m.path for m in planned)])
        targets = [(m, self.mover.to_archive(m.path, snapshot)) for m in archived]
        moves = tuple(Move(m.state.id, m.path, to) for m, to in targets if to)
        path = self._plain_name(path, title, now.date(), snapshot)
        return MergeResult(cluster_id=cluster.id, merged_into=self.views.get(path, now),
                           archived=moves)

    def _merged_id(self, cluster_id: str, day: date) -> tuple[str, MemoryNote | None]:
        """The new memory's id, and the note an interrupted merge of this cluster wrote with
        it today, if any. The id is the cluster's and the day's, so that two devices, or a
        merge interrupted and run again, agree on it. An id already spent today (its memory
        archived by an undo, forgotten, or deleted by its user; its members brought back and
        merged again) is never taken again: the next of that day's ids is."""
        for turn in range(1, _MAX_MERGES_A_DAY + 1):
            new_id = consolidated_id(cluster_id if turn == 1 else f"{cluster_id}#{turn}", day)
            earlier = self._earlier_merge(new_id, day)
            if earlier is not None and earlier.state.status == ACTIVE:
                return new_id, earlier
            if earlier is None and not self.spent_ids.spent(new_id):
                return new_id, None
        raise NotFound(f"cluster {cluster_id!r} was merged {_MAX_MERGES_A_DAY} times today: "
                       "merge it again tomorrow")

    def _earlier_merge(self, new_id: str, day: date) -> MemoryNote | None:
        """The note an interrupted merge of this cluster wrote today, if one carries `new_id`:
        from the catalog, or (not indexed yet: the crash came before) among today's files in
        the memory folder that the catalog does not know (only those are read)."""
        paths = self.catalog.paths_for_note_id(new_id)
        if not paths:
            folder = self.root / self.params.memory_folder.strip("/")
            today = [f.relative_to(self.root).as_posix()
                     for f in sorted(folder.glob(f"{day.isoformat()} *.md"))]
            known = self.catalog.records_for(today)
            paths = [path for path in today if path not in known]
        notes = (self.store.try_load(path) for path in paths)
        return next((m for m in notes if m is not None and m.state.id == new_id), None)

    def _explain(self, path: str, body: str | None, count: int, cohesion: float,
                 day: date) -> None:
        """Add the explanation once the originals are archived (a crash before leaves the new
        note's text as close to theirs as possible, so the next listing clusters them again).
        A note whose body is no longer the `body` this merge wrote (its user already edited
        it) is left as it is: its text is the user's now. (`body` None: an interrupted merge's
        note, whose written body is not known here; explained as found.)"""
        addition = merge_explanation(count, cohesion, day, self.params.archive_folder)

        def plan(current: list[MemoryNote]) -> list[Rewrite]:
            return [Rewrite(m, m.state, section=addition) for m in current
                    if body is None or same_body(m.note.body, body)]

        with contextlib.suppress(ConcurrentEdit):
            self.store.rewrite([path], plan)

    def _plain_name(self, path: str, title: str, day: date, snapshot: Snapshot) -> str:
        """The merged note under its plain name once the originals left it free (a member
        saved the same day under the same title held it, so the note was created as `-2`)."""
        plain = memory_filename(day, title)
        if PurePosixPath(path).name == plain:
            return path
        renamed = self.store.rename_to(path, plain)
        if renamed is None:
            return path
        self.sync.sync_paths([path, renamed])
        self.store.follow(snapshot, [path, renamed])
        return renamed

    # plumbing -----------------------------------------------------------------------------

    def _clusters(self, snapshot: Snapshot, known: dict[str, Vector] | None = None
                  ) -> _Clusters:
        """The clusters of the snapshot's candidates; the index is asked only for the vectors
        `known` (an earlier plan's, by path) does not hold."""
        memories = _candidates(self.store.iter_memories(snapshot))
        known = known or {}
        vectors = {m.path: known[m.path] for m in memories if m.path in known}
        missing = [m.path for m in memories if m.path not in known]
        if missing:
            vectors.update(self.index().note_vectors(missing))
        present = [m for m in memories if m.path in vectors]
        similarity = _similarities(
            [m.state.id for m in present], [vectors[m.path] for m in present],
            self.params.cluster_threshold,
        )
        clusters = plan_clusters(
            [m.state.id for m in present], similarity,
            threshold=self.params.cluster_threshold, max_size=self.params.cluster_max_size,
            merge_cohesion=self.params.merge_cohesion,
            review_cohesion=self.params.review_cohesion,
        )
        return _Clusters(clusters, {m.state.id: m for m in present},
                         {m.path: vectors[m.path] for m in present})

    def _cluster_views(self, current: _Clusters, now: datetime) -> tuple[ClusterView, ...]:
        return tuple(self._cluster_view(c, current.memories, now) for c in current.clusters)

    def _score(self, memory: MemoryNote, now: datetime) -> float:
        return score(memory.state, now, self.params.decay)

    def _best_first(
        self, cluster: Cluster, memories: dict[str, MemoryNote], now: datetime
    ) -> list[MemoryNote]:
        if cluster.action == KEEP_APART:
            raise InvalidInput(
                f"cluster {cluster.id} is not cohesive enough to merge (cohesion "
                f"{cluster.cohesion:.4f} < {self.params.review_cohesion}): its memories are "
                "kept apart"
            )
        members = [memories[member] for member in cluster.members]
        return sorted(members, key=lambda m: (-self._score(m, now), m.state.id))

    def _cluster_view(
        self, cluster: Cluster, memories: dict[str, MemoryNote], now: datetime
    ) -> ClusterView:
        members = [memories[member] for member in cluster.members]
        return ClusterView(
            id=cluster.id, cohesion=cluster.cohesion, action=cluster.action,
            members=tuple(ClusterMember(id=m.state.id, path=m.path, title=m.note.title,
                                        use_count=m.state.use_count,
                                        score=self._score(m, now))
                          for m in members),
        )

    def _write_merged(self, members: list[MemoryNote], state: MemoryState, now: datetime,
                      snapshot: Snapshot) -> tuple[str, str, str]:
        """The merged note, created: its path, title and body."""
        # the merged note's own plain name too (`_plain_name` gives it that name once the
        # originals are archived): a link to an original of that name must then say its folder
        own = (f"{self.params.memory_folder.strip('/')}/"
               f"{memory_filename(now.date(), members[0].note.title)}")
        paths = set(snapshot.records) - {m.path for m in members} | {own}
        planned = {m.path: f"{self.params.archive_folder.strip('/')}/{PurePosixPath(m.path).name}"
                   for m in members}
        links = [merged_link(planned[m.path], paths | set(planned.values()), m.note.title)
                 for m in members]
        body = merged_body(members, links)
        path, _ = create_memory_note(
            self.root, self.params.memory_folder, day=now.date(),
            title=members[0].note.title, body=body,
            stm_fields=state_to_fields(state), tags=list(state.tags),
        )
        return path, members[0].note.title, body


def _candidates(memories: Iterable[MemoryNote]) -> list[MemoryNote]:
    """Active, unpinned memories; of notes sharing one stm_id (a copied note) the first by
    path is taken, so ids stay unique."""
    chosen: dict[str, MemoryNote] = {}
    for memory in memories:
        if (memory.state.status == ACTIVE and not memory.state.pinned
                and memory.state.superseded_by is None):  # a stale fact is not merged in
            chosen.setdefault(memory.state.id, memory)
    return list(chosen.values())


def _similarities(
    ids: Sequence[str], vectors: Sequence[Vector], threshold: float
) -> dict[tuple[str, str], float]:
    """Cosines of unit vectors for the pairs at or above `threshold`, keyed (smaller id, larger)."""
    if len(ids) < 2:
        return {}
    matrix = np.stack(vectors).astype(np.float32)
    pairs: dict[tuple[str, str], float] = {}
    for start in range(0, len(ids), _ROWS_PER_BLOCK):
        block = matrix[start:start + _ROWS_PER_BLOCK] @ matrix.T
        for row, col in zip(*np.nonzero(block >= threshold), strict=True):
            i, j = start + int(row), int(col)
            if i < j:
                key = (ids[i], ids[j]) if ids[i] < ids[j] else (ids[j], ids[i])
                pairs[key] = min(float(block[row, col]), 1.0)
    return pairs


def _find(clusters: Sequence[Cluster], cluster_id: str) -> Cluster:
    for cluster in clusters:
        if cluster.id == cluster_id.strip():
            return cluster
    raise NotFound(
        f"cluster {cluster_id!r}: cluster changed or no longer exists: list clusters again"
    )
