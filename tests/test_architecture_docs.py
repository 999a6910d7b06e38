"""docs/architecture.md's package map names every module of the package, each in its package's
part of the map, and names no module that does not exist; a module added or removed without
updating the map fails here."""

from __future__ import annotations

import re
from pathlib import Path

import vaultmem
from tests.conftest import REPO

PACKAGE = Path(vaultmem.__file__).parent
DOCS = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
FENCE = re.compile(r"```\n(vaultmem/\n.*?)```", re.S)
#: a package's heading in the map: two spaces, its name and a slash
HEADING = re.compile(r"^  (\w+)/(?=\s|$)")
#: a module's name, bare (`search.py`) or with its package (`engine/search.py`)
MODULE = re.compile(r"(?<![\w/.-])(?:(\w+)/)?(\w+)\.py\b")


def the_map(text: str) -> str:
    """The fenced tree that starts with `vaultmem/`."""
    found = FENCE.search(text)
    assert found, "docs/architecture.md has no package map (a fenced block starting vaultmem/)"
    return found.group(1)


def map_sections(tree: str) -> dict[str, str]:
    """Package ("" for the top level) → the lines of the map under its heading."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in tree.splitlines()[1:]:
        heading = HEADING.match(line)
        if heading:
            current = heading.group(1)
        elif re.match(r"^  \S", line):  # a top-level module's line
            current = ""
        sections.setdefault(current, []).append(line)
    return {package: "\n".join(lines) for package, lines in sections.items()}


def named_modules(text: str) -> set[str]:
    """Module paths relative to the package (`engine/search.py`, `app.py`) that the map names:
    a bare name within its package's part of the map (or a top-level module's, such as
    `app.py`, named in a package's part), or `package/name.py` anywhere in it."""
    named = set()
    for package, section in map_sections(the_map(text)).items():
        for prefix, name in MODULE.findall(section):
            if prefix:
                named.add(f"{prefix}/{name}.py")
            elif package and not (PACKAGE / package / f"{name}.py").exists() and (
                    PACKAGE / f"{name}.py").exists():
                named.add(f"{name}.py")
            else:
                named.add(f"{package}/{name}.py" if package else f"{name}.py")
    return named


def package_modules() -> set[str]:
    """Every module of the package but the packages' `__init__.py`."""
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if "__pycache__" not in p.parts and p.name != "__init__.py"}


def vaultmem_packages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def test_the_map_names_every_module() -> None:
    missing = sorted(package_modules() - named_modules(DOCS))
    assert not missing, f"modules missing from docs/architecture.md's package map: {missing}"


def test_the_map_names_no_module_that_does_not_exist() -> None:
    packages = vaultmem_packages()
    stale = sorted(m for m in named_modules(DOCS) - package_modules()
                   if "/" not in m or m.split("/")[0] in packages)
    assert not stale, f"docs/architecture.md's package map names modules that do not exist: {stale}"


def test_the_check_reads_bare_names_in_their_package_and_paths_anywhere() -> None:
    doc = ("intro\n```\nvaultmem/\n  app.py           the root\n\n  core/            pure\n"
           "    memory.py      state; see vault/notes.py\n    a.py, b.py   two\n"
           "  mcp/             server.py and tools.py\n  errors.py        the tree\n```\n"
           "outside.py is not in the map\n")
    assert named_modules(doc) == {"app.py", "core/memory.py", "vault/notes.py", "core/a.py",
                                  "core/b.py", "mcp/server.py", "mcp/tools.py", "errors.py"}


def test_a_module_dropped_from_the_map_is_missed() -> None:
    assert "mcp/tool_spec.py" in named_modules(DOCS)
    assert "mcp/tool_spec.py" not in named_modules(DOCS.replace("tool_spec.py", "tool_spec"))
