"""Where the memory store runs, chosen by the composition root. One choice decides two things
that always go together: how a use reaches its note, and how the store finds the memories."""

from __future__ import annotations

from enum import Enum


class StoreMode(Enum):
    #: in-process commands: a use (touch, observe, pin, feedback) is written to its note at
    #: once; nothing keeps the catalog current, so a stat scan finds the changed notes
    IN_PROCESS = "in-process"
    #: the daemon: a use goes to the usage journal at once and into its note at the next
    #: `flush`; its watcher keeps the catalog current, so memories are listed from it and a
    #: parsed note is kept per (mtime, size)
    DAEMON = "daemon"
