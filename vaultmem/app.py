"""The composition root: the one place that turns Settings into wired parts.

The CLI, the daemon and the MCP bridge get everything they use from here: the App (every part
open, each use case given exactly the parts it uses in `build_app`; docs/architecture.md, "Who
gets what"), its Api and, for the daemon, `DaemonParams`. Every default lives in
`config.Settings`; the parameter objects the parts take are filled from it (here for the
daemon, in `settings_params.py` for the rest) and have no defaults of their own. Heavy parts
are lazy: the LanceDB chunk index (1.5 s to import) is opened on first use and the embedding
model loads on the first embedding, so commands that need neither stay instant.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultmem.api.ops import Api
from vaultmem.api.parts import ApiParts
from vaultmem.config import AUTO_MODEL, Settings, VaultPaths
from vaultmem.core.json_types import JSON
from vaultmem.core.language import ENGLISH_MODEL, MULTILINGUAL_MODEL
from vaultmem.core.memory import MEMORY_TYPES
from vaultmem.engine.consolidator import Consolidator
from vaultmem.engine.filters import FilterIndex
from vaultmem.engine.freshness import Freshness
from vaultmem.engine.lifecycle import Lifecycle
from vaultmem.engine.memory_admin import MemoryAdmin
from vaultmem.engine.memory_updates import Updates
from vaultmem.engine.model_choice import ModelInUse, choose_for_vault
from vaultmem.engine.moves import Mover
from vaultmem.engine.operation_log import OperationLog
from vaultmem.engine.reconcile import Reconciler
from vaultmem.engine.restore import Restorer
from vaultmem.engine.search import Search
from vaultmem.engine.status import Status
from vaultmem.engine.status_results import DaemonStatus
from vaultmem.engine.superseder import Superseder
from vaultmem.engine.undo import Undoer
from vaultmem.engine.uses import Uses
from vaultmem.engine.views import Views
from vaultmem.engine.write_lane import WriteLane
from vaultmem.errors import InvalidInput
from vaultmem.index.base import Embedder, IndexOptions
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import make_embedder
from vaultmem.index.identity import (
    forget_choice,
    identity_problem,
    index_exists,
    record_choice,
    recorded_choice,
)
from vaultmem.pipeline.index_ports import Progress, ReindexResult
from vaultmem.pipeline.index_sync import IndexSync
from vaultmem.pipeline.indexer import Indexer
from vaultmem.settings_params import (
    embedder_options,
    engine_params,
    index_options,
    indexer_options,
    update_params,
)
from vaultmem.store.device import device_id
from vaultmem.store.journal import UsageJournal
from vaultmem.store.memory_store import MemoryStore
from vaultmem.store.mode import StoreMode
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
        self._on_pile_searched: Callable[[], object] | None = None
        self._lock = threading.Lock()

    def __call__(self) -> LanceIndex:
        with self._lock:
            if self._index is None:
                from vaultmem.index.lance import LanceIndex

                # LanceDB's version timestamps are naive local times
                self._index = LanceIndex(self.path, self.embedder_name, self.options,
                                         clock=datetime.now)
                self._index.on_pile_searched = self._on_pile_searched
            return self._index

    def when_pile_searched(self, callback: Callable[[], object]) -> None:
        """`callback` after each full-text search that scanned unoptimised writes (the
        daemon's cue to optimise, index/upkeep.py); kept across a close and reopen."""
        with self._lock:
            self._on_pile_searched = callback
            if self._index is not None:
                self._index.on_pile_searched = callback

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
    """Every part one process uses, open; `close` closes what `build_app` opened."""

    settings: Settings
    root: Path
    data_dir: Path
    rules: IgnoreRules
    catalog: Catalog
    index: LazyIndex
    embedder: Embedder
    model: ModelInUse  # which model `embedding_model` resolved to, and why
    journal: UsageJournal  # this device's use counts; in the daemon also the pending uses
    operations: OperationLog  # what sweeps and merges applied, for `undo`
    store: MemoryStore
    sync: IndexSync  # the single index writer
    views: Views
    search: Search
    uses: Uses
    status: Status
    lifecycle: Lifecycle
    consolidator: Consolidator
    reconciler: Reconciler  # sync conflicts
    restorer: Restorer  # archived memories, and notes moved by hand across the archive's edge
    updates: Updates  # saves that supersede a memory (explicit or detected), supersede links
    admin: MemoryAdmin  # list, forget, edit
    undoer: Undoer
    freshness: Freshness  # in-process: how far the index is behind the vault
    memory_types: tuple[str, ...]  # the built-in types and those given their own half-life
    # requests and scheduled jobs that move notes or write the index: one at a time
    lane: WriteLane

    def api(
        self, *, reindex: Callable[[bool], ReindexResult] | None = None,
        daemon_status: Callable[[], DaemonStatus] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        progress: Progress | None = None,
    ) -> Api:
        """The request layer over these parts; the daemon passes its own reindex and status."""
        parts = ApiParts(
            vault_name=self.root.name, memory_types=self.memory_types, search=self.search,
            views=self.views, uses=self.uses, status=self.status, sync=self.sync,
            freshness=self.freshness, lifecycle=self.lifecycle, reconciler=self.reconciler,
            restorer=self.restorer, updates=self.updates, admin=self.admin,
            consolidator=self.consolidator, undoer=self.undoer, daemon_status=daemon_status,
            reindex=reindex, progress=progress)
        return Api(parts, lane=self.lane, clock=clock)

    def call_here(self, op: str, body: dict[str, Any], now: datetime,
                  progress: Progress | None = None) -> JSON:
        """Run `op` in this process (no daemon serves the vault): the index is first brought
        up to date with what changed since it was last written, as far as `op` needs."""
        self.freshness.bring_up_to_date(op, now)
        return self.api(clock=lambda: now, progress=progress).call(op, body)

    def daemon_parts(self) -> DaemonParts:
        """What `vaultmem run` uses of these parts, and nothing else."""
        return DaemonParts(
            root=self.root, rules=self.rules, model=self.model, embedder=self.embedder,
            index=self.index, catalog=self.catalog, journal=self.journal, sync=self.sync,
            restorer=self.restorer, api=self.api, close=self.close)

    def close(self) -> None:
        self.index.close()
        self.catalog.close()
        self.journal.close()
        self.operations.close()


class MakesApi(Protocol):
    def __call__(self, *, reindex: Callable[[bool], ReindexResult] | None = None,
                 daemon_status: Callable[[], DaemonStatus] | None = None) -> Api: ...


@dataclass(frozen=True)
class DaemonParts:
    """The parts `vaultmem run` is given (`App.daemon_parts`): what it watches and serves, the
    index writer and what it reports on, and its Api. `close` closes the whole App."""

    root: Path
    rules: IgnoreRules  # what the watcher ignores
    model: ModelInUse  # named when the daemon starts
    embedder: Embedder  # loaded at start, beside the index
    index: LazyIndex  # opened at start; optimised when settled
    catalog: Catalog  # totals, sync copies and the memories' fingerprint for the jobs
    journal: UsageJournal  # pending usage writes, flushed by a job
    sync: IndexSync  # the single index writer
    restorer: Restorer  # notes moved by hand across the archive's edge
    api: MakesApi  # `App.api`: the request layer, given the daemon's callbacks
    close: Callable[[], None]


@dataclass(frozen=True)
class DaemonParams:
    """What `vaultmem run` needs besides the App: where, on which address, and how often."""

    data_dir: Path
    host: str
    port: int
    debounce_s: float  # the watcher hands over changes once the vault was quiet this long
    max_write_pause_s: float  # scheduled note writes wait at most this long for a quiet vault
    flush_every_s: float
    sweep_every_s: float
    reconcile_every_s: float
    consolidate_every_s: float
    optimize_every_s: float


def daemon_params(settings: Settings) -> DaemonParams:
    s = settings
    return DaemonParams(
        data_dir=s.vault_data_dir(), host=s.host, port=s.port, debounce_s=s.debounce_ms / 1000,
        max_write_pause_s=s.max_write_pause_seconds, flush_every_s=s.flush_interval_seconds,
        sweep_every_s=s.sweep_interval_minutes * 60,
        reconcile_every_s=s.reconcile_interval_minutes * 60,
        consolidate_every_s=s.consolidate_interval_hours * 3600,
        optimize_every_s=s.optimize_interval_minutes * 60,
    )


def start_command(paths: VaultPaths, config_path: Path | None) -> str:
    """The command that starts a daemon for this vault and data dir (the MCP bridge says it)."""
    parts = ["vaultmem", "run", "--vault", str(paths.vault)]
    if config_path is not None:
        parts += ["--config", str(config_path.resolve())]
    if paths.data_dir_given:
        parts += ["--data-dir", str(paths.data_dir.resolve())]
    return shlex.join(parts)


def prepare_model(settings: Settings) -> str:
    """Load the configured model once, making its ONNX files if it has none yet (scripts/setup
    does this, so that the daemon's first start does not wait for them); `auto` prepares both
    bundled models, since the vault chooses."""
    wanted = settings.embedding_model
    models = [ENGLISH_MODEL, MULTILINGUAL_MODEL] if wanted == AUTO_MODEL else [wanted]
    ready = []
    for model in models:
        embedder = make_embedder(model, embedder_options(settings))
        embedder.embed_query("ready")
        ready.append(f"{embedder.name} on {getattr(embedder, 'runtime', 'its own runtime')}")
    return "; ".join(ready)


def resolve_model(settings: Settings, root: Path, rules: IgnoreRules,
                  index_path: Path) -> ModelInUse:
    """An explicit `embedding_model` as set; `auto`: the model chosen when the index was
    first built (recorded beside it), or chosen now from a sample of the vault's notes and
    recorded once enough notes tell (engine/model_choice.py)."""
    setting = settings.embedding_model
    if setting != AUTO_MODEL:
        return ModelInUse(setting, setting, "set in the configuration")
    recorded = recorded_choice(index_path)
    if recorded is not None and recorded["model"] in (ENGLISH_MODEL, MULTILINGUAL_MODEL):
        return ModelInUse(setting, recorded["model"], recorded["reason"])
    choice, _ = choose_for_vault(root, rules)
    if choice.settled:
        record_choice(index_path, choice.model, choice.reason)
    return ModelInUse(setting, choice.model, choice.reason)


def forget_model_choice(settings: Settings) -> None:
    """`vaultmem reindex --choose-model`: forget `auto`'s recorded choice, so the next App
    built for the vault chooses again (a change of model then rebuilds the index)."""
    if settings.embedding_model != AUTO_MODEL:
        raise InvalidInput(
            "--choose-model applies to embedding_model = auto; this vault's model is set to "
            f"{settings.embedding_model!r} in the configuration")
    forget_choice(settings.vault_data_dir() / "lance")


def build_app(
    settings: Settings, *, embedder: Embedder | None = None, daemon: bool = False
) -> App:
    """Open and wire every part. `daemon`: a watcher keeps the catalog current (memories are
    listed from it) and uses are journalled, written to their notes by the daemon's flush."""
    root = settings.require_vault().resolve()
    data_dir = settings.vault_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # index and catalog: private
    rules = IgnoreRules.from_vault(root, extra_folders=settings.ignore_folders,
                                   max_note_bytes=settings.max_note_bytes)
    params = engine_params(settings, root.name)
    catalog = Catalog(data_dir / "catalog.sqlite3")
    if embedder is None:
        model = resolve_model(settings, root, rules, data_dir / "lance")
        embedder = make_embedder(model.model, embedder_options(settings))
    else:
        model = ModelInUse(settings.embedding_model, embedder.name, "given by the caller")
    index = LazyIndex(data_dir / "lance", embedder.name, index_options(settings))
    indexer = Indexer(root, rules, catalog, index, embedder, indexer_options(settings))
    journal = UsageJournal(data_dir / "usage.sqlite3")
    operations = OperationLog(data_dir / "operations.sqlite3")
    store = MemoryStore(
        root, rules, catalog, journal, device=device_id(data_dir, settings.device_id),
        mode=StoreMode.DAEMON if daemon else StoreMode.IN_PROCESS,
        archive_folder=settings.archive_folder)
    sync = IndexSync(indexer, store, starting=daemon)
    views = Views(store, params)
    mover = Mover(store, sync, params.archive_folder)
    lifecycle = Lifecycle(root=root, catalog=catalog, store=store, sync=sync, views=views,
                          mover=mover, index=index, embedder=embedder, params=params)
    restorer = Restorer(store=store, sync=sync, views=views, mover=mover,
                        memory_folder=params.memory_folder, archive_folder=params.archive_folder)
    admin = MemoryAdmin(store=store, sync=sync, views=views, mover=mover, params=params)
    return App(
        settings=settings, root=root, data_dir=data_dir, rules=rules, catalog=catalog,
        index=index, embedder=embedder, model=model, journal=journal, operations=operations,
        store=store, sync=sync, views=views,
        search=Search(catalog=catalog, store=store, index=index, embedder=embedder,
                      filters=FilterIndex(catalog), params=params),
        uses=Uses(store, views, params.reinforce),
        status=Status(root=root, rules=rules, catalog=catalog, store=store, embedder=embedder,
                      model=model, params=params),
        lifecycle=lifecycle,
        consolidator=Consolidator(root=root, catalog=catalog, store=store, sync=sync,
                                  views=views, mover=mover, index=index, params=params,
                                  spent_ids=operations),
        reconciler=Reconciler(root=root, catalog=catalog, store=store, sync=sync, mover=mover),
        restorer=restorer,
        updates=Updates(lifecycle, Superseder(store, sync, views), update_params(settings),
                        store=store, sync=sync, views=views, index=index, embedder=embedder),
        admin=admin,
        undoer=Undoer(admin=admin, store=store, sync=sync, log=operations),
        freshness=Freshness(root=root, rules=rules, catalog=catalog, sync=sync,
                            restorer=restorer),
        memory_types=tuple(sorted({*MEMORY_TYPES, *params.decay.type_half_lives})),
        lane=WriteLane(),
    )
