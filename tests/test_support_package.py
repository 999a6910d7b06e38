"""Which way the product, the test-support package and the tools depend on each other.

* `vaultmem/` imports neither the tests nor the test support (`vaultmem_testing`).
* `vaultmem_testing/` (what tests and benchmarks share) imports vaultmem and itself, never a
  test module nor `bench/` or `scripts/`.
* `bench/` and `scripts/` never import `tests`; they import the test support by name.
* No code of the product, the test support, `bench/` or `scripts/` edits `sys.path` to import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

AREAS = ("vaultmem", "vaultmem_testing", "bench", "scripts")
#: what each area must not import (the top-level name)
FORBIDDEN = {
    "vaultmem": {"tests", "vaultmem_testing", "bench", "scripts"},
    "vaultmem_testing": {"tests", "bench", "scripts"},
    "bench": {"tests", "scripts"},
    "scripts": {"tests", "bench"},
}


def sources(area: str) -> list[Path]:
    return sorted(p for p in (REPO / area).rglob("*.py") if "__pycache__" not in p.parts)


def top_level_imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def path_edits(tree: ast.AST) -> list[str]:
    """Every use of `sys.path` (an insert, an assignment, a slice: any of them edits it)."""
    return [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "path"
            and isinstance(node.value, ast.Name) and node.value.id == "sys"]


def _code_strings(tree: ast.AST) -> list[ast.AST]:
    """Python source held in string constants that run as code (`python -c CHILD`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in (
                node.value):
            try:
                found.append(ast.parse(node.value))
            except SyntaxError:
                continue
    return found


CASES = [(area, path) for area in AREAS for path in sources(area)]


@pytest.mark.parametrize(("area", "path"), CASES,
                         ids=[p.relative_to(REPO).as_posix() for _, p in CASES])
def test_imports_go_one_way_and_nothing_edits_the_import_path(area: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    trees = [tree, *_code_strings(tree)]
    assert not set().union(*(top_level_imports(t) for t in trees)) & FORBIDDEN[area]
    assert [edit for t in trees for edit in path_edits(t)] == []


def test_every_area_has_sources() -> None:
    assert all(sources(area) for area in AREAS)


def test_the_checks_catch_a_path_edit_and_a_test_import() -> None:
    sample = ast.parse("import sys\nsys.path.insert(0, 'x')\nfrom tests.harness import y\n"
                       "CHILD = '''\nimport sys\nsys.path[:0] = ['r']\n'''\n")
    assert path_edits(sample) == ["line 2: sys.path"]
    assert "tests" in top_level_imports(sample)
    assert [path_edits(t) for t in _code_strings(sample)] == [["line 3: sys.path"]]
