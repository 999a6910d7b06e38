"""`vaultmem restore | pin | unpin | feedback | sweep`: the memory operations the socket and the
MCP bridge have, on the command line too.

Registered by `vaultmem.cli.main`. Each command is one Api
operation, sent to the daemon when one serves the vault and run in-process otherwise.
"""

from __future__ import annotations

from typing import Any

import click

from vaultmem.cli.context import Context, common, write_at_now


def _echo(text: str) -> None:
    click.echo(text)


def show_restored(d: dict[str, Any]) -> None:
    moved = d["restored"]
    where = (f"{moved['from']} → {moved['to']}" if moved["from"] != moved["to"]
             else moved["to"])
    memory = d["memory"]
    _echo(f"restored {where} (id {moved['id']}): active, score {memory['score']:.3f}")


def show_sweep(d: dict[str, Any]) -> None:
    from vaultmem.cli.output import show_left_alone

    show_left_alone(d)
    if d["dry_run"]:
        for item in d["archive"]:
            _echo(f"would archive {item['path']}: {item['reason']}")
        for item in d["promote"]:
            _echo(f"would promote {item['path']}: {item['reason']}")
        if not d["archive"] and not d["promote"]:
            _echo(f"nothing to forget or promote ({d['keep']} kept)")
        else:
            _echo("(dry run: add --apply to archive and promote them)")
        return
    for label in ("finished_moves", "archived", "promoted"):
        for item in d[label]:
            _echo(f"{label.replace('_', ' ')} {item['from']} → {item['to']}")
    _echo(f"{len(d['archived'])} archived, {len(d['promoted'])} promoted, {d['keep']} kept")


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
def restore(ctx: Context, ref: str) -> None:
    """Bring an archived memory back: active, used now, out of the archive folder."""
    ctx.emit(ctx.call("restore", {"id": ref}), show_restored)


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
def pin(ctx: Context, ref: str) -> None:
    """Pin a memory: it is never forgotten, archived or merged away."""
    from vaultmem.cli.output import show_memory

    ctx.emit(ctx.call("pin", {"id": ref, "pinned": True}), show_memory)


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
def unpin(ctx: Context, ref: str) -> None:
    """Unpin a memory: it may fade and be forgotten again."""
    from vaultmem.cli.output import show_memory

    ctx.emit(ctx.call("pin", {"id": ref, "pinned": False}), show_memory)


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
@click.option("--helpful/--unhelpful", required=True,
              help="Helpful: a use with a strength boost. Unhelpful: strength lowered.")
def feedback(ctx: Context, ref: str, helpful: bool) -> None:
    """Say whether a memory helped (its strength goes up or down)."""
    from vaultmem.cli.output import show_memory

    ctx.emit(ctx.call("feedback", {"id": ref, "helpful": helpful}), show_memory)


@click.command()
@common
@click.option("--apply", is_flag=True, help="Archive and promote (default: only show).")
@write_at_now
def sweep(ctx: Context, apply: bool, write_at_now: bool) -> None:
    """Forget and promote in one pass, as the daemon's schedule does."""
    ctx.check_writes_at_now(apply, write_at_now)
    ctx.emit(ctx.call("sweep", {"dry_run": not apply}), show_sweep)


COMMANDS: tuple[click.Command, ...] = (restore, pin, unpin, feedback, sweep)
