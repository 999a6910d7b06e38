"""`vaultmem` command line: a thin adapter over the API operations.

Every command takes the shared options of `vaultmem.cli.context`, prints a readable answer or
the shared JSON shape, and turns VaultmemError into one line + exit 1.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from vaultmem import __version__
from vaultmem.cli.admin_commands import COMMANDS as ADMIN_COMMANDS
from vaultmem.cli.context import Context, common, write_at_now
from vaultmem.cli.memory_commands import COMMANDS
from vaultmem.cli.service import service
from vaultmem.cli.supersede_commands import COMMANDS as UPDATE_COMMANDS
from vaultmem.config import write_config
from vaultmem.errors import InvalidInput, VaultmemError

EXIT_ERROR = 1
USAGE_ERROR = 2


class UserError(click.ClickException):
    """An expected failure: one line on stderr, exit 1, never a traceback; with --json, the
    socket's error object `{"error": {"code", "message"}}` on stdout instead."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, *, code: str = "error", as_json: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.as_json = as_json

    def show(self, file: Any = None) -> None:
        if self.as_json:
            error = {"error": {"code": self.code, "message": self.message}}
            click.echo(json.dumps(error, ensure_ascii=False))
        else:
            click.echo(f"error: {self.message}", err=True)


class JsonUsageError(UserError):
    exit_code = USAGE_ERROR


class VaultmemGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # options follow the command name, so --json is seen here before a command parses
        ctx.meta["vaultmem.json"] = "--json" in args[: args.index("--")] if "--" in args \
            else "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        as_json = bool(ctx.meta.get("vaultmem.json"))
        try:
            return super().invoke(ctx)
        except VaultmemError as exc:
            raise UserError(exc.message, code=exc.code, as_json=as_json) from exc
        except click.UsageError as exc:
            if not as_json:
                raise
            raise JsonUsageError(exc.format_message(), code="invalid_input",
                                 as_json=True) from exc


@click.group(cls=VaultmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vaultmem")
def cli() -> None:
    """vaultmem: a memory for AI assistants that lives in your Obsidian vault."""


def main() -> None:
    cli(prog_name="vaultmem")


# commands -----------------------------------------------------------------------------------

@cli.command()
@common(now=False)
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
def init(ctx: Context, force: bool) -> None:
    """Write a config file for a vault (use with --vault)."""
    path = write_config(ctx.settings, ctx.config_path, force=force)
    paths = ctx.paths
    data = {"config": str(path), "vault": str(paths.vault), "data_dir": str(paths.data_dir)}
    ctx.emit(data, lambda d: click.echo(f"wrote {d['config']} for vault {d['vault']}"))


@cli.command()
@common
@click.option("--full", is_flag=True, help="Drop the index and rebuild it from the vault.")
@click.option("--choose-model", is_flag=True,
              help="embedding_model = auto: sample the vault's languages again; a change of "
                   "model rebuilds the index.")
def reindex(ctx: Context, full: bool, choose_model: bool) -> None:
    """Bring the index up to date with the vault (only changed notes are re-embedded)."""
    from vaultmem.cli.output import progress_bar, show_sync

    if choose_model:
        ctx.choose_model_again()

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
              help="Only real matches (relevance above 0.5): none means nothing relevant.")
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
@click.option("--force", is_flag=True, help="Save even when a similar memory exists.")
@click.option("--supersedes", metavar="ID|PATH",
              help="The memory this one replaces (it is kept, marked stale, and fades).")
def save(ctx: Context, text: str | None, title: str | None, tags: str | None,
         memory_type: str | None, strength: float, pin: bool, source: str | None,
         force: bool, supersedes: str | None) -> None:
    """Save a memory (TEXT, or standard input when TEXT is -)."""
    from vaultmem.cli.output import show_saved

    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise InvalidInput("give the memory text as an argument, or - to read stdin")
        text = sys.stdin.read()
    body: dict[str, Any] = {"content": text, "strength": strength, "pinned": pin, "force": force,
                            "tags": [t.strip() for t in (tags or "").split(",") if t.strip()]}
    optional = {"title": title, "type": memory_type, "source": source,
                "supersedes": supersedes}
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
@write_at_now
def gc(ctx: Context, apply: bool, write_at_now: bool) -> None:
    """Forget faded memories: move them to the archive folder (restorable)."""
    from vaultmem.cli.output import show_gc

    ctx.check_writes_at_now(apply, write_at_now)
    ctx.emit(ctx.call("gc", {"apply": apply}), show_gc)


@cli.command()
@common
@click.option("--apply", is_flag=True, help="Merge and archive the copies (default: only show).")
@write_at_now
def reconcile(ctx: Context, apply: bool, write_at_now: bool) -> None:
    """Merge sync conflict copies (notes sharing one memory id) into the memory: their uses
    are added to its note and the copies move to the archive folder (nothing is deleted)."""
    from vaultmem.cli.output import show_reconcile

    ctx.check_writes_at_now(apply, write_at_now)
    ctx.emit(ctx.call("reconcile", {"apply": apply}), show_reconcile)


@cli.command()
@common
@click.argument("ref", required=False, metavar="[ID|PATH]")
@click.option("--dry-run", is_flag=True, help="Only show what would be promoted.")
@write_at_now
def promote(ctx: Context, ref: str | None, dry_run: bool, write_at_now: bool) -> None:
    """Promote a memory (or every one that qualifies) to a long-term note in STM/."""
    from vaultmem.cli.output import show_promote

    ctx.check_writes_at_now(not dry_run, write_at_now)
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
@write_at_now
def consolidate(ctx: Context, cluster_id: str | None, write_at_now: bool) -> None:
    """List clusters of near-duplicate memories, or merge one (originals are archived)."""
    from vaultmem.cli.output import show_clusters, show_merge

    ctx.check_writes_at_now(bool(cluster_id), write_at_now)
    if cluster_id:
        ctx.emit(ctx.call("merge_cluster", {"cluster_id": cluster_id}), show_merge)
    else:
        ctx.emit(ctx.call("clusters", {}), show_clusters)


@cli.command()
@common(now=False)
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
def run(ctx: Context, log_level: str) -> None:
    """Run the daemon in the foreground (what the service units run)."""
    import logging

    from vaultmem.daemon.native import name_os_threads, pause_gc, quiet_blas

    quiet_blas()  # before numpy is imported (by what follows)
    name_os_threads()  # `top -H` tells the daemon's threads apart
    pause_gc()  # until the first answers are given (Daemon._startup resumes it)
    from vaultmem.app import build_app, daemon_params
    from vaultmem.daemon.run import Daemon

    logging.basicConfig(level=log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("apscheduler", "sentence_transformers", "httpx"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    parts = build_app(ctx.settings, daemon=True).daemon_parts()
    daemon = Daemon(daemon_params(ctx.settings), parts)
    with daemon.stopped_by_signals():
        daemon.start()
        assert daemon.server is not None
        click.echo(f"vaultmem {__version__} serving {parts.root} at {daemon.server.url}",
                   err=True)
        from vaultmem.cli.output import model_line

        chosen = parts.model
        click.echo(model_line({"setting": chosen.setting, "model": chosen.model,
                               "reason": chosen.reason}, parts.embedder.name), err=True)
        code = daemon.serve_forever()
    sys.exit(code)


@cli.command()
@common(now=False)
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
def mcp(ctx: Context, log_level: str) -> None:
    """Serve the memory tools to an MCP client over stdio (talks to the running daemon)."""
    from vaultmem.app import start_command
    from vaultmem.mcp.bridge import Bridge, serve_stdio
    from vaultmem.settings_params import content_chars

    paths = ctx.paths
    serve_stdio(Bridge(paths.vault, paths.data_dir, start_command(paths, ctx.config_path),
                       content_chars=content_chars(ctx.settings)), log_level)


@cli.command()
@common(now=False)
def token(ctx: Context) -> None:
    """Print the bearer token clients use to reach the daemon (created if missing)."""
    from vaultmem.api.auth import load_or_create_token

    data_dir = ctx.paths.data_dir
    value = load_or_create_token(data_dir)
    ctx.emit({"token": value, "file": str(data_dir / "token")}, lambda d: click.echo(d["token"]))


cli.add_command(service)
for _command in (*COMMANDS, *ADMIN_COMMANDS, *UPDATE_COMMANDS):
    cli.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
