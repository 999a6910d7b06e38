"""What the use cases are built from besides their objects: the tunables and the index seam.

`settings_params.engine_params` fills `EngineParams` from Settings (which holds every default); the
composition root hands each use case the parts it uses (docs/architecture.md, "Who gets
what"). `SearchIndex` is what the use cases need of the chunk index: `app.LazyIndex` opens
LanceDB on its first call, so a part that may never search takes the opener, not the index.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from vaultmem.core.decay import DecayParams
from vaultmem.core.decisions import Policy
from vaultmem.core.ranking import ChunkHit
from vaultmem.core.reinforce import ReinforceParams
from vaultmem.index.base import Vector


class SearchIndex(Protocol):
    def vector_search(
        self, vector: Any, k: int, *, paths: Collection[str] | None = None
    ) -> list[ChunkHit]: ...
    def text_search(
        self, query: str, k: int, *, paths: Collection[str] | None = None,
        languages: Collection[str] = (),
    ) -> list[ChunkHit]: ...
    def related(self, path: str, k: int) -> list[tuple[str, float]]: ...
    def note_vectors(self, paths: Collection[str] | None = None) -> dict[str, Vector]: ...


IndexOpener = Callable[[], SearchIndex]  # the chunk index, opened on first use


@dataclass(frozen=True)
class EngineParams:
    """The use cases' tunables; `settings_params.engine_params` fills them from Settings,
    which holds the defaults."""

    vault_name: str
    decay: DecayParams
    policy: Policy
    reinforce: ReinforceParams
    top_k: int
    review_fraction: float
    related_links: int
    memory_folder: str
    promoted_folder: str
    archive_folder: str
    cluster_threshold: float
    cluster_max_size: int
    merge_cohesion: float
    review_cohesion: float
    near_duplicate_cosine: float
    min_content_chars: int
    max_content_chars: int
    resave_window_hours: float = 6.0
    similar_memory_cosine: float = 0.8
