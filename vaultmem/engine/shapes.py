"""The JSON shapes of the answers not typed yet (status's coverage and languages), and the
Obsidian link every answer gives. Typed results and their JSON: `engine/results.py`,
`api/wire.py`. Field names here are a public contract: add fields freely, never rename or
remove one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from vaultmem.core.json_types import JSON
from vaultmem.core.language import LanguageShare, english_only


def obsidian_uri(vault_name: str, path: str) -> str:
    target = path[:-3] if path.lower().endswith(".md") else path
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(target, safe='')}"


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


def languages_json(share: LanguageShare, embedder_name: str, setting: str) -> JSON:
    """How much of the vault is not English, and what to do about it when that is a lot and an
    English-only model serves it."""
    advice = None
    if share.notable and english_only(embedder_name):
        seen = f"about {share.share:.0%} of the notes sampled are not in English"
        if setting == "auto":
            advice = (f"{seen} now, and the English model chosen when the index was built "
                      "understands English only: `vaultmem reindex --choose-model` chooses "
                      "again (the multilingual model; the index is rebuilt)")
        else:
            advice = (f"{seen}, and the model set (embedding_model = {setting!r}) understands "
                      "English only: set embedding_model = \"auto\" or \"multilingual\" and "
                      "reindex (docs/configuration.md)")
    return {"sampled": share.judged, "not_english": share.not_english,
            "not_english_share": round(share.share, 3), "advice": advice}
