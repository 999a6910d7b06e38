"""Status's coverage and languages, built from the catalog's records and a language sample,
and the Obsidian link every answer gives. Typed results: `engine/results.py`,
`engine/status_results.py`; their JSON: `api/wire.py`, `api/wire_status.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from vaultmem.core.language import LanguageShare, english_only
from vaultmem.engine.status_results import Coverage, Languages, PathReason
from vaultmem.index.base import NoteRecord


def obsidian_uri(vault_name: str, path: str) -> str:
    target = path[:-3] if path.lower().endswith(".md") else path
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(target, safe='')}"


def coverage(records: Mapping[str, NoteRecord], scan_problems: Sequence[str]) -> Coverage:
    """`records`: the catalog's, by path."""
    indexed = [r for r in records.values() if r.status == "indexed"]
    skipped = sorted((r for r in records.values() if r.status == "skipped"), key=lambda r: r.path)
    failed = sorted((r for r in records.values() if r.status == "failed"), key=lambda r: r.path)
    warnings = sorted((r for r in indexed if r.reason), key=lambda r: r.path)
    return Coverage(
        indexed=len(indexed),
        chunks=sum(r.chunk_count for r in indexed),
        skipped=tuple(PathReason(r.path, r.reason) for r in skipped),
        failed=tuple(PathReason(r.path, r.reason) for r in failed),
        warnings=tuple(PathReason(r.path, r.reason) for r in warnings),
        problems=tuple(scan_problems),
    )


def languages(share: LanguageShare, embedder_name: str, setting: str) -> Languages:
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
    return Languages(sampled=share.judged, not_english=share.not_english,
                     not_english_share=share.share, advice=advice)
