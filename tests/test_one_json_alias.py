"""One `JSON` alias for a JSON object (`vaultmem/core/json_types.py`); a module that defines its
own fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import vaultmem

PACKAGE = Path(vaultmem.__file__).parent


def json_aliases(tree: ast.Module) -> list[int]:
    """The lines that bind the name `JSON` at module level (`JSON = …`, `JSON: TypeAlias = …`,
    or as one of several targets)."""
    lines = []
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        names = [n for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if any(n.id == "JSON" for n in names):
            lines.append(node.lineno)
    return lines


def test_json_is_defined_once() -> None:
    defined = {p.relative_to(PACKAGE).as_posix(): lines for p in sorted(PACKAGE.rglob("*.py"))
               if (lines := json_aliases(ast.parse(p.read_text(encoding="utf-8"))))}
    assert defined == {"core/json_types.py": [9]}


def test_the_check_sees_each_way_of_binding_it() -> None:
    tree = ast.parse("JSON = dict\nJSON: type = dict\nOther = dict\nx, JSON = 1, 2\n")
    assert json_aliases(tree) == [1, 2, 4]


def json_returns(tree: ast.Module) -> list[str]:
    """The functions that say they return `JSON` or a `dict[str, Any]` (alone, in a list, or
    or-ed with None)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            returned = ast.unparse(node.returns)
            if "JSON" in returned or "dict[str, Any]" in returned:
                found.append(f"{node.name} -> {returned}")
    return found


#: where JSON is built or read on purpose: the wire and the edges over it, the TOML read
EDGES = ("api/", "mcp/", "cli/", "install/", "config.py")
#: functions below the edges that handle JSON-like dicts and answer no use case
NOT_USE_CASES = {
    "index/onnx_cache.py": ["_manifest_files -> dict[str, dict[str, Any]] | None",
                            "_recorded_stamps -> dict[str, Any]"],  # a model cache's files
    "index/onnx_embedder.py": ["_feed -> dict[str, Any]"],  # the ONNX session's inputs
    "app.py": ["call_here -> JSON"],  # the CLI's in-process call: Api.call's answer, passed on
}


def test_no_use_case_answers_json() -> None:
    """The use cases answer typed results; their JSON is built at the wire (api/)."""
    found = {name: returns for p in sorted(PACKAGE.rglob("*.py"))
             if not (name := p.relative_to(PACKAGE).as_posix()).startswith(EDGES)
             if (returns := json_returns(ast.parse(p.read_text(encoding="utf-8"))))}
    assert found == NOT_USE_CASES


def test_the_json_return_check_sees_each_form() -> None:
    tree = ast.parse("def a() -> JSON: ...\ndef b() -> list[dict[str, Any]]: ...\n"
                     "def c() -> JSON | None: ...\ndef d() -> dict[str, int]: ...\n")
    assert json_returns(tree) == ["a -> JSON", "b -> list[dict[str, Any]]", "c -> JSON | None"]
