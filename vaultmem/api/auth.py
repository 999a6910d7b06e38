"""Who may talk to the socket: the bearer token, and the Host/Origin checks that keep browsers
(DNS rebinding, cross-site requests) out."""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

from vaultmem.errors import ConfigError

TOKEN_FILE = "token"
PLUGIN_ORIGIN = "app://obsidian.md"
_LOOPBACK_HOST = re.compile(r"^(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?$", re.IGNORECASE)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def load_or_create_token(data_dir: Path) -> str:
    """The daemon's token from `<data_dir>/token`, created (mode 0600) on first use.

    The file appears atomically with its full content (written under a temporary name, then
    hard-linked into place without overwriting), so a concurrent reader never sees it empty.
    An existing file readable by group or others is tightened to 0600.
    """
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / TOKEN_FILE
    for _ in range(3):
        token = _read_token(path)
        if token:
            return token
        if token == "":  # an empty file (e.g. truncated by hand): replace it
            path.unlink(missing_ok=True)
        with contextlib.suppress(FileExistsError):  # another process won the race: read theirs
            _create_token(path)
    raise ConfigError(f"cannot create the token file {path}")


def _read_token(path: Path) -> str | None:
    """The token, "" if the file is empty, None if there is no file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the token file {path} is not a regular file")
        if info.st_mode & 0o077:
            os.fchmod(handle.fileno(), 0o600)
        raw = handle.read(4096)
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"the token file {path} is not ASCII text: delete it") from None
    if token and (not token.isprintable() or " " in token):
        raise ConfigError(f"the token file {path} holds an invalid token: delete it")
    return token


def _create_token(path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write((secrets.token_urlsafe(32) + "\n").encode("ascii"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # atomic, never overwrites
        except FileExistsError:
            raise
        except OSError:  # no hard links on this file system
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def check_host(host_header: str | None) -> bool:
    """Only loopback names with an optional port: a DNS-rebinding page sends its own name."""
    return host_header is not None and _LOOPBACK_HOST.match(host_header.strip()) is not None


def check_origin(origin: str | None) -> bool:
    """No Origin (not a browser) or the Obsidian plugin's; any web page is refused."""
    return origin is None or origin == PLUGIN_ORIGIN


def token_matches(expected: str, authorization: str | None) -> bool:
    """`Authorization: Bearer <token>` carries `expected` (compared in constant time)."""
    if not authorization:
        return False
    scheme, _, given = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))
