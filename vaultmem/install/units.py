"""A vault's service unit: its name, where its file lives, what it says (rendering is pure:
values in, text out), and which vault it belongs to.

A unit's name comes from the vault's real path (`vaultmem-<vault name>-<8 hex digits>`), so two
vaults never share one, whatever their data folders are called. Before `service install`
replaces a unit file, and before `uninstall` removes one, the vault named inside the file is
compared with the vault the command is for: vaultmem never touches another vault's unit.
Units written by older versions were named after the data folder; `legacy_slug` finds them,
and they are used only when they name this vault.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from vaultmem.errors import ConfigError

UNIT_PREFIX = "vaultmem-"
LABEL_PREFIX = "md.vaultmem."
RESTART_SEC = 5
STOP_TIMEOUT_SEC = 30
BASE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}

SYSTEMD_TEMPLATE = Template("""\
# Written by `vaultmem service install` for the vault ${vault}
# Re-run it (with --force) to change this file; remove it with `vaultmem service uninstall`.
[Unit]
Description=vaultmem memory daemon (${description})
StartLimitIntervalSec=300
StartLimitBurst=10

[Service]
Type=simple
ExecStart=${exec_start}
${environment}
Restart=on-failure
RestartSec=${restart_sec}
TimeoutStopSec=${stop_timeout}
StandardOutput=journal
StandardError=journal
SyslogIdentifier=${identifier}

[Install]
WantedBy=default.target
""")

_OWNER_LINE = re.compile(r"^# Written by `vaultmem service install` for the vault (.+)$", re.M)


def _clean(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def service_slug(vault: Path) -> str:
    """`<vault name>-<8 hex digits of its real path's SHA-256>`: unique per vault, readable."""
    real = os.path.realpath(vault.expanduser())
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{_clean(Path(real).name)[:40] or 'vault'}-{digest}"


def legacy_slug(data_dir: Path) -> str:
    """The name older versions gave a vault's unit: its data folder's name."""
    return _clean(data_dir.name) or "vault"


def unit_owner(path: Path) -> Path | None:
    """The vault a unit file (systemd unit or launchd plist) runs, or None when it names none
    (not written by vaultmem, or unreadable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if path.suffix == ".plist":
        try:
            arguments = plistlib.loads(data).get("ProgramArguments", [])
        except Exception:
            return None
        if "--vault" in arguments[:-1]:
            return Path(arguments[arguments.index("--vault") + 1])
        return None
    match = _OWNER_LINE.search(data.decode("utf-8", "replace"))
    return Path(match.group(1)) if match else None


def belongs_to(path: Path, vault: Path) -> bool:
    owner = unit_owner(path)
    return owner is not None and os.path.realpath(owner) == os.path.realpath(vault)


def check_owner(path: Path, vault: Path) -> None:
    """Refuse to replace or remove a unit file that runs another vault (or no vault)."""
    if not path.exists() or belongs_to(path, vault):
        return
    owner = unit_owner(path)
    whose = f"the vault {owner}" if owner else "no vault vaultmem knows of"
    raise ConfigError(f"{path} belongs to {whose}, not to {vault}: vaultmem leaves it alone "
                      "(remove it with that vault's `vaultmem service uninstall`)")


# what the unit runs ------------------------------------------------------------------------

@dataclass(frozen=True)
class ServiceSpec:
    """What the service runs: absolute paths, resolved at install time."""

    slug: str
    python: Path
    vault: Path
    data_dir: Path
    config: Path | None = None

    def arguments(self) -> list[str]:
        args = [str(self.python), "-m", "vaultmem", "run", "--vault", str(self.vault)]
        if self.config is not None:
            args += ["--config", str(self.config)]
        return args

    def environment(self) -> dict[str, str]:
        return {**BASE_ENV, "VAULTMEM_DATA_DIR": str(self.data_dir)}


def make_spec(vault: Path, data_dir: Path, *, config: Path | None = None,
              python: str | Path | None = None) -> ServiceSpec:
    """Check and absolutise what the unit will run (the venv's python is not resolved)."""
    interpreter = Path(python or sys.executable)
    if not interpreter.is_file():
        raise ConfigError(f"cannot tell which python runs vaultmem ({interpreter})")
    spec = ServiceSpec(slug=service_slug(vault), python=interpreter.absolute(),
                       vault=vault.expanduser().resolve(),
                       data_dir=data_dir.expanduser().absolute(),
                       config=config.expanduser().resolve() if config else None)
    if not spec.vault.is_dir():
        raise ConfigError(f"vault folder does not exist: {spec.vault}")
    if spec.config is not None and not spec.config.is_file():
        raise ConfigError(f"config file does not exist: {spec.config}")
    for value in spec.arguments() + list(spec.environment().values()):
        if any(ord(char) < 32 or ord(char) == 127 for char in value):
            raise ConfigError(f"a service cannot run with control characters in {value!r}")
    return spec


# platforms and paths ----------------------------------------------------------------------

def manager_kind(platform: str | None = None) -> str:
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    raise ConfigError(f"vaultmem service supports Linux (systemd) and macOS (launchd), not "
                      f"{platform}: run `vaultmem run` with your system's own tools")


def service_name(slug: str, *, platform: str | None = None) -> str:
    if manager_kind(platform) == "systemd":
        return f"{UNIT_PREFIX}{slug}.service"
    return f"{LABEL_PREFIX}{slug}"


def unit_path(slug: str, *, platform: str | None = None, home: Path | None = None) -> Path:
    home = home or Path.home()
    if manager_kind(platform) == "systemd":
        return home / ".config" / "systemd" / "user" / service_name(slug, platform=platform)
    return home / "Library" / "LaunchAgents" / f"{service_name(slug, platform=platform)}.plist"


def launchd_log_path(slug: str, home: Path | None = None) -> Path:
    return (home or Path.home()) / "Library" / "Logs" / "vaultmem" / f"{slug}.log"


# rendering (pure) -------------------------------------------------------------------------

def render(spec: ServiceSpec, *, platform: str | None = None, home: Path | None = None) -> str:
    if manager_kind(platform) == "systemd":
        return render_systemd_unit(spec)
    return render_launchd_plist(spec, log_file=launchd_log_path(spec.slug, home))


def render_systemd_unit(spec: ServiceSpec) -> str:
    environment = "\n".join(
        f'Environment="{_systemd_escape(f"{key}={value}")}"'
        for key, value in spec.environment().items())
    return SYSTEMD_TEMPLATE.substitute(
        vault=spec.vault, description=(spec.vault.name or spec.slug).replace("%", "%%"),
        exec_start=" ".join(_systemd_word(arg) for arg in spec.arguments()),
        environment=environment, restart_sec=RESTART_SEC, stop_timeout=STOP_TIMEOUT_SEC,
        identifier=f"{UNIT_PREFIX}{spec.slug}")


def render_launchd_plist(spec: ServiceSpec, *, log_file: Path) -> str:
    agent: dict[str, Any] = {
        "Label": f"{LABEL_PREFIX}{spec.slug}",
        "ProgramArguments": spec.arguments(),
        "EnvironmentVariables": spec.environment(),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": RESTART_SEC,
        "ExitTimeOut": STOP_TIMEOUT_SEC,
        "StandardOutPath": str(log_file),
        "StandardErrorPath": str(log_file),
    }
    return plistlib.dumps(agent).decode("utf-8")


def _systemd_escape(text: str) -> str:
    """Escape for a double-quoted systemd value: backslash, quote, and `%` specifiers."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


def _systemd_word(arg: str) -> str:
    """One ExecStart argument: `$` doubled (no variable expansion), quoted unless plain."""
    escaped = _systemd_escape(arg).replace("$", "$$")
    return escaped if re.fullmatch(r"[A-Za-z0-9_@+=:,./-]+", arg) else f'"{escaped}"'
