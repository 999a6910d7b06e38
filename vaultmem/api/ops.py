"""The request/response layer every edge shares: the socket, the MCP bridge, the plugin.

`Api.call(op, body)` validates `body` against the op's schema (`validation.py`) before doing
anything (so bad input changes nothing), runs the use case and answers with the shapes of
docs/protocol.md. Errors are VaultmemError subclasses; each edge turns them into its own form.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

from vaultmem import __version__
from vaultmem.api.memory_ops import OPERATIONS as MEMORY_OPERATIONS
from vaultmem.api.memory_ops import Answer, Handler, MemoryOps
from vaultmem.api.validation import validate_body
from vaultmem.api.wire import to_wire
from vaultmem.core.json_types import JSON
from vaultmem.core.ranking import MATCH_FLOOR
from vaultmem.engine.filters import SearchFilters
from vaultmem.engine.freshness import Freshness
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.memory_admin import MemoryAdmin
from vaultmem.engine.memory_updates import Updates
from vaultmem.engine.reconcile import Reconciler
from vaultmem.engine.restore import Restorer
from vaultmem.engine.results import (
    ClustersResult,
    GcResult,
    MemoryView,
    MergeResult,
    ObserveResult,
    PromoteResult,
    ReconcileResult,
    RelatedResult,
    ReviewResult,
    SearchResult,
    SweepResult,
)
from vaultmem.engine.search import Search
from vaultmem.engine.status import Status
from vaultmem.engine.undo import Undoer
from vaultmem.engine.uses import Uses
from vaultmem.engine.views import Views
from vaultmem.engine.write_lane import WriteLane
from vaultmem.errors import DaemonError, InvalidInput
from vaultmem.pipeline.index_ports import Progress
from vaultmem.pipeline.index_sync import IndexSync


class Consolidator(Protocol):
    def list_clusters(self, now: datetime) -> ClustersResult: ...

    def merge(self, cluster_id: str, now: datetime) -> MergeResult: ...


class Api(MemoryOps):
    OPERATIONS: tuple[str, ...] = (
        "health", "status", "search", "related", "get", "save", "touch", "observe", "review",
        "sweep", "gc", "promote", "clusters", "merge_cluster", "reindex", "feedback", "pin",
        "reconcile",
        "restore",
        *MEMORY_OPERATIONS,
        "supersede", "unsupersede",
    )

    def __init__(
        self,
        *,
        vault_name: str,
        memory_types: Collection[str],
        search: Search,
        views: Views,
        uses: Uses,
        status: Status,
        sync: IndexSync,
        freshness: Freshness,
        lifecycle: Lifecycle,
        reconciler: Reconciler,
        restorer: Restorer,
        updates: Updates,
        admin: MemoryAdmin,
        consolidator: Consolidator | None = None,
        undoer: Undoer | None = None,
        daemon_status: Callable[[], dict[str, Any]] | None = None,
        reindex: Callable[[bool], dict[str, Any]] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        progress: Progress | None = None,
        lane: WriteLane | None = None,
    ) -> None:
        """The parts come from the composition root (`App.api`); `memory_types` are the
        known types (the built-in ones and those given a half-life). Without a consolidator,
        clusters and merges answer that they are unavailable; without an undoer, undo does.
        `reindex` replaces the in-process reindex (the daemon's keeps its progress for
        `status`); `progress` follows the in-process one. `lane` is the process's one write
        lane, shared with the daemon's scheduled jobs (a lane of its own when none is given)."""
        self.vault_name = vault_name
        self.memory_types = sorted(memory_types)
        self.search = search
        self.views = views
        self.uses = uses
        self.status = status
        self.sync = sync
        self.freshness = freshness
        self.lifecycle = lifecycle
        self.admin = admin
        self.undoer = undoer
        self.consolidator = consolidator
        self.daemon_status = daemon_status
        self._reindex = reindex
        self._progress = progress
        self.clock = clock
        self.reconciler = reconciler
        self.restorer = restorer
        self.updates = updates
        # saves, sweeps, merges and reindexes move files and write the index: one at a time,
        # in the lane the scheduled jobs hold too (engine/write_lane.py)
        self.lane = lane if lane is not None else WriteLane()
        self._handlers: dict[str, Handler] = self.recorded_handlers({
            op: getattr(self, f"_op_{op}") for op in self.OPERATIONS
        })

    def call(self, op: str, body: Mapping[str, Any]) -> JSON:
        """The operation's answer in the protocol's JSON (what the socket, the CLI and the MCP
        bridge send and show)."""
        answer = to_wire(self.run(op, body))
        assert isinstance(answer, dict)
        return answer

    def run(self, op: str, body: Mapping[str, Any]) -> Answer:
        """The operation's typed result (`engine/results.py`), `body` validated first."""
        handler = self._handlers.get(op)
        if handler is None:
            raise InvalidInput(f"unknown operation {op!r}: use one of {', '.join(self.OPERATIONS)}")
        checked = validate_body(op, body)
        return handler(checked, self.clock())

    # operations ---------------------------------------------------------------------------

    def _op_health(self, body: JSON, now: datetime) -> JSON:
        return {"status": "ok", "version": __version__, "vault": self.vault_name}

    def _op_status(self, body: JSON, now: datetime) -> JSON:
        snapshot = self.status.snapshot()  # the catalog and the vault, read once
        data = self.status.status(now, per_file=body["files"], snapshot=snapshot)
        data["sync"] = self.reconciler.report(snapshot)
        if self.daemon_status is not None:
            data["daemon"] = self.daemon_status()
        else:  # nothing watches the vault: say how far the index is behind it
            data["unindexed_changes"] = self.freshness.unindexed_changes(snapshot)
        return data

    def _op_search(self, body: JSON, now: datetime) -> SearchResult:
        filters = SearchFilters(
            tags_any=tuple(body.get("tags", ())), tags_all=tuple(body.get("all_tags", ())),
            type=self._memory_type(body.get("type")),
            statuses=tuple(body.get("status", ("active", "promoted"))),
            folder=body.get("folder"), window_days=body.get("window_days"),
            include_regular=not body["memories_only"],
        )
        floor = MATCH_FLOOR if body["matched_only"] else 0.0
        answer = self.search.search(body["query"], now, top_k=body.get("top_k"), filters=filters,
                                    include_review=body["include_review"],
                                    min_relevance=max(floor, body.get("min_relevance", 0.0)))
        # every answer says what the index can promise (starting, indexing: partial, ready)
        return replace(answer, indexing=self.sync.state())

    def _memory_type(self, given: str | None) -> str | None:
        """A type filter in any letter case; an unknown type is refused with the known ones."""
        if given is None:
            return None
        wanted = given.strip().casefold()
        known = self.memory_types
        if wanted not in known:
            raise InvalidInput(f"unknown memory type {given!r}: use one of {', '.join(known)}")
        return wanted

    def _op_related(self, body: JSON, now: datetime) -> RelatedResult:
        return self.search.related(_ref(body), k=body["top_k"])

    def _op_get(self, body: JSON, now: datetime) -> MemoryView:
        return self.views.get(body["id"], now)

    def _op_save(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("save"):
            return self.updates.save(
                body["content"], now, title=body.get("title"), tags=body.get("tags", ()),
                type=body.get("type"), strength=body["strength"], pinned=body["pinned"],
                source=body.get("source"), force=body["force"],
                supersedes=body.get("supersedes"),
            )

    def _op_touch(self, body: JSON, now: datetime) -> MemoryView:
        return self.uses.touch(_ref(body), now, boost=body["boost"])

    def _op_feedback(self, body: JSON, now: datetime) -> MemoryView:
        return self.uses.feedback(body["id"], body["helpful"], now)

    def _op_pin(self, body: JSON, now: datetime) -> MemoryView:
        return self.uses.set_pinned(body["id"], body["pinned"], now)

    def _op_observe(self, body: JSON, now: datetime) -> ObserveResult:
        return self.uses.observe(body["ids"], body["context_tags"], now)

    def _op_review(self, body: JSON, now: datetime) -> ReviewResult:
        data = self.views.review(now, limit=body["limit"])
        return replace(data, updates=self.updates.proposals(now, limit=body["limit"]))

    def _op_sweep(self, body: JSON, now: datetime) -> SweepResult:
        with self.lane.hold("sweep"):
            return self.lifecycle.sweep(now, dry_run=body["dry_run"])

    def _op_gc(self, body: JSON, now: datetime) -> GcResult:
        with self.lane.hold("gc"):
            return self.lifecycle.gc(now, apply=body["apply"])

    def _op_reconcile(self, body: JSON, now: datetime) -> ReconcileResult:
        with self.lane.hold("reconcile"):
            return self.reconciler.reconcile(apply=body["apply"])

    def _op_promote(self, body: JSON, now: datetime) -> PromoteResult:
        with self.lane.hold("promote"):
            return self.lifecycle.promote(body.get("id"), now, dry_run=body["dry_run"])

    def _op_restore(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("restore"):
            return self.restorer.restore(body["id"], now)

    def _op_supersede(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("supersede"):
            return self.updates.superseder.supersede(body["id"], body["by"], now)

    def _op_unsupersede(self, body: JSON, now: datetime) -> Answer:
        with self.lane.hold("unsupersede"):
            return self.updates.superseder.unsupersede(body["id"], now)

    def _op_clusters(self, body: JSON, now: datetime) -> ClustersResult:
        return self._consolidator().list_clusters(now)

    def _op_merge_cluster(self, body: JSON, now: datetime) -> MergeResult:
        with self.lane.hold("merge_cluster"):
            return self._consolidator().merge(body["cluster_id"], now)

    def _op_reindex(self, body: JSON, now: datetime) -> JSON:
        with self.lane.hold("reindex"):
            if self._reindex is not None:
                return self._reindex(body["full"])
            report = self.sync.reindex(full=body["full"], progress=self._progress)
        return report.to_json()

    def _consolidator(self) -> Consolidator:
        if self.consolidator is None:
            raise DaemonError("consolidation is not available here: it runs in the daemon")
        return self.consolidator


def _ref(body: JSON) -> str:
    ref = body.get("id", body.get("path"))
    assert isinstance(ref, str)  # the schema requires exactly one of them
    return ref


# bodies from the wire -------------------------------------------------------------------------
