"""The exception tree drawn in `vaultmem/errors.py` is the one the package defines: every
subclass of `VaultmemError`, wherever it is declared, is drawn under its parent."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import vaultmem
import vaultmem.errors

PACKAGE = Path(vaultmem.__file__).parent


def declared(sources: dict[str, str]) -> dict[str, str]:
    """{class: its parent} for every class that derives from VaultmemError, from the sources."""
    bases: dict[str, str] = {}
    for text in sources.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.bases:
                base = node.bases[0]
                bases[node.name] = getattr(base, "id", getattr(base, "attr", ""))
    tree: dict[str, str] = {}
    grown = True
    while grown:
        grown = False
        for name, parent in bases.items():
            if name not in tree and ((parent == "Exception" and name == "VaultmemError")
                                     or parent in tree):
                tree[name] = parent
                grown = True
    return tree


def drawn(doc: str) -> dict[str, str]:
    """{class: its parent} as the docstring's tree draws it (indentation gives the parent)."""
    tree: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        found = re.match(r"^([\s│├└─]+)([A-Z]\w+)\s", line + " ")
        if not found:
            continue
        depth = len(found.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        tree[found.group(2)] = stack[-1][1] if stack else "Exception"
        stack.append((depth, found.group(2)))
    return tree


def test_the_drawn_tree_is_the_declared_one() -> None:
    sources = {p.as_posix(): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    assert drawn(vaultmem.errors.__doc__ or "") == declared(sources)


def test_the_check_sees_a_missing_or_misplaced_class() -> None:
    doc = "    VaultmemError   base\n    ├── NotFound   x\n    │   └── Gone   y\n"
    sources = {"a.py": "class VaultmemError(Exception): ...\nclass NotFound(VaultmemError): ...\n"
                       "class Gone(VaultmemError): ...\nclass Other(ValueError): ...\n"}
    assert drawn(doc) == {"VaultmemError": "Exception", "NotFound": "VaultmemError",
                          "Gone": "NotFound"}
    assert declared(sources) == {"VaultmemError": "Exception", "NotFound": "VaultmemError",
                                 "Gone": "VaultmemError"}
