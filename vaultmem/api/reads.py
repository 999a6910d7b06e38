"""The handlers of the operations that only read (`api/operations.py` lists them): each
takes the Api's parts, the checked body and `now`, and returns a typed result
(`engine/results.py`; `health`'s answer is a JSON-ready dict)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from vaultmem import __version__
from vaultmem.api.parts import ApiParts
from vaultmem.core.json_types import JSON
from vaultmem.core.ranking import MATCH_FLOOR
from vaultmem.engine.filters import SearchFilters
from vaultmem.engine.memory_admin import ListFilters
from vaultmem.engine.results import (
    ClustersResult,
    ListResult,
    MemoryView,
    RelatedResult,
    ReviewResult,
    SearchResult,
)
from vaultmem.engine.status_results import StatusAnswer
from vaultmem.errors import InvalidInput


def health(parts: ApiParts, body: JSON, now: datetime) -> JSON:
    return {"status": "ok", "version": __version__, "vault": parts.vault_name}


def status(parts: ApiParts, body: JSON, now: datetime) -> StatusAnswer:
    snapshot = parts.status.snapshot()  # the catalog and the vault, read once
    status = parts.status.status(now, per_file=body["files"], snapshot=snapshot)
    sync = parts.reconciler.report(snapshot)
    if parts.daemon_status is not None:
        return StatusAnswer(status, sync, daemon=parts.daemon_status())
    # nothing watches the vault: say how far the index is behind it
    return StatusAnswer(status, sync, unindexed_changes=parts.freshness.unindexed_changes(snapshot))


def search(parts: ApiParts, body: JSON, now: datetime) -> SearchResult:
    filters = SearchFilters(
        tags_any=tuple(body.get("tags", ())), tags_all=tuple(body.get("all_tags", ())),
        type=memory_type(parts, body.get("type")),
        statuses=tuple(body.get("status", ("active", "promoted"))),
        folder=body.get("folder"), window_days=body.get("window_days"),
        include_regular=not body["memories_only"],
    )
    floor = MATCH_FLOOR if body["matched_only"] else 0.0
    answer = parts.search.search(body["query"], now, top_k=body.get("top_k"), filters=filters,
                                 include_review=body["include_review"],
                                 min_relevance=max(floor, body.get("min_relevance", 0.0)))
    # every answer says what the index can promise (starting, indexing: partial, ready)
    return replace(answer, indexing=parts.sync.state())


def memory_type(parts: ApiParts, given: str | None) -> str | None:
    """A type filter in any letter case; an unknown type is refused with the known ones."""
    if given is None:
        return None
    wanted = given.strip().casefold()
    known = parts.memory_types
    if wanted not in known:
        raise InvalidInput(f"unknown memory type {given!r}: use one of {', '.join(known)}")
    return wanted


def related(parts: ApiParts, body: JSON, now: datetime) -> RelatedResult:
    return parts.search.related(ref(body), k=body["top_k"])


def get(parts: ApiParts, body: JSON, now: datetime) -> MemoryView:
    return parts.views.get(body["id"], now)


def review(parts: ApiParts, body: JSON, now: datetime) -> ReviewResult:
    data = parts.views.review(now, limit=body["limit"])
    return replace(data, updates=parts.updates.proposals(now, limit=body["limit"]))


def clusters(parts: ApiParts, body: JSON, now: datetime) -> ClustersResult:
    return parts.consolidator.list_clusters(now)


def list_memories(parts: ApiParts, body: JSON, now: datetime) -> ListResult:
    filters = ListFilters(
        statuses=tuple(body["status"]), tags_any=tuple(body.get("tags", ())),
        type=memory_type(parts, body.get("type")), decision=body.get("decision"),
        pinned=body.get("pinned"),
    )
    return parts.admin.list_memories(now, filters, sort=body["sort"], limit=body["limit"])


def ref(body: JSON) -> str:
    value = body.get("id", body.get("path"))
    assert isinstance(value, str)  # the schema requires exactly one of them
    return value
