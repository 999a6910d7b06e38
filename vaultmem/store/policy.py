"""The memory store's two choices, made by the composition root: how a use reaches its note,
and how the store finds the vault's memories (in the daemon: journalled and catalogued)."""

from __future__ import annotations

from enum import Enum


class Usage(Enum):
    """How a use (touch, observe, pin, feedback) reaches the note."""

    WRITTEN = "written"  # written to the note at once (in-process commands)
    JOURNALLED = "journalled"  # in the usage journal at once, in the note at the next `flush`


class Listing(Enum):
    """How the store finds the vault's memories."""

    SCANNED = "scanned"  # nothing keeps the catalog current: a stat scan finds changed notes
    # a watcher keeps the catalog current (the daemon): memories are listed from it, and a
    # parsed note is kept per (mtime, size)
    CATALOGUED = "catalogued"
