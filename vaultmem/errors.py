"""One exception tree for every expected failure; the edges turn it into a message.

    VaultmemError                  base: `code` (stable, machine-readable) + a message that
    │                              says what to do next
    ├── ConfigError                malformed config file, bad value, missing vault
    ├── InvalidInput               a request or argument that makes no sense (HTTP 400/422)
    │   └── PathOutsideVault       a path that escapes the vault (../, absolute, symlink out)
    ├── NotFound                   unknown memory id or note path (HTTP 404)
    ├── NoteError                  a note that cannot be safely handled
    │   ├── FrontmatterError       frontmatter that does not parse: read, reported, never written
    │   └── ConcurrentEdit         the file changed since it was read; nothing was written (409)
    ├── Refused                    the intake gate refused content (too short, secret, …) (422)
    ├── IndexUnusableError         the index or the model cannot be used (storage, schema,
    │                              model files, ONNX export)
    └── DaemonError                daemon not running / already running / unreachable
        ├── NotRunning             (mcp/bridge.py) no daemon serves the vault: the MCP tools
        │                          say how to start one
        ├── VaultBusy              (vault/writer_lock.py) another writer on this machine holds
        │                          the vault's lock: the message names it (pid, port, data dir)
        └── Stopping               the daemon is stopping: a sync ended early, redone next start
"""

from __future__ import annotations


class VaultmemError(Exception):
    code = "error"
    http_status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(VaultmemError):
    code = "config"
    http_status = 500


class InvalidInput(VaultmemError):
    code = "invalid_input"
    http_status = 400


class PathOutsideVault(InvalidInput):
    code = "path_outside_vault"


class NotFound(VaultmemError):
    code = "not_found"
    http_status = 404


class NoteError(VaultmemError):
    code = "note_error"
    http_status = 422


class FrontmatterError(NoteError):
    code = "frontmatter"


class ConcurrentEdit(NoteError):
    code = "concurrent_edit"
    http_status = 409


class Refused(VaultmemError):
    code = "refused"
    http_status = 422


class IndexUnusableError(VaultmemError):
    code = "index"
    http_status = 500


class DaemonError(VaultmemError):
    code = "daemon"
    http_status = 503


class Stopping(DaemonError):
    """A sync ended between two embedding slices because the daemon is stopping. What it had
    written is whole; the notes it had not written are not recorded, so the next start
    indexes them."""

    code = "daemon"
