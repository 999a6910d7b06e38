"""When the chunk index is optimised: one pure decision, asked at every occasion.

Every LanceDB write adds a fragment, and rows written since the last optimise are searched
without the full-text index (a scan: search p50 up to 1.7x after a burst of edits, see
docs/benchmarks.md). An optimise compacts the fragments and brings the index up to date; it
takes ~0.8 s at 10k chunks, so it runs when it pays, never on every write. The occasions:

- WRITE: after each index write, once `every_writes` writes have piled up (0: never here);
- OPEN: the index was opened with fragments left by an earlier process (whose write counter
  died with it);
- INDEXED: an indexing run (start-up, rescan, reindex) ended with writes;
- SCHEDULED: the daemon's optimise job, run every `optimize_interval_minutes` (while writes
  keep coming) and QUIET_S seconds after a burst of writes ends. A small pile (fewer writes
  than `every_writes`, every row's text still scanned by searches) is left to the next search
  or the write rule: an optimise costs ~0.5 CPU-s at 10k chunks however small the pile
  (docs/benchmarks.md, "Idle CPU"), which an idle daemon should not spend on an index nobody
  searches;
- SEARCHED: a search ran while writes were waiting (the daemon asks AFTER_SEARCH_S after the
  last such search): the user is back, and the scan of the pile costs each search ms;
- SYNCED: a sync ended (not one let in between another's slices) leaving more rows with text
  out of the full-text index than a search scans the text of (`text_waiting`, lance.py's
  FLAT_TEXT_ROWS): their words are searchable again from the answer after it.

LanceIndex executes the decision (`LanceIndex.upkeep`); this module reads no table and no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: A burst of writes has ended once nothing was written for this long.
QUIET_S = 5.0
#: More fragments than this when the index opens: optimise.
OPEN_FRAGMENT_LIMIT = 8
#: A pile that searches met is optimised once no search came for this long.
AFTER_SEARCH_S = 1.0


class Occasion(Enum):
    WRITE = "write"
    OPEN = "open"
    INDEXED = "indexed"
    SCHEDULED = "scheduled"
    SYNCED = "synced"
    SEARCHED = "searched"


@dataclass(frozen=True)
class UpkeepPolicy:
    """Whether an optimise is due; `every_writes` comes from `optimize_every_writes`."""

    every_writes: int

    def due(self, occasion: Occasion, *, writes: int, fragments: int = 0,
            text_waiting: int = 0) -> str | None:
        """Why an optimise is due now, or None. `writes`: index writes since the last optimise
        in this process; `fragments`: the chunk table's fragment count (read on OPEN only);
        `text_waiting`: rows out of the full-text index whose text searches leave out."""
        if occasion is Occasion.SYNCED:
            if text_waiting > 0:
                return f"{text_waiting} rows' text out of the full-text index after a sync"
            return None
        if occasion is Occasion.WRITE:
            if 0 < self.every_writes <= writes:
                return f"{writes} writes since the last optimise"
            return None
        if occasion is Occasion.OPEN:
            if self.every_writes > 0 and fragments > OPEN_FRAGMENT_LIMIT:
                return f"opened with {fragments} fragments"
            return None
        if writes <= 0:
            return None  # nothing written since the last optimise: nothing to gain
        if occasion is Occasion.SCHEDULED and self.small(writes, text_waiting):
            return None  # left to the next search or the write rule
        return f"{writes} writes since the last optimise, {_WHEN[occasion]}"

    def small(self, writes: int, text_waiting: int) -> bool:
        """Whether a pile of `writes` is small: the write rule takes it in before it grows
        past `every_writes`, and searches still scan all its text."""
        return 0 < writes < self.every_writes and text_waiting == 0


_WHEN = {
    Occasion.INDEXED: "at the end of an indexing run",
    Occasion.SCHEDULED: "by the daemon's optimise job",
    Occasion.SEARCHED: "met by searches",
}
