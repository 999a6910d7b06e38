"""Shared helpers for the index tests: notes split into paragraphs, embedded with FakeEmbedder."""

from __future__ import annotations

from dataclasses import replace

from vaultmem.config import Settings
from vaultmem.index.base import ChunkRecord, NoteRecord, chunk_id_for
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.settings_params import index_options

EMBEDDER = FakeEmbedder(64)
OPTIONS = index_options(Settings())  # the index as the app opens it by default

NOTES = {
    "animals/cats.md": "Cats sleep most of the day.\n\nA kitten plays with yarn on the rug.",
    "animals/dogs.md": "Dogs love long walks.\n\nA puppy chews shoes and barks at the mailman.",
    "memory/decay.md": "Memory decays over time unless it is reinforced by review.",
    "memory/review.md": "Spaced review reinforces memory; each review slows the decay.",
    "finance/taxes.md": "The quarterly tax filing deadline is in April.\n\nKeep receipts.",
}


def note(path: str, body: str, **fields: object) -> tuple[NoteRecord, list[ChunkRecord]]:
    """A record and its embedded paragraph chunks."""
    paragraphs = [p for p in body.split("\n\n") if p.strip()]
    vectors = EMBEDDER.embed(paragraphs)
    chunks = [
        ChunkRecord(chunk_id_for(path, i), path, i, "", text, vectors[i])
        for i, text in enumerate(paragraphs)
    ]
    record = NoteRecord(
        path=path,
        file_hash=f"file-{hash(body) & 0xFFFF:x}",
        body_hash=f"body-{hash(body) & 0xFFFF:x}",
        title=path.rsplit("/", 1)[-1].removesuffix(".md"),
        tags=("test",),
        aliases=(),
        links=(),
        note_id="",
        status="indexed",
        reason="",
        mtime_ns=1_700_000_000_000_000_000,
        size=len(body),
        chunk_count=len(chunks),
    )
    return replace(record, **fields), chunks  # type: ignore[arg-type]


def all_notes() -> list[tuple[NoteRecord, list[ChunkRecord]]]:
    return [note(path, body) for path, body in NOTES.items()]
