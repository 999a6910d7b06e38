"""Run the daemon in the background: a systemd user unit (Linux) or a launchd agent (macOS).

One service per vault, named after the vault's real path (`vaultmem-<slug>.service`,
`md.vaultmem.<slug>`; `vaultmem.install.units` names and renders them); another vault's unit
is never replaced or removed. `install`, `uninstall` and `status` touch only the unit file
under `home` and talk to the service manager through an injected `runner`, so tests never
touch the real system. When the manager is not reachable they do the file part and say which
commands to run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from vaultmem.errors import ConfigError, DaemonError
from vaultmem.install.units import (
    LABEL_PREFIX,
    UNIT_PREFIX,
    ServiceSpec,
    belongs_to,
    check_owner,
    launchd_log_path,
    manager_kind,
    render,
    service_name,
    unit_path,
)

COMMAND_TIMEOUT = 60.0
FILE_MODE = 0o644
# settings passed to the service explicitly (as arguments or in its environment)
PASSED_SETTINGS = {"VAULTMEM_VAULT", "VAULTMEM_CONFIG", "VAULTMEM_DATA_DIR"}


class CommandResult(NamedTuple):
    returncode: int
    stdout: str = ""
    stderr: str = ""


Runner = Callable[[Sequence[str]], CommandResult]


def run_command(argv: Sequence[str]) -> CommandResult:
    """The real runner: a missing program is exit 127, a hung one 124."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False,
                              timeout=COMMAND_TIMEOUT)
    except FileNotFoundError:
        return CommandResult(127, "", f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return CommandResult(124, "", f"{argv[0]}: no answer within {COMMAND_TIMEOUT:g} s")
    return CommandResult(done.returncode, done.stdout, done.stderr)


def unpassed_settings(env: Iterable[str]) -> list[str]:
    """VAULTMEM_* variables of this shell that the service will not see."""
    return sorted(name for name in env
                  if name.startswith("VAULTMEM_") and name not in PASSED_SETTINGS)


# install / uninstall / status ---------------------------------------------------------------

@dataclass
class Outcome:
    """What install or uninstall did (or, with dry_run, would do)."""

    action: str
    manager: str
    name: str
    file: str
    dry_run: bool
    changed: bool
    logs: str
    content: str | None = None
    manager_available: bool | None = None
    ran: list[dict[str, Any]] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    check: bool = True  # a failure stops the command; else it is only reported

    def display(self) -> str:
        return shlex.join(self.argv)


def install(spec: ServiceSpec, *, platform: str | None = None, home: Path | None = None,
            runner: Runner | None = None, dry_run: bool = False,
            force: bool = False) -> Outcome:
    """Write the unit for `spec` and (re)start it through the service manager."""
    kind, home = manager_kind(platform), home or Path.home()
    path = unit_path(spec.slug, platform=platform, home=home)
    content = render(spec, platform=platform, home=home)
    check_owner(path, spec.vault)
    previous = path.read_text(encoding="utf-8") if path.is_file() else None
    differs = previous is not None and previous != content
    outcome = _outcome("install", spec.slug, path, platform, home, dry_run,
                       changed=previous != content, content=content)
    if differs and not force:
        if not dry_run:
            raise ConfigError(f"{path} already exists and differs from what would be written "
                              "(see --dry-run): pass --force to replace it")
        outcome.notes.append(f"{path} exists and differs: --force is needed to replace it")
    steps = _install_steps(kind, spec.slug, path, restart=differs)
    if dry_run:
        outcome.todo = [step.display() for step in steps]
        return outcome
    if outcome.changed:
        _write_file(path, content)
    if kind == "launchd":
        launchd_log_path(spec.slug, home).parent.mkdir(parents=True, exist_ok=True)
    _run_or_defer(outcome, kind, steps, runner or run_command)
    return outcome


def uninstall(slug: str, *, platform: str | None = None, home: Path | None = None,
              runner: Runner | None = None, dry_run: bool = False,
              vault: Path | None = None) -> Outcome:
    """Stop and disable the service, then remove its file (only `vault`'s, when given)."""
    kind, home = manager_kind(platform), home or Path.home()
    path = unit_path(slug, platform=platform, home=home)
    if vault is not None:
        check_owner(path, vault)
    outcome = _outcome("uninstall", slug, path, platform, home, dry_run, changed=path.exists())
    if not outcome.changed:
        return outcome  # nothing installed for this vault
    before, after = _uninstall_steps(kind, slug)
    if dry_run:
        removal = shlex.join(["rm", str(path)])
        outcome.todo = [s.display() for s in before] + [removal] + [s.display() for s in after]
        return outcome
    run = runner or run_command
    outcome.manager_available = manager_available(kind, run)
    if not outcome.manager_available:
        _remove_unmanaged(outcome, kind, slug, path)
        return outcome
    _run_steps(outcome, before, run)
    path.unlink(missing_ok=True)
    _run_steps(outcome, after, run)
    return outcome


def status(slug: str, data_dir: Path, *, platform: str | None = None,
           home: Path | None = None, runner: Runner | None = None,
           vault: Path | None = None) -> dict[str, Any]:
    """The unit file, the service manager's view of it, and whether a daemon answers. With
    `vault`, a unit file that runs another vault does not count as installed."""
    from vaultmem.api.client import discover

    kind = manager_kind(platform)
    path = unit_path(slug, platform=platform, home=home)
    run = runner or run_command
    available = manager_available(kind, run)
    view: dict[str, Any] = {"state": None, "enabled": None, "pid": None}
    installed = path.is_file() and (vault is None or belongs_to(path, vault))
    if available and (installed or not path.is_file()):  # never report another vault's
        view = _systemd_view(slug, run) if kind == "systemd" else _launchd_view(slug, run)
    client = discover(data_dir)
    return {"platform": platform or sys.platform, "manager": kind,
            "name": service_name(slug, platform=platform), "file": str(path),
            "installed": installed, "manager_available": available, **view,
            "daemon": {"answers": client is not None,
                       "url": client.base_url if client else None}}


def manager_available(kind: str, runner: Runner) -> bool:
    probe = (["systemctl", "--user", "show-environment"] if kind == "systemd"
             else ["launchctl", "print", _launchd_domain()])
    return runner(probe).returncode == 0


# helpers ------------------------------------------------------------------------------------

def _outcome(action: str, slug: str, path: Path, platform: str | None, home: Path,
             dry_run: bool, *, changed: bool, content: str | None = None) -> Outcome:
    kind = manager_kind(platform)
    name = service_name(slug, platform=platform)
    logs = (f"journalctl --user -u {name}" if kind == "systemd"
            else str(launchd_log_path(slug, home)))
    return Outcome(action=action, manager=kind, name=name, file=str(path), dry_run=dry_run,
                   changed=changed, logs=logs, content=content)


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def _launchd_target(slug: str) -> str:
    return f"{_launchd_domain()}/{LABEL_PREFIX}{slug}"


def _install_steps(kind: str, slug: str, path: Path, *, restart: bool) -> list[Step]:
    if kind == "systemd":
        name = f"{UNIT_PREFIX}{slug}.service"
        steps = [Step(("systemctl", "--user", "daemon-reload")),
                 Step(("systemctl", "--user", "enable", "--now", name))]
        if restart:
            steps.append(Step(("systemctl", "--user", "try-restart", name)))
        return steps
    return [_stop_step(kind, slug), Step(("launchctl", "bootstrap", _launchd_domain(), str(path)))]


def _uninstall_steps(kind: str, slug: str) -> tuple[list[Step], list[Step]]:
    """Steps before removing the file, and after."""
    if kind == "systemd":
        name = f"{UNIT_PREFIX}{slug}.service"
        return ([Step(("systemctl", "--user", "disable", "--now", name), check=False)],
                [Step(("systemctl", "--user", "daemon-reload"), check=False)])
    return [_stop_step(kind, slug)], []


def _stop_step(kind: str, slug: str) -> Step:
    if kind == "systemd":
        return Step(("systemctl", "--user", "stop", f"{UNIT_PREFIX}{slug}.service"), check=False)
    return Step(("launchctl", "bootout", _launchd_target(slug)), check=False)


def _run_or_defer(outcome: Outcome, kind: str, steps: list[Step], runner: Runner) -> None:
    outcome.manager_available = manager_available(kind, runner)
    if outcome.manager_available:
        _run_steps(outcome, steps, runner)
        return
    outcome.todo = [step.display() for step in steps]
    outcome.notes.append(f"the {kind} service manager is not reachable here: the file is "
                         "written; run the commands below where it is")


def _run_steps(outcome: Outcome, steps: list[Step], runner: Runner) -> None:
    for step in steps:
        result = runner(step.argv)
        output = (result.stdout + result.stderr).strip()
        outcome.ran.append({"command": step.display(), "returncode": result.returncode,
                            "output": output})
        if step.check and result.returncode != 0:
            raise DaemonError(f"`{step.display()}` failed (exit {result.returncode})"
                              + (f": {output}" if output else ""))


def _write_file(path: Path, content: str) -> None:
    """Atomically, mode 0644 whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_unmanaged(outcome: Outcome, kind: str, slug: str, path: Path) -> None:
    """Remove the file (and the link `systemctl enable` made) without the service manager."""
    link = path.parent / "default.target.wants" / path.name
    if kind == "systemd" and link.is_symlink():
        link.unlink()
    path.unlink(missing_ok=True)
    outcome.todo = [_stop_step(kind, slug).display()]
    outcome.notes.append("the service manager is not reachable here: if the service still "
                         "runs, stop it with the command below")


def _systemd_view(slug: str, runner: Runner) -> dict[str, Any]:
    name = f"{UNIT_PREFIX}{slug}.service"
    active = runner(["systemctl", "--user", "is-active", name]).stdout.strip()
    enabled = runner(["systemctl", "--user", "is-enabled", name]).stdout.strip()
    main_pid = runner(["systemctl", "--user", "show", "--value", "-p", "MainPID", name])
    pid = int(main_pid.stdout.strip()) if main_pid.stdout.strip().isdigit() else 0
    return {"state": active or "unknown", "enabled": enabled or "unknown", "pid": pid or None}


def _launchd_view(slug: str, runner: Runner) -> dict[str, Any]:
    result = runner(["launchctl", "print", _launchd_target(slug)])
    if result.returncode != 0:
        return {"state": "not loaded", "enabled": None, "pid": None}
    state = re.search(r"^\s*state = (.+)$", result.stdout, re.MULTILINE)
    pid = re.search(r"^\s*pid = (\d+)$", result.stdout, re.MULTILINE)
    return {"state": state.group(1).strip() if state else "loaded", "enabled": None,
            "pid": int(pid.group(1)) if pid else None}
