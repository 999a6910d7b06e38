"""This device's id: which `stm_uses_by` counter the uses recorded here go to (core.device_sync).

It is chosen once per vault and machine (the data dir is outside the vault, so a sync tool never
carries it to another device) and kept in `<data dir>/device-id`; the `device_id` setting
overrides it. Readable on purpose (`laptop-3f2a`), so a user can tell the counters apart.
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from pathlib import Path

from vaultmem.errors import ConfigError

DEVICE_FILE = "device-id"
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def device_id(data_dir: Path, configured: str = "") -> str:
    """The configured id, else the one stored in `data_dir`, else a new one (stored)."""
    if configured:
        if not _VALID.fullmatch(configured):
            raise ConfigError(f"device_id {configured!r}: use 1-64 letters, digits, '-', '_' "
                              "or '.', starting with a letter or digit")
        return configured
    path = data_dir / DEVICE_FILE
    try:
        stored = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        stored = ""
    if _VALID.fullmatch(stored):
        return stored
    # Two processes starting at once may each store one; the last stays. Harmless: an id only
    # has to differ from the other devices' ids, and each use is credited to the id it ran with.
    new = _new_id()
    tmp = path.with_name(f"{DEVICE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(new + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return new


def _new_id() -> str:
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().split(".")[0].lower()).strip("-")
    return f"{host[:20] or 'device'}-{uuid.uuid4().hex[:4]}"
