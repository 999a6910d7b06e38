"""The JSON shapes every interface shares: CLI `--json`, the socket, the MCP bridge, the plugin.

Each function turns service values into plain JSON-ready dicts. Field names here are a public
contract: add fields freely, never rename or remove one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from vaultmem.core.decisions import Decision
from vaultmem.core.language import LanguageShare, english_only
from vaultmem.core.memory import MemoryState

JSON = dict[str, Any]


@dataclass(frozen=True)
class SearchHit:
    path: str
    title: str
    snippet: str
    relevance: float
    score: float | None  # memory score; None for regular notes
    final: float
    review: bool
    memory_id: str | None
    tags: tuple[str, ...]
    matched: bool = False  # relevance at or above the documented match threshold
    superseded_by: JSON | None = None  # the newer memory replacing this one: id, path, title, uri


def obsidian_uri(vault_name: str, path: str) -> str:
    target = path[:-3] if path.lower().endswith(".md") else path
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(target, safe='')}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def memory_json(
    *, path: str, title: str, state: MemoryState, score: float, decision: Decision,
    review_priority: float, vault_name: str,
) -> JSON:
    return {
        "id": state.id,
        "path": path,
        "title": title,
        "uri": obsidian_uri(vault_name, path),
        "tags": list(state.tags),
        "type": state.type,
        "status": state.status,
        "pinned": state.pinned,
        "source": state.source,
        "created": _iso(state.created),
        "last_used": _iso(state.last_used),
        "use_count": state.use_count,
        "strength": round(state.strength, 4),
        "review_count": state.review_count,
        "cross_domain_count": state.cross_domain_count,
        "promoted_at": _iso(state.promoted_at),
        "merged_into": state.merged_into,
        "superseded_by": state.superseded_by,
        "supersedes": state.supersedes,
        "possible_update_of": state.possible_update_of,
        "score": round(score, 6),
        "decision": decision.action,
        "reason": decision.reason,
        "review_priority": round(review_priority, 6),
    }


def search_json(hits: Sequence[SearchHit], *, query: str, vault_name: str) -> JSON:
    return {
        "query": query,
        "results": [
            {
                "id": hit.memory_id,
                "path": hit.path,
                "title": hit.title,
                "snippet": hit.snippet,
                "uri": obsidian_uri(vault_name, hit.path),
                "tags": list(hit.tags),
                "relevance": round(hit.relevance, 6),
                "matched": hit.matched,
                "score": None if hit.score is None else round(hit.score, 6),
                "final": round(hit.final, 6),
                "review": hit.review,
                "superseded_by": hit.superseded_by,
            }
            for hit in hits
        ],
    }


def coverage_json(records: Mapping[str, Any], scan_problems: Sequence[str]) -> JSON:
    """`records` maps path → NoteRecord (catalog)."""
    indexed = [r for r in records.values() if r.status == "indexed"]
    skipped = sorted((r for r in records.values() if r.status == "skipped"), key=lambda r: r.path)
    failed = sorted((r for r in records.values() if r.status == "failed"), key=lambda r: r.path)
    warnings = sorted((r for r in indexed if r.reason), key=lambda r: r.path)
    return {
        "indexed": len(indexed),
        "chunks": sum(r.chunk_count for r in indexed),
        "skipped": [{"path": r.path, "reason": r.reason} for r in skipped],
        "failed": [{"path": r.path, "reason": r.reason} for r in failed],
        "warnings": [{"path": r.path, "reason": r.reason} for r in warnings],
        "problems": list(scan_problems),
    }


def languages_json(share: LanguageShare, embedder_name: str) -> JSON:
    """How much of the vault is not English, and what to do about it when that is a lot."""
    advice = None
    if share.notable and english_only(embedder_name):
        advice = (
            f"about {share.share:.0%} of the notes sampled are not in English, and the default "
            "embedding model understands English only: for search by meaning in those "
            "languages, set `embedding_model` to the folder of a multilingual "
            "sentence-transformers model (for example multilingual-e5-small) and reindex "
            "(docs/configuration.md)"
        )
    return {"sampled": share.judged, "not_english": share.not_english,
            "not_english_share": round(share.share, 3), "advice": advice}
