"""`vaultmem supersede | unsupersede`: a newer memory replaces a stale one, and the undo.

Registered by `vaultmem.cli.main`; each command is one Api operation (the daemon's when one
serves the vault, in-process otherwise). `vaultmem save --supersedes ID` saves and links at once.
"""

from __future__ import annotations

from typing import Any

import click

from vaultmem.cli.context import Context, common


def show_superseded(d: dict[str, Any]) -> None:
    old, new = d["superseded"], d["by"]
    click.echo(f"{old['path']} (id {old['id']}) is superseded by {new['path']} "
               f"(id {new['id']})")
    click.echo(f"  {old['title']}: {old['decision']} — {old['reason']}")


def show_unsuperseded(d: dict[str, Any]) -> None:
    stale, successor = d["unsuperseded"], d["successor"]
    if d.get("dismissed"):
        click.echo(f"dismissed the proposed update: {d['dismissed']['path']} replaces nothing")
    if stale is not None:
        click.echo(f"{stale['path']} (id {stale['id']}) is current again")
    if successor is not None:
        click.echo(f"{successor['path']} (id {successor['id']}) no longer supersedes it")


@click.command()
@common
@click.argument("ref", metavar="OLD")
@click.option("--by", "by", required=True, metavar="NEW",
              help="The memory (id or path) that replaces OLD.")
def supersede(ctx: Context, ref: str, by: str) -> None:
    """Mark memory OLD as replaced by NEW: OLD keeps its note, is marked stale and fades."""
    ctx.emit(ctx.call("supersede", {"id": ref, "by": by}), show_superseded)


@click.command()
@common
@click.argument("ref", metavar="ID|PATH")
def unsupersede(ctx: Context, ref: str) -> None:
    """Undo a supersede: the stale memory (or the one its successor replaced) is current again."""
    ctx.emit(ctx.call("unsupersede", {"id": ref}), show_unsuperseded)


COMMANDS: tuple[click.Command, ...] = (supersede, unsupersede)
