"""The composition root: the one place that turns Settings into wired parts.

Heavy parts are lazy: the LanceDB chunk index (1.5 s to import) is opened on first use and the
embedding model loads on the first embedding, so commands that need neither stay instant.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.config import Settings
from vaultmem.core.decay import DecayParams
from vaultmem.core.decisions import Policy
from vaultmem.core.reinforce import ReinforceParams
from vaultmem.engine.device import device_id
from vaultmem.engine.engine import Engine, EngineParams
from vaultmem.engine.indexer import Indexer, IndexerSettings
from vaultmem.engine.journal import JournaledMemoryStore, UsageJournal
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.memory_store import MemoryStore
from vaultmem.index.base import Embedder, IndexOptions
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import make_embedder
from vaultmem.index.identity import identity_problem, index_exists
from vaultmem.vault.ignore import IgnoreRules

if TYPE_CHECKING:
    from vaultmem.index.lance import LanceIndex


class LazyIndex:
    """Opens the LanceDB chunk index on first use (thread-safe)."""

    def __init__(self, path: Path, embedder_name: str, options: IndexOptions) -> None:
        self.path = path
        self.embedder_name = embedder_name
        self.options = options
        self._index: LanceIndex | None = None
        self._lock = threading.Lock()

    def __call__(self) -> LanceIndex:
        with self._lock:
            if self._index is None:
                from vaultmem.index.lance import LanceIndex

                self._index = LanceIndex(self.path, self.embedder_name, self.options)
            return self._index

    @property
    def is_open(self) -> bool:
        return self._index is not None

    def exists(self) -> bool:
        return self._index is not None or index_exists(self.path)

    def identity_problem(self) -> str | None:
        """Why the stored index must be rebuilt; checked without importing LanceDB."""
        if self._index is not None:
            return self._index.rebuilt_reason
        return identity_problem(self.path, self.embedder_name)

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None


@dataclass
class App:
    settings: Settings
    root: Path
    data_dir: Path
    engine: Engine
    lifecycle: Lifecycle
    catalog: Catalog
    index: LazyIndex
    embedder: Embedder
    ledger: UsageJournal | None = None  # in-process: this device's use counts (core.sync)

    def close(self) -> None:
        self.index.close()
        self.catalog.close()
        if self.ledger is not None:
            self.ledger.close()


def engine_params(settings: Settings, vault_name: str) -> EngineParams:
    return EngineParams(
        vault_name=vault_name,
        decay=DecayParams(
            model=settings.decay_model, half_life_days=settings.half_life_days,
            alpha=settings.power_law_alpha, beta=settings.use_count_beta,
            two_component_weight=settings.two_component_weight,
            fast_lambda=settings.two_component_fast_lambda,
            slow_lambda=settings.two_component_slow_lambda,
            type_half_lives=settings.type_half_lives,
        ),
        policy=Policy(
            promote_threshold=settings.promote_threshold,
            promote_min_uses=settings.promote_min_uses,
            promote_use_count=settings.promote_fast_use_count,
            promote_window_days=settings.promote_fast_window_days,
            forget_threshold=settings.forget_threshold,
            forget_grace_hours=settings.forget_grace_hours,
            max_active_memories=settings.max_active_memories,
        ),
        reinforce=ReinforceParams(
            boost_step=settings.boost_step, strength_max=settings.strength_max,
            cross_domain_threshold=settings.cross_domain_threshold,
            review_low=settings.review_band_low, review_high=settings.review_band_high,
            feedback_penalty=settings.feedback_penalty,
        ),
        top_k=settings.search_top_k, review_fraction=settings.review_fraction,
        related_links=settings.related_links, memory_folder=settings.memory_folder,
        promoted_folder=settings.promoted_folder, archive_folder=settings.archive_folder,
        cluster_threshold=settings.cluster_threshold, cluster_max_size=settings.cluster_max_size,
        merge_cohesion=settings.merge_cohesion, review_cohesion=settings.review_cohesion,
        near_duplicate_cosine=settings.near_duplicate_cosine,
        min_content_chars=settings.min_content_chars,
        max_content_chars=settings.max_content_chars,
    )


def build_app(
    settings: Settings, *, embedder: Embedder | None = None, journal: UsageJournal | None = None
) -> App:
    """Wire the engine. With a usage journal (the daemon), memory writes are journalled."""
    root = settings.require_vault().resolve()
    data_dir = settings.vault_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # index and catalog: private
    rules = IgnoreRules.from_vault(root, extra_folders=settings.ignore_folders)
    catalog = Catalog(data_dir / "catalog.sqlite3")
    embedder = embedder or make_embedder(settings.embedding_model)
    index = LazyIndex(data_dir / "lance", embedder.name, IndexOptions(
        optimize_every=settings.optimize_every_writes, index_cache_mb=settings.index_cache_mb,
        metadata_cache_mb=settings.metadata_cache_mb,
    ))
    indexer = Indexer(
        root, rules, catalog, index, embedder,
        IndexerSettings(
            chunk_max_chars=settings.chunk_max_chars, chunk_min_chars=settings.chunk_min_chars,
            max_note_bytes=settings.max_note_bytes,
        ),
    )
    device = device_id(data_dir, settings.device_id)
    ledger = UsageJournal(data_dir / "usage.sqlite3") if journal is None else None
    memories: MemoryStore = (
        MemoryStore(root, rules, catalog, device=device, archive_folder=settings.archive_folder,
                    ledger=ledger)
        if journal is None
        else JournaledMemoryStore(root, rules, catalog, journal, device=device,
                                  archive_folder=settings.archive_folder)
    )
    engine = Engine(
        root=root, rules=rules, catalog=catalog, memories=memories, indexer=indexer,
        index=index, embedder=embedder, params=engine_params(settings, root.name),
    )
    return App(
        settings=settings, root=root, data_dir=data_dir, engine=engine,
        lifecycle=Lifecycle(engine), catalog=catalog, index=index, embedder=embedder,
        ledger=ledger,
    )
