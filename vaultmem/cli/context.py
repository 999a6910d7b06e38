"""What every `vaultmem` command receives, and the options every command accepts.

Every command takes --vault/--config/--data-dir/--json (after the command name) and, where a
time means something, --now. The
command's settings are loaded here and handed to the composition root (`vaultmem.app`); an API
operation runs through the daemon when one serves the vault, in-process otherwise.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

import click

from vaultmem.config import Settings, VaultPaths, load_settings, vault_paths
from vaultmem.errors import DaemonError, InvalidInput

if TYPE_CHECKING:
    from vaultmem.app import App

F = TypeVar("F", bound=Callable[..., Any])


class Context:
    """What every command receives: settings, the clock, and the output mode."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.json = bool(options.pop("as_json", False))
        now = options.pop("now", None)
        self.now_given = now is not None
        self.now = _parse_now(now)
        overrides = {"vault": options.pop("vault", None), "data_dir": options.pop("data_dir", None)}
        config = options.pop("config", None)
        self.config_path = Path(config).expanduser() if config else None
        self._overrides = overrides
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config_path, overrides=self._overrides,
                                           on_unknown=_warn_unknown)
        return self._settings

    @property
    def paths(self) -> VaultPaths:
        return vault_paths(self.settings)

    def call(self, op: str, body: dict[str, Any], *, progress: Any = None) -> Any:
        """Run an API operation: through the daemon when one serves the vault (found from the
        vault's lock, whatever this shell's data dir), else here, holding that lock."""
        from vaultmem.vault.writer_lock import DAEMON, VaultBusy

        serving = self._serving_data_dir()
        if serving is not None:
            return self._call_daemon(serving, op, body)
        try:
            with self.app() as app:
                return app.call_here(op, body, self.now, progress)
        except VaultBusy as exc:  # a daemon started meanwhile: it answers
            if exc.holder is None or exc.holder.kind != DAEMON:
                raise
            return self._call_daemon(Path(exc.holder.data_dir), op, body)

    def _serving_data_dir(self) -> Path | None:
        """The data dir of the daemon serving this vault on this machine, or None. The vault's
        lock names it (vault/writer_lock.py); a daemon of an older version only holds the
        lock in its data dir."""
        from vaultmem.daemon.lock import is_held
        from vaultmem.vault.writer_lock import DAEMON, current_holder

        holder = current_holder(self.paths.vault)
        if holder is not None and holder.kind == DAEMON and holder.data_dir:
            return Path(holder.data_dir)
        data_dir = self.paths.data_dir
        return data_dir if is_held(data_dir / "daemon.lock") else None

    def choose_model_again(self) -> None:
        """Forget the model `auto` chose for this vault's index, so that this command chooses
        again. Not while a daemon serves the vault: it keeps its model while it runs."""
        from vaultmem.app import forget_model_choice

        if self._serving_data_dir() is not None:
            raise InvalidInput(
                "a daemon serves this vault and keeps its model while it runs: stop it, run "
                "`vaultmem reindex --choose-model`, then start it again")
        forget_model_choice(self.settings)

    def check_writes_at_now(self, writes: bool, allowed: bool) -> None:
        """--now is a what-if: a command that writes (`--apply`, a promote or a merge) would
        date what it writes at that time, so it asks for --write-at-now too."""
        if writes and self.now_given and not allowed:
            raise InvalidInput("--now previews as of another time; with it this command would "
                               "write dates at that time into your notes: drop --now, or add "
                               "--write-at-now to replay as of --now on purpose")

    def _call_daemon(self, data_dir: Path, op: str, body: dict[str, Any]) -> Any:
        from vaultmem.api.client import discover

        if self.now_given:
            raise InvalidInput("--now cannot be used while the daemon serves this vault "
                               "(the daemon keeps its own clock)")
        client = discover(data_dir)
        if client is None:
            raise DaemonError(f"a vaultmem daemon (data dir {data_dir}) holds this vault but "
                              "does not answer; see `vaultmem service status` and its logs, "
                              "or stop it")
        return client.call_op(op, body)

    @contextmanager
    def app(self) -> Iterator[App]:
        """The App, opened here, while this command holds the vault's writer lock (VaultBusy,
        naming the holder, when another writer on this machine keeps it)."""
        from vaultmem.app import build_app
        from vaultmem.vault.writer_lock import COMMAND, COMMAND_WAIT_S, VaultLock

        paths = self.paths
        with VaultLock(paths.vault, COMMAND, paths.data_dir,
                       started=datetime.now(UTC)).held_while(COMMAND_WAIT_S):
            app = build_app(self.settings)
            try:
                yield app
            finally:
                app.close()

    def emit(self, data: Any, human: Callable[[Any], None]) -> None:
        if self.json:
            click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        else:
            human(data)


def _warn_unknown(key: str) -> None:
    click.echo(f"warning: unknown setting {key} (ignored)", err=True)


def _parse_now(value: str | None) -> datetime:
    if not value:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise click.BadParameter(f"not an ISO 8601 time: {value!r}", param_hint="--now") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@overload
def common(func: F) -> F: ...


@overload
def common(*, now: bool = ...) -> Callable[[F], F]: ...


def common(func: F | None = None, *, now: bool = True) -> Any:
    """Shared options, accepted after every command name (`@common`, or `@common(now=False)`
    for a command where a time means nothing)."""
    if func is None:
        return functools.partial(common, now=now)
    options = [
        click.option("--vault", type=click.Path(file_okay=False, path_type=Path),
                     envvar="VAULTMEM_VAULT", help="The Obsidian vault folder."),
        click.option("--config", type=click.Path(dir_okay=False),
                     help="Config file (default: VAULTMEM_CONFIG or the user config dir)."),
        click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Where the index lives (default: the user data dir)."),
        *([click.option("--now", metavar="ISO-TIME",
                        help="Evaluate as of this time instead of the clock (what-if, "
                             "replays).")] if now else []),
        click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output."),
    ]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        names = ("vault", "config", "data_dir", "now", "as_json")
        ctx = Context({name: kwargs.pop(name, None) for name in names})
        return func(ctx, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


write_at_now = click.option(
    "--write-at-now", is_flag=True,
    help="With --now: write as of that time (a replay); without it --now only previews.")
