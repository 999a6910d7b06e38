"""`vaultmem list | forget | edit | undo`: looking after single memories and whole operations.

Registered by `vaultmem.cli.main`; each command is one Api operation, sent to the daemon when
one serves the vault and run in-process otherwise.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from vaultmem.cli.context import Context, common
from vaultmem.errors import InvalidInput


def _echo(text: str) -> None:
    click.echo(text)


def show_list(d: dict[str, Any]) -> None:
    if not d["memories"]:
        _echo("no memories match")
        return
    _echo(f"{'score':>7}  {'status':<8} {'uses':>4}  {'next':<7}  title (id)")
    for m in d["memories"]:
        pin = " [pinned]" if m["pinned"] else ""
        _echo(f"{m['score']:7.3f}  {m['status']:<8} {m['use_count']:>4}  {m['decision']:<7}  "
              f"{m['title']}{pin} ({m['id']})")
    shown = len(d["memories"])
    if shown < d["total"]:
        _echo(f"({shown} of {d['total']}: --limit shows more)")


def show_forgotten(d: dict[str, Any]) -> None:
    moved = d["forgotten"]
    _echo(f"forgotten {moved['from']} → {moved['to']} (id {moved['id']}); "
          f"`vaultmem restore {moved['id']}` brings it back")


@click.command(name="list")
@common
@click.option("--status", "statuses", multiple=True,
              type=click.Choice(["active", "promoted", "archived"]),
              help="Statuses to list (repeatable; default: active and promoted).")
@click.option("--all", "all_statuses", is_flag=True, help="Archived memories too.")
@click.option("--tag", "tags", multiple=True, help="Any of these tags (repeatable).")
@click.option("--type", "memory_type", help="Only memories of this stm_type.")
@click.option("--decision", type=click.Choice(["keep", "forget", "promote"]),
              help="Only what the next sweep would keep, forget or promote.")
@click.option("--pinned/--unpinned", default=None, help="Only pinned / unpinned memories.")
@click.option("--sort", type=click.Choice(["score", "last_used", "created", "use_count", "title"]),
              default="score", show_default=True)
@click.option("--limit", type=click.IntRange(1, 10000), default=100, show_default=True)
def list_memories(ctx: Context, statuses: tuple[str, ...], all_statuses: bool,
                  tags: tuple[str, ...], memory_type: str | None, decision: str | None,
                  pinned: bool | None, sort: str, limit: int) -> None:
    """List memories with their status, score, uses and what the next sweep would do."""
    chosen = ["active", "promoted", "archived"] if all_statuses else list(statuses)
    body: dict[str, Any] = {"sort": sort, "limit": limit}
    optional = {"status": chosen or None, "tags": list(tags) or None, "type": memory_type,
                "decision": decision, "pinned": pinned}
    body.update({k: v for k, v in optional.items() if v is not None})
    ctx.emit(ctx.call("list", body), show_list)


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
def forget(ctx: Context, ref: str) -> None:
    """Forget a memory now: archived (moved to the archive folder), restorable."""
    ctx.emit(ctx.call("forget", {"id": ref}), show_forgotten)


def show_edited(d: dict[str, Any]) -> None:
    edited = d["edited"]
    _echo(f"edited {edited['path']} ({', '.join(edited['changed'])}; id {edited['id']})")


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
@click.argument("text", required=False)
@click.option("--title", help="The memory's new title (its `# Title` line).")
@click.option("--tags", help="The memory's new tags, comma-separated (\"\" removes them).")
def edit(ctx: Context, ref: str, text: str | None, title: str | None, tags: str | None) -> None:
    """Change a memory's text (TEXT, or standard input when TEXT is -), title or tags.

    Only the memory's own words change: its stm_* state, your other properties and vaultmem's
    sections stay byte for byte; the text passes the same gate as a save."""
    if text == "-":
        text = sys.stdin.read()
    if text is None and title is None and tags is None:
        raise InvalidInput("give the new text, --title or --tags")
    body: dict[str, Any] = {"id": ref}
    if tags is not None:
        body["tags"] = [t.strip() for t in tags.split(",") if t.strip()]
    body.update({k: v for k, v in (("content", text), ("title", title)) if v is not None})
    ctx.emit(ctx.call("edit", body), show_edited)


def show_undo(d: dict[str, Any]) -> None:
    if "operations" in d:
        if not d["operations"]:
            _echo("no operations to undo")
        for op in d["operations"]:
            state = f"undone {op['undone_at']}" if op["undone_at"] else "can be undone"
            _echo(f"{op['id']}  {op['at']}  {op['kind']:<13} {op['moves']} move(s), "
                  f"{op['created']} created  ({state})")
        return
    for item in d["restored"]:
        _echo(f"restored {item['from']} → {item['to']}")
    for item in d["archived"]:
        _echo(f"archived {item['from']} → {item['to']} (created by the {d['kind']})")
    for item in d["skipped"]:
        _echo(f"skipped {item['path']}: {item['reason']}")
    _echo(f"undid {d['operation']} ({d['kind']}): {len(d['restored'])} restored, "
          f"{len(d['archived'])} archived, {len(d['skipped'])} skipped")


@click.command()
@common
@click.argument("operation", required=False, metavar="[OPERATION-ID]")
@click.option("--list", "list_only", is_flag=True, help="List the recent operations instead.")
def undo(ctx: Context, operation: str | None, list_only: bool) -> None:
    """Undo a whole sweep, gc, promotion or merge (default: the last one): every note it
    archived, promoted or merged goes back exactly as it was, where it was."""
    body: dict[str, Any] = {"list": list_only}
    if operation is not None:
        body["operation"] = operation
    ctx.emit(ctx.call("undo", body), show_undo)


COMMANDS: tuple[click.Command, ...] = (list_memories, forget, edit, undo)
