"""Which vault a service unit belongs to: names unique per vault, and the owner a unit file
records.

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
from pathlib import Path

from vaultmem.errors import ConfigError

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
