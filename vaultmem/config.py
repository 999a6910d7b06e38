"""Settings: defaults < TOML file < VAULTMEM_* environment < command-line overrides.

`Settings` holds every default. The CLI loads them from its flags (`cli/context.py`) and hands
them to the composition root (`app.py`), the one place besides this module that reads their
fields; every other part receives plain values.
"""

from __future__ import annotations

import hashlib
import os
import re
import textwrap
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import platformdirs

from vaultmem.errors import ConfigError

APP_NAME = "vaultmem"
ENV_PREFIX = "VAULTMEM_"
CONFIG_ENV = "VAULTMEM_CONFIG"

DEFAULT_TYPE_HALF_LIVES: Mapping[str, float] = MappingProxyType(
    {"decision": 30.0, "pattern": 20.0, "convention": 60.0, "issue": 7.0,
     "preference": 14.0, "fact": 90.0}
)

#: `embedding_model`: the vault's languages choose between the bundled English and multilingual
#: models (app.resolve_model); any other value names the model itself.
AUTO_MODEL = "auto"


@dataclass(frozen=True)
class Settings:
    """Every tunable of vaultmem. Key names are the TOML keys; env var = VAULTMEM_ + KEY."""

    vault: Path | None = None
    data_dir: Path | None = None  # default: the platform's user data dir, one folder per vault

    # vault conventions
    memory_folder: str = "memories"
    promoted_folder: str = "STM"
    archive_folder: str = "memories/archive"
    ignore_folders: tuple[str, ...] = ()
    max_note_bytes: int = 20_000_000

    # index and embeddings
    embedding_model: str = "auto"  # auto (the vault's languages choose), english, multilingual
    embedding_runtime: str = "auto"  # auto (see embedders.choose_runtime), openvino, onnx, torch
    embedding_query_prompt: str = ""  # "": the model directory's own prompts, if it has any
    embedding_passage_prompt: str = ""
    embedding_threads: int = 2  # the ONNX runtime's intra-op threads
    embedding_batch_size: int = 0  # texts per model call; 0: the runtime's own (1 or 4)
    model_cache_dir: Path | None = None  # default: <user data dir>/models
    chunk_max_chars: int = 1000
    chunk_min_chars: int = 200
    optimize_every_writes: int = 50
    index_cache_mb: int = 32  # LanceDB's caches: bounded so RSS stays flat under edits
    metadata_cache_mb: int = 4  # 16 held ~15 MB more after 1,000 edits, search no faster

    # decay (SPEC §3.1–3.2)
    decay_model: str = "power_law"
    half_life_days: float = 3.0
    power_law_alpha: float = 1.1
    use_count_beta: float = 0.6
    two_component_weight: float = 0.7
    two_component_fast_lambda: float = 1.603e-5
    two_component_slow_lambda: float = 1.147e-6
    type_half_lives: Mapping[str, float] = field(default_factory=lambda: DEFAULT_TYPE_HALF_LIVES)

    # decisions (SPEC §3.3)
    promote_threshold: float = 0.65
    promote_min_uses: int = 2
    promote_fast_use_count: int = 5
    promote_fast_window_days: float = 14.0
    forget_threshold: float = 0.05
    forget_grace_hours: float = 24.0
    max_active_memories: int = 1000

    # reinforcement and review (SPEC §3.4–3.5)
    boost_step: float = 0.1
    spaced_use_hours: float = 12.0
    strength_max: float = 2.0
    cross_domain_threshold: float = 0.3
    review_band_low: float = 0.15
    review_band_high: float = 0.35
    review_fraction: float = 0.3
    feedback_penalty: float = 0.2

    # search, promotion, consolidation, intake (SPEC §4–5)
    search_top_k: int = 10
    related_links: int = 5
    cluster_threshold: float = 0.83
    cluster_max_size: int = 12
    merge_cohesion: float = 0.9
    review_cohesion: float = 0.75
    near_duplicate_cosine: float = 0.95
    similar_memory_cosine: float = 0.8
    resave_window_hours: float = 6.0
    min_content_chars: int = 12
    max_content_chars: int = 20_000

    # updates: a newer memory supersedes a stale one
    update_cosine: float = 0.6
    auto_supersede: bool = False

    # daemon (SPEC §6)
    host: str = "127.0.0.1"
    port: int = 7345
    # edit -> searchable is this plus indexing the note; a save's own pauses were at most
    # ~17 ms beside busy processes (scripts/bench saves, docs/benchmarks.md)
    debounce_ms: int = 100
    flush_interval_seconds: float = 30.0
    sweep_interval_minutes: float = 60.0
    consolidate_interval_hours: float = 24.0
    optimize_interval_minutes: float = 2.0
    max_write_pause_seconds: float = 300.0

    # synced vaults (docs/reliability.md, "A vault synced between devices")
    device_id: str = ""  # default: made once per vault and machine, kept in the data dir
    reconcile_interval_minutes: float = 10.0

    unknown_keys: tuple[str, ...] = ()
    source: str = "defaults"

    def require_vault(self) -> Path:
        if self.vault is None:
            raise ConfigError(
                "no vault given: pass --vault PATH, set VAULTMEM_VAULT, "
                "or run `vaultmem init --vault PATH`"
            )
        if not self.vault.is_dir():
            raise ConfigError(f"vault folder does not exist: {self.vault}")
        return self.vault

    def vault_data_dir(self) -> Path:
        """Where this vault's index, catalog, token and lock live (outside the vault)."""
        vault = self.require_vault().resolve()
        if self.data_dir is not None:
            return self.data_dir
        digest = hashlib.sha1(str(vault).encode()).hexdigest()[:10]
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", vault.name).strip("-") or "vault"
        return Path(platformdirs.user_data_dir(APP_NAME)) / "vaults" / f"{slug}-{digest}"

    def model_cache(self) -> Path:
        """Where ONNX files made from local models are kept (shared by every vault)."""
        if self.model_cache_dir is not None:
            return self.model_cache_dir
        return Path(platformdirs.user_data_dir(APP_NAME)) / "models"


_INTERNAL = {"unknown_keys", "source"}
_FIELDS = {f.name: f for f in fields(Settings) if f.name not in _INTERNAL}
_DEFAULTS = Settings()


def default_config_path() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def load_settings(
    config_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    on_unknown: Callable[[str], object] | None = None,
) -> Settings:
    """Read the TOML file (if it exists), then env vars, then explicit overrides; each key
    nothing knows is passed to `on_unknown` (the CLI warns) and kept in `unknown_keys`."""
    env = os.environ if env is None else env
    path = config_path or default_config_path()
    values: dict[str, Any] = {}
    unknown: list[str] = []
    sources = ["defaults"]
    if path.is_file():
        file_values = _read_toml(path)
        for key, raw in file_values.items():
            if key in _FIELDS:
                values[key] = _coerce(key, raw, f"{path}: {key}")
            else:
                unknown.append(f"{path}: {key}")
        sources.append(str(path))
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or name == CONFIG_ENV:
            continue
        key = name[len(ENV_PREFIX):].lower()
        if key in _FIELDS:
            values[key] = _coerce(key, raw, name)
        else:
            unknown.append(name)
    for key, raw in (overrides or {}).items():
        if raw is not None:
            values[key] = _coerce(key, raw, f"--{key.replace('_', '-')}")
    settings = replace(_DEFAULTS, **values, unknown_keys=tuple(unknown), source=" < ".join(sources))
    _validate(settings)
    if on_unknown is not None:
        for key in unknown:
            on_unknown(key)
    return settings


@dataclass(frozen=True)
class VaultPaths:
    """Where a vault is and where its data (index, catalog, token, lock) lives."""

    vault: Path  # resolved
    data_dir: Path
    data_dir_given: bool  # set explicitly (flag, file or env) rather than the platform default


def vault_paths(settings: Settings) -> VaultPaths:
    return VaultPaths(settings.require_vault().resolve(), settings.vault_data_dir(),
                      settings.data_dir is not None)


def write_config(settings: Settings, path: Path | None, *, force: bool) -> Path:
    """Write `vaultmem init`'s commented config file for the settings' vault; returns where."""
    vault = settings.require_vault().resolve()
    path = path or default_config_path()
    if path.exists() and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_config(replace(settings, vault=vault)), encoding="utf-8")
    return path


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    # a [vaultmem] table is accepted as well as top-level keys
    nested = data.pop(APP_NAME, None)
    if isinstance(nested, dict):
        data.update(nested)
    return data


def _coerce(key: str, raw: Any, where: str) -> Any:
    default = getattr(_DEFAULTS, key)
    try:
        if key in ("vault", "data_dir", "model_cache_dir"):
            return Path(str(raw)).expanduser() if str(raw) else None
        if key == "type_half_lives":
            return MappingProxyType(_parse_half_lives(raw))
        if key == "ignore_folders":
            items = raw.split(",") if isinstance(raw, str) else list(raw)
            return tuple(str(item).strip().strip("/") for item in items if str(item).strip())
        if isinstance(default, bool):
            return _parse_bool(raw)
        if isinstance(default, int):
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError("expected a whole number")
            return int(raw)
        if isinstance(default, float):
            if isinstance(raw, bool):
                raise ValueError("expected a number")
            return float(raw)
        if isinstance(default, str):
            if not isinstance(raw, str | int | float):
                raise ValueError("expected a string")
            return str(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: invalid value {raw!r} ({exc})") from exc
    raise ConfigError(f"{where}: unsupported setting")


def _parse_half_lives(raw: Any) -> dict[str, float]:
    if isinstance(raw, str):  # env form: "decision=30,fact=90"
        pairs = [item.split("=", 1) for item in raw.split(",") if item.strip()]
        raw = {k.strip(): v for k, v in pairs}
    if not isinstance(raw, Mapping):
        raise ValueError("expected a table of type = days")
    merged = dict(DEFAULT_TYPE_HALF_LIVES)
    for name, days in raw.items():
        value = float(days)
        if value <= 0:
            raise ValueError(f"half-life of {name!r} must be positive")
        merged[str(name)] = value
    return merged


def _parse_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _validate(s: Settings) -> None:
    problems: list[str] = []
    if s.decay_model not in ("power_law", "exponential", "two_component"):
        problems.append(
            f"decay_model must be power_law, exponential or two_component, not {s.decay_model!r}"
        )
    positive = ("half_life_days", "power_law_alpha", "chunk_max_chars",
                "search_top_k", "max_active_memories", "flush_interval_seconds",
                "sweep_interval_minutes", "consolidate_interval_hours",
                "optimize_interval_minutes", "max_write_pause_seconds", "max_note_bytes",
                "strength_max", "index_cache_mb", "metadata_cache_mb",
                "reconcile_interval_minutes", "embedding_threads")
    problems += [f"{name} must be positive" for name in positive if getattr(s, name) <= 0]
    if s.embedding_batch_size < 0:
        problems.append("embedding_batch_size must not be negative (0: the runtime's own)")
    unit = ("review_fraction", "two_component_weight", "cluster_threshold", "merge_cohesion",
            "review_cohesion", "near_duplicate_cosine", "cross_domain_threshold",
            "similar_memory_cosine", "update_cosine")
    problems += [f"{name} must be between 0 and 1" for name in unit
                 if not 0.0 <= getattr(s, name) <= 1.0]
    if not s.embedding_model.strip():
        problems.append("embedding_model must not be empty: auto, english, multilingual or "
                        "the folder of a sentence-transformers model")
    if s.embedding_runtime not in ("auto", "openvino", "onnx", "torch"):
        problems.append(
            f"embedding_runtime must be auto, openvino, onnx or torch, not {s.embedding_runtime!r}"
        )
    if s.spaced_use_hours < 0:
        problems.append("spaced_use_hours must not be negative (0: every use counts)")
    if s.resave_window_hours < 0:
        problems.append("resave_window_hours must not be negative (0: every save counts)")
    if not 0 <= s.port < 65536:
        problems.append("port must be between 0 (any free port) and 65535")
    if s.review_band_low >= s.review_band_high:
        problems.append("review_band_low must be below review_band_high")
    if problems:
        raise ConfigError("invalid settings: " + "; ".join(problems))


_CONFIG_HEADER = """\
# vaultmem configuration, written by `vaultmem init`.
#
# vaultmem keeps an index of the vault below for search, and gives the notes an assistant
# saves (in memory_folder) a short-term memory: they fade unless used, are archived to
# archive_folder when they fade out (`vaultmem restore ID` brings one back) and are promoted
# to long-term notes in promoted_folder when they prove useful. Their state is kept in the
# notes' own stm_* properties; vaultmem never edits anything else you wrote.
#
# Every setting is listed with its current value; delete a line to use the default.
# Any key can also be set as an environment variable VAULTMEM_<KEY> (e.g. VAULTMEM_PORT).
# Full reference: docs/configuration.md in the vaultmem repository."""


def render_config(settings: Settings) -> str:
    """A commented TOML file with every setting at its current value (for `vaultmem init`)."""
    from vaultmem.config_help import HELP, SECTIONS

    lines = [_CONFIG_HEADER]
    grouped = [*SECTIONS, ("Other", tuple(n for n in _FIELDS
                                          if all(n not in keys for _, keys in SECTIONS)))]
    for title, names in grouped:
        names = tuple(name for name in names if name in _FIELDS)
        if names:
            lines += ["", f"# --- {title} ---"]
        for name in names:
            lines += [f"# {line}" for line in textwrap.wrap(HELP.get(name, ""), 92)]
            value = getattr(settings, name)
            lines.append(f"# {name} =" if value is None else f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Path | str):
        escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot render {value!r}")
