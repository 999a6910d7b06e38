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
