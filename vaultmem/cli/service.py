"""`vaultmem service install|uninstall|status`: the daemon as a background service.

Registered by `vaultmem.cli.main`. Tests steer where the
commands act by passing a `ServiceHost` as click's `obj` (platform, home, command runner).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from vaultmem.cli.context import Context, common
from vaultmem.config import default_config_path
from vaultmem.errors import ConfigError
from vaultmem.install import installer as si
from vaultmem.install import units
from vaultmem.install.units import belongs_to, legacy_slug


@dataclass(frozen=True)
class ServiceHost:
    """Where the service commands act: None means this machine (sys.platform, ~, subprocess)."""

    platform: str | None = None
    home: Path | None = None
    runner: si.Runner | None = None


def _host() -> ServiceHost:
    obj = click.get_current_context().find_object(ServiceHost)
    return obj if obj is not None else ServiceHost()


def _config_in_use(ctx: Context) -> Path | None:
    """The config file the service must read: the one given, else the default if it exists."""
    if ctx.config_path is not None:
        if not ctx.config_path.is_file():
            raise ConfigError(f"config file does not exist: {ctx.config_path}")
        return ctx.config_path.resolve()
    default = default_config_path()
    return default.resolve() if default.is_file() else None


# built, not decorated: mypy cannot infer a decorated group's type across the import cycle
service: click.Group = click.Group(
    "service",
    help="Run the daemon in the background (systemd user unit on Linux, launchd agent on macOS).")


@service.command()
@common(now=False)
@click.option("--dry-run", is_flag=True, help="Print the file and the commands; change nothing.")
@click.option("--force", is_flag=True, help="Replace this vault's unit if it differs.")
def install(ctx: Context, dry_run: bool, force: bool) -> None:
    """Install and start the daemon for a vault as a service (one per vault)."""
    paths = ctx.paths
    spec = units.make_spec(paths.vault, paths.data_dir, config=_config_in_use(ctx))
    host = _host()
    outcome = si.install(spec, platform=host.platform, home=host.home, runner=host.runner,
                         dry_run=dry_run, force=force)
    unpassed = si.unpassed_settings(os.environ)
    if unpassed:
        outcome.notes.append(f"not passed to the service: {', '.join(unpassed)} (put these "
                             "settings in the config file)")
    ctx.emit(outcome.to_json(), _show_outcome)


@service.command()
@common(now=False)
@click.option("--dry-run", is_flag=True, help="Only show what would be done.")
def uninstall(ctx: Context, dry_run: bool) -> None:
    """Stop the vault's service and remove its file."""
    host, paths = _host(), ctx.paths
    slug = _slug(paths.vault, paths.data_dir, host)
    outcome = si.uninstall(slug, platform=host.platform, home=host.home, runner=host.runner,
                           dry_run=dry_run, vault=paths.vault)
    ctx.emit(outcome.to_json(), _show_outcome)


@service.command()
@common(now=False)
def status(ctx: Context) -> None:
    """Is the vault's service installed, running, and does its daemon answer?"""
    host, paths = _host(), ctx.paths
    data = si.status(_slug(paths.vault, paths.data_dir, host), paths.data_dir,
                     platform=host.platform, home=host.home, runner=host.runner,
                     vault=paths.vault)
    ctx.emit(data, _show_status)


def _slug(vault: Path, data_dir: Path, host: ServiceHost) -> str:
    """This vault's unit name; a unit an older version named after the data folder is used
    when it exists, runs this vault and no unit has the new name."""
    slug = units.service_slug(vault)
    legacy = legacy_slug(data_dir)
    platform = host.platform
    if not units.unit_path(slug, platform=platform, home=host.home).exists():
        old = units.unit_path(legacy, platform=platform, home=host.home)
        if belongs_to(old, vault):
            return legacy
    return slug


# human output -------------------------------------------------------------------------------

def _show_outcome(data: dict[str, Any]) -> None:
    if data["action"] == "install":
        _show_install(data)
    else:
        _show_uninstall(data)
    for note in data["notes"]:
        click.echo(f"note: {note}", err=True)


def _show_install(data: dict[str, Any]) -> None:
    if data["dry_run"]:
        click.echo(f"# would write {data['file']}:")
        click.echo(data["content"], nl=False)
        _show_commands("# then run:", data["todo"])
        return
    verb = "wrote" if data["changed"] else "unchanged:"
    click.echo(f"{verb} {data['file']}")
    _show_ran(data["ran"])
    _show_commands("to start it, run:", data["todo"])
    if not data["todo"]:
        click.echo(f"{data['name']} is enabled and started; logs: {data['logs']}")


def _show_uninstall(data: dict[str, Any]) -> None:
    if not data["changed"]:
        click.echo(f"no service installed for this vault ({data['file']} does not exist)")
        return
    if data["dry_run"]:
        _show_commands("would run:", data["todo"])
        return
    _show_ran(data["ran"])
    click.echo(f"removed {data['file']}")
    _show_commands("to stop it, run:", data["todo"])


def _show_ran(ran: list[dict[str, Any]]) -> None:
    for item in ran:
        failed = f" (exit {item['returncode']}: {item['output']})" if item["returncode"] else ""
        click.echo(f"ran: {item['command']}{failed}")


def _show_commands(title: str, commands: list[str]) -> None:
    if commands:
        click.echo(title)
        for command in commands:
            click.echo(f"  {command}")


def _show_status(data: dict[str, Any]) -> None:
    click.echo(f"service  {data['name']} ({data['manager']})")
    click.echo(f"file     {data['file']} "
               f"({'installed' if data['installed'] else 'not installed'})")
    if data["manager_available"]:
        parts = [data["state"]] + ([data["enabled"]] if data["enabled"] else [])
        parts += [f"pid {data['pid']}"] if data["pid"] else []
        click.echo(f"manager  {', '.join(parts)}")
    else:
        click.echo(f"manager  {data['manager']} is not reachable here")
    daemon = data["daemon"]
    answer = f"answers at {daemon['url']}" if daemon["answers"] else "no daemon answers"
    click.echo(f"daemon   {answer}")
