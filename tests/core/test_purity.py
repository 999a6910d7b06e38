"""The core stays pure: stdlib-only imports, no clock, no file access."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vaultmem.core

CORE_DIR = Path(vaultmem.core.__file__).parent
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "collections",
        "collections.abc",
        "dataclasses",
        "datetime",
        "enum",
        "functools",
        "hashlib",
        "itertools",
        "math",
        "re",
        "statistics",
        "types",
        "typing",
        "unicodedata",
        "uuid",
    }
)
FORBIDDEN_CALLS = frozenset({"now", "utcnow", "today", "time", "open", "monotonic"})
MODULES = sorted(CORE_DIR.glob("*.py"))


def _import_violations(tree: ast.Module) -> list[str]:
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [alias.name for alias in node.names if alias.name not in ALLOWED_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 0:
                continue
            module = node.module or ""
            if module not in ALLOWED_MODULES and not module.startswith("vaultmem.core"):
                bad.append(module)
    return bad


def _call_violations(tree: ast.Module) -> list[str]:
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in FORBIDDEN_CALLS:
            bad.append(f"line {node.lineno}: {name}()")
    return bad


def test_core_has_modules() -> None:
    assert len(MODULES) >= 9


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_imports_are_stdlib_allowlist_only(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _import_violations(tree) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_no_clock_or_file_calls(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _call_violations(tree) == []


def test_checker_catches_violations() -> None:
    sample = ast.parse(
        "import numpy\nfrom os import path\nfrom .memory import x\n"
        "import datetime\ndatetime.datetime.now()\nopen('f')\nimport time\ntime.time()\n"
    )
    assert _import_violations(sample) == ["numpy", "os", "time"]
    assert _call_violations(sample) == ["line 5: now()", "line 6: open()", "line 8: time()"]
