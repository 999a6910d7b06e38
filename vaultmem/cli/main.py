"""`vaultmem` command line: a thin adapter over the service layer.

Every command takes --vault/--config/--data-dir/--now/--json (after the command name), prints
a readable answer or the shared JSON shape, and turns VaultmemError into one line + exit 1.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from vaultmem import __version__
from vaultmem.config import Settings, default_config_path, load_settings, render_config
from vaultmem.errors import ConfigError, DaemonError, InvalidInput, VaultmemError

F = TypeVar("F", bound=Callable[..., Any])
EXIT_ERROR = 1


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
            self._settings = load_settings(self.config_path, overrides=self._overrides)
            for key in self._settings.unknown_keys:
                click.echo(f"warning: unknown setting {key} (ignored)", err=True)
        return self._settings

    def call(self, op: str, body: dict[str, Any], *, progress: Any = None) -> Any:
        """Run an API operation: through the daemon when one serves the vault, else here."""
        from vaultmem.daemon.lock import is_held

        data_dir = self.settings.vault_data_dir()
        if is_held(data_dir / "daemon.lock"):
            return self._call_daemon(data_dir, op, body)
        from vaultmem.api.ops import Api
        from vaultmem.engine.consolidation import Consolidator
        from vaultmem.engine.freshness import bring_up_to_date

        with self.app() as app:
            bring_up_to_date(app, op, self.now)

            def reindex(full: bool) -> dict[str, Any]:
                report = app.engine.reindex(full=full, progress=progress)
                data: dict[str, Any] = report.to_json()
                return data

            api = Api(engine=app.engine, lifecycle=app.lifecycle,
                      consolidator=Consolidator(app.engine, app.lifecycle),
                      reindex=reindex, clock=lambda: self.now)
            return api.call(op, body)

    def _call_daemon(self, data_dir: Path, op: str, body: dict[str, Any]) -> Any:
        from vaultmem.api.client import discover

        if self.now_given:
            raise InvalidInput("--now cannot be used while the daemon serves this vault "
                               "(the daemon keeps its own clock)")
        client = discover(data_dir)
        if client is None:
            raise DaemonError("a vaultmem daemon holds this vault but does not answer; "
                              "see `vaultmem service status` and its logs, or stop it")
        return client.call_op(op, body)

    @contextmanager
    def app(self) -> Iterator[Any]:
        from vaultmem.app import build_app

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


def _parse_now(value: str | None) -> datetime:
    if not value:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise click.BadParameter(f"not an ISO 8601 time: {value!r}", param_hint="--now") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def common(func: F) -> F:
    """Shared options, accepted after every command name."""
    options = [
        click.option("--vault", type=click.Path(file_okay=False, path_type=Path),
                     envvar="VAULTMEM_VAULT", help="The Obsidian vault folder."),
        click.option("--config", type=click.Path(dir_okay=False),
                     help="Config file (default: VAULTMEM_CONFIG or the user config dir)."),
        click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Where the index lives (default: the user data dir)."),
        click.option("--now", metavar="ISO-TIME",
                     help="Evaluate as of this time instead of the clock (what-if, replays)."),
        click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output."),
    ]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        names = ("vault", "config", "data_dir", "now", "as_json")
        ctx = Context({name: kwargs.pop(name, None) for name in names})
        return func(ctx, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


class UserError(click.ClickException):
    """An expected failure: one line on stderr, exit 1, never a traceback."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


class VaultmemGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultmemError as exc:
            raise UserError(exc.message) from exc


@click.group(cls=VaultmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vaultmem")
def cli() -> None:
    """vaultmem: a memory for AI assistants that lives in your Obsidian vault."""


def main() -> None:
    cli(prog_name="vaultmem")


# commands -----------------------------------------------------------------------------------

@cli.command()
@common
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
def init(ctx: Context, force: bool) -> None:
    """Write a config file for a vault (use with --vault)."""
    settings = ctx.settings
    vault = settings.require_vault().resolve()
    path = ctx.config_path or default_config_path()
    if path.exists() and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite it)")
    from dataclasses import replace

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_config(replace(settings, vault=vault)), encoding="utf-8")
    data = {"config": str(path), "vault": str(vault), "data_dir": str(settings.vault_data_dir())}
    ctx.emit(data, lambda d: click.echo(f"wrote {d['config']} for vault {d['vault']}"))


@cli.command()
@common
@click.option("--full", is_flag=True, help="Drop the index and rebuild it from the vault.")
def reindex(ctx: Context, full: bool) -> None:
    """Bring the index up to date with the vault (only changed notes are re-embedded)."""
    from vaultmem.cli.output import progress_bar, show_sync

    with progress_bar(enabled=not ctx.json) as progress:
        data = ctx.call("reindex", {"full": full}, progress=progress)
    ctx.emit(data, show_sync)


@cli.command()
@common
@click.argument("query")
@click.option("-k", "--top-k", type=click.IntRange(1, 200), help="How many results.")
@click.option("--tag", "tags_any", multiple=True, help="Any of these tags (repeatable).")
@click.option("--all-tags", "tags_all", multiple=True, help="All of these tags (repeatable).")
@click.option("--type", "memory_type", help="Only memories of this stm_type.")
@click.option("--status", "statuses", multiple=True,
              type=click.Choice(["active", "promoted", "archived"]),
              help="Memory statuses to include (default: active and promoted).")
@click.option("--folder", help="Only notes under this folder.")
@click.option("--days", "window_days", type=float, help="Only used/edited in the last N days.")
@click.option("--memories-only", is_flag=True, help="Leave out regular notes.")
@click.option("--no-review", is_flag=True, help="Do not blend in spaced-repetition items.")
@click.option("--matched-only", is_flag=True,
              help="Only real matches (relevance >= 0.5): none means nothing relevant.")
@click.option("--min-relevance", type=click.FloatRange(0, 1),
              help="Only results with at least this relevance (0-1).")
def search(ctx: Context, query: str, top_k: int | None, tags_any: tuple[str, ...],
           tags_all: tuple[str, ...], memory_type: str | None, statuses: tuple[str, ...],
           folder: str | None, window_days: float | None, memories_only: bool,
           no_review: bool, matched_only: bool, min_relevance: float | None) -> None:
    """Hybrid search (meaning + exact words) over every note, re-ranked by memory strength."""
    from vaultmem.cli.output import show_search

    body: dict[str, Any] = {"query": query, "memories_only": memories_only,
                            "include_review": not no_review, "matched_only": matched_only}
    optional = {"top_k": top_k, "type": memory_type, "folder": folder,
                "min_relevance": min_relevance,
                "window_days": window_days, "tags": list(tags_any) or None,
                "all_tags": list(tags_all) or None, "status": list(statuses) or None}
    body.update({k: v for k, v in optional.items() if v is not None})
    ctx.emit(ctx.call("search", body), show_search)


@cli.command()
@common
@click.argument("text", required=False)
@click.option("--title", help="Note title (default: the first words).")
@click.option("--tags", help="Comma-separated tags.")
@click.option("--type", "memory_type",
              help="decision, pattern, convention, issue, preference or fact.")
@click.option("--strength", type=float, default=1.0, show_default=True)
@click.option("--pin", is_flag=True, help="Never forget this memory.")
@click.option("--source", help="Where it came from (e.g. conversation).")
def save(ctx: Context, text: str | None, title: str | None, tags: str | None,
         memory_type: str | None, strength: float, pin: bool, source: str | None) -> None:
    """Save a memory (TEXT, or standard input when TEXT is -)."""
    from vaultmem.cli.output import show_saved

    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise InvalidInput("give the memory text as an argument, or - to read stdin")
        text = sys.stdin.read()
    body: dict[str, Any] = {"content": text, "strength": strength, "pinned": pin,
                            "tags": [t.strip() for t in (tags or "").split(",") if t.strip()]}
    optional = {"title": title, "type": memory_type, "source": source}
    body.update({k: v for k, v in optional.items() if v is not None})
    ctx.emit(ctx.call("save", body), show_saved)


@cli.command()
@common
@click.argument("ref", metavar="ID|PATH")
def get(ctx: Context, ref: str) -> None:
    """Show a memory with its computed score, decision and review priority."""
    from vaultmem.cli.output import show_memory

    ctx.emit(ctx.call("get", {"id": ref}), show_memory)


@cli.command()
@common
@click.argument("ref", metavar="ID|PATH")
@click.option("--boost", is_flag=True, help="Also strengthen the memory (+0.1).")
def touch(ctx: Context, ref: str, boost: bool) -> None:
    """Record a use of a memory (reinforcement)."""
    from vaultmem.cli.output import show_memory

    ctx.emit(ctx.call("touch", {"id": ref, "boost": boost}), show_memory)


@cli.command()
@common
@click.argument("refs", nargs=-1, required=True, metavar="ID...")
@click.option("--context-tags", default="", help="Comma-separated tags of the conversation.")
def observe(ctx: Context, refs: tuple[str, ...], context_tags: str) -> None:
    """Record that memories were used in a conversation about CONTEXT-TAGS."""
    from vaultmem.cli.output import show_observed

    tags = [t.strip() for t in context_tags.split(",") if t.strip()]
    ctx.emit(ctx.call("observe", {"ids": list(refs), "context_tags": tags}), show_observed)


@cli.command()
@common
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
def review(ctx: Context, limit: int) -> None:
    """Memories in the danger zone, worth revisiting before they fade."""
    from vaultmem.cli.output import show_review

    ctx.emit(ctx.call("review", {"limit": limit}), show_review)


@cli.command()
@common
@click.option("--apply", is_flag=True, help="Archive them (default: only show).")
def gc(ctx: Context, apply: bool) -> None:
    """Forget faded memories: move them to the archive folder (restorable)."""
    from vaultmem.cli.output import show_gc

    ctx.emit(ctx.call("gc", {"apply": apply}), show_gc)


@cli.command()
@common
@click.option("--apply", is_flag=True, help="Merge and archive the copies (default: only show).")
def reconcile(ctx: Context, apply: bool) -> None:
    """Merge sync conflict copies (notes sharing one memory id) into the memory: their uses
    are added to its note and the copies move to the archive folder (nothing is deleted)."""
    from vaultmem.cli.output import show_reconcile

    ctx.emit(ctx.call("reconcile", {"apply": apply}), show_reconcile)


@cli.command()
@common
@click.argument("ref", required=False, metavar="[ID|PATH]")
@click.option("--dry-run", is_flag=True, help="Only show what would be promoted.")
def promote(ctx: Context, ref: str | None, dry_run: bool) -> None:
    """Promote a memory (or every one that qualifies) to a long-term note in STM/."""
    from vaultmem.cli.output import show_promote

    body: dict[str, Any] = {"dry_run": dry_run}
    if ref is not None:
        body["id"] = ref
    ctx.emit(ctx.call("promote", body), show_promote)


@cli.command()
@common
@click.argument("ref", metavar="ID|PATH")
@click.option("-k", "--top-k", type=click.IntRange(1, 100), default=5, show_default=True)
def related(ctx: Context, ref: str, top_k: int) -> None:
    """Notes most similar to a note or memory."""
    from vaultmem.cli.output import show_related

    ctx.emit(ctx.call("related", {"id": ref, "top_k": top_k}), show_related)


@cli.command()
@common
@click.option("--files", is_flag=True, help="List every file with its index status.")
def status(ctx: Context, files: bool) -> None:
    """Counts, decisions and index coverage (indexed / skipped / failed, with reasons)."""
    from vaultmem.cli.output import show_status

    ctx.emit(ctx.call("status", {"files": files}), show_status)


@cli.command()
@common
@click.option("--merge", "cluster_id", metavar="CLUSTER-ID", help="Merge this cluster.")
def consolidate(ctx: Context, cluster_id: str | None) -> None:
    """List clusters of near-duplicate memories, or merge one (originals are archived)."""
    from vaultmem.cli.output import show_clusters, show_merge

    if cluster_id:
        ctx.emit(ctx.call("merge_cluster", {"cluster_id": cluster_id}), show_merge)
    else:
        ctx.emit(ctx.call("clusters", {}), show_clusters)


@cli.command()
@common
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
def run(ctx: Context, log_level: str) -> None:
    """Run the daemon in the foreground (what the service units run)."""
    import logging

    from vaultmem.daemon.run import Daemon

    logging.basicConfig(level=log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("apscheduler", "sentence_transformers", "httpx"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    daemon = Daemon(ctx.settings)
    daemon.start()
    assert daemon.server is not None
    click.echo(f"vaultmem {__version__} serving {daemon.settings.vault} at {daemon.server.url}",
               err=True)
    sys.exit(daemon.serve_forever())


@cli.command()
@common
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
def mcp(ctx: Context, log_level: str) -> None:
    """Serve the memory tools to an MCP client over stdio (talks to the running daemon)."""
    from vaultmem.mcp.server import make_bridge, serve_stdio

    if ctx.now_given:
        raise InvalidInput("--now does not apply to mcp: the daemon keeps its own clock")
    serve_stdio(make_bridge(ctx.settings, ctx.config_path), log_level)


@cli.command()
@common
def token(ctx: Context) -> None:
    """Print the bearer token clients use to reach the daemon (created if missing)."""
    from vaultmem.api.auth import load_or_create_token

    data_dir = ctx.settings.vault_data_dir()
    value = load_or_create_token(data_dir)
    ctx.emit({"token": value, "file": str(data_dir / "token")}, lambda d: click.echo(d["token"]))


from vaultmem.cli.memory import COMMANDS  # noqa: E402  (uses `common` and `Context` above)
from vaultmem.cli.service import service  # noqa: E402

cli.add_command(service)
for _command in COMMANDS:
    cli.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
