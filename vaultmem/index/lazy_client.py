"""Importing LanceDB without paying for its REST namespace client up front.

Why: `import lancedb` imports `lance_namespace`, whose generated REST client
(`lance_namespace_urllib3_client`) has package `__init__` files that eagerly import every API
module (table_api, metadata_api, branch_api, ...: large modules of pydantic-validated methods)
and every model. That is over half of `import lancedb` (~1.1 of ~2.3 s measured with
`python -X importtime -c "import lancedb"`), on the daemon's way to its first answer, for a
client that talks to a remote namespace server; a local on-disk table never uses it.

How: while lancedb is imported (`with lazy_packages():` in index/lance.py), a meta path
finder replaces those package `__init__` files, and only those, with a module that binds the
same names on first use (PEP 562 `__getattr__`): `from <client>.models import X` still imports
X's module and gives the same class, but the API modules nothing local asks for are never
imported. The replacement is made only when an `__init__` is nothing but a docstring, literal
assignments (`__all__ = [...]`) and `from <that package>.<module> import Name` (or
`from .<module> import Name`) lines, which is how the installed version is generated; anything
else (another layout, a file that cannot be read or parsed) and the package is imported as it
is, the plain import. LanceDB's own `lancedb.embeddings` has that shape too: its `__init__`
imports every hosted embedding function LanceDB offers (OpenAI, Cohere, open_clip, ... 18
modules, ~25 ms); vaultmem embeds with its own model and uses none of them, and LanceDB takes
only the registry and the base classes.

Second, the models those names bring in (~140 pydantic classes of the client, a few dozen of
LanceDB's own) are built with pydantic's documented `defer_build`: each makes its validator on
first use, not when its class is defined (`deferred_models()`; ~85 ms less CPU on the import,
and a local table uses almost none of them).

Third, on Python 3.11 LanceDB marks its overriding methods with the `overrides` package, whose
decorator reads the calling class statement's bytecode to find and check the base method, at
every one of ~100 methods; on 3.12+ LanceDB uses `typing.override`, which only marks the
method. `marked_overrides()` gives 3.11 that same marker while LanceDB is imported (~20 % less
CPU on the import); its classes' metaclass still checks that every override is marked.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

CLIENT = "lance_namespace_urllib3_client"
#: The packages whose `__init__` is replaced by a lazy one (when it has the expected shape).
LAZY_PACKAGES = (CLIENT, f"{CLIENT}.api", f"{CLIENT}.models", "lancedb.embeddings")


@dataclass(frozen=True)
class LazyPlan:
    """What a package's `__init__` binds: constants, and names taken from its own modules."""

    constants: dict[str, Any]
    names: dict[str, tuple[str, str]]  # bound name -> (module, name in that module)


def lazy_plan(source: str, package: str) -> LazyPlan | None:
    """The plan of a generated re-exporting `__init__`, or None if it is anything else."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    constants: dict[str, Any] = {}
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:  # a constant, or a literal such as `__all__ = [...]`
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                return None
            continue
        if not isinstance(node, ast.ImportFrom) or (module := _own_module(node, package)) is None:
            return None
        for alias in node.names:
            if alias.name == "*":
                return None
            names[alias.asname or alias.name] = (module, alias.name)
    return LazyPlan(constants, names) if names else None


def _own_module(node: ast.ImportFrom, package: str) -> str | None:
    """The module of `package` that `from <package>.<module> import ...` or
    `from .<module> import ...` names; None for an import from anywhere else."""
    if not node.module:
        return None
    if node.level == 0 and node.module.startswith(f"{package}."):
        return node.module
    if node.level == 1:
        return f"{package}.{node.module}"
    return None


class _LazyLoader(importlib.abc.Loader):
    def __init__(self, plan: LazyPlan) -> None:
        self.plan = plan

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module, with the spec's __path__ and __file__

    def exec_module(self, module: ModuleType) -> None:
        names = self.plan.names
        package = module.__name__

        def __getattr__(attr: str) -> Any:
            if attr in names:
                where, name = names[attr]
                value = getattr(importlib.import_module(where), name)
            elif not attr.startswith("__") and _has_submodule(package, attr):
                value = importlib.import_module(f"{package}.{attr}")
            else:
                raise AttributeError(f"module {package!r} has no attribute {attr!r}")
            setattr(module, attr, value)
            return value

        def __dir__() -> list[str]:
            return sorted({*module.__dict__, *names})

        module.__dict__.update(self.plan.constants)
        module.__dict__.update(__getattr__=__getattr__, __dir__=__dir__)
        module.__dict__.setdefault("__all__", list(names))  # the package's own, if it has one


def _has_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False


class LazyPackageFinder(importlib.abc.MetaPathFinder):
    """Finds `packages` as the path finder does, with a lazy loader where the plan allows."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.packages = frozenset(packages)
        self.lazy: list[str] = []  # the packages it made lazy, in import order

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.packages:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.submodule_search_locations:
            return spec
        try:
            with open(spec.origin, encoding="utf-8") as init:
                plan = lazy_plan(init.read(), fullname)
        except (OSError, UnicodeDecodeError):
            plan = None
        if plan is None:
            return spec  # not the expected layout: the package's own __init__ runs
        spec.loader = _LazyLoader(plan)
        self.lazy.append(fullname)
        return spec


@contextmanager
def lazy_packages(packages: Sequence[str] = LAZY_PACKAGES) -> Iterator[LazyPackageFinder]:
    """Within the block, `packages` not yet imported are imported lazily where they can be."""
    finder = LazyPackageFinder(packages)
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)



@contextmanager
def deferred_models() -> Iterator[None]:
    """Within the block, pydantic models that take BaseModel's own config get `defer_build`
    (their validators are built on first use); BaseModel's config is as before after it.
    Without pydantic, or if BaseModel already says how to build, the block runs as it is."""
    try:
        from pydantic import BaseModel
    except ImportError:
        yield
        return
    config = getattr(BaseModel, "model_config", None)
    if not isinstance(config, dict) or "defer_build" in config:
        yield
        return
    config["defer_build"] = True
    try:
        yield
    finally:
        config.pop("defer_build", None)


@contextmanager
def marked_overrides() -> Iterator[None]:
    """Within the block, `overrides.override` only marks the method, as `typing.override`
    does; restored after it. Nothing to do on 3.12+ (LanceDB does not use it there) or
    without the package."""
    if sys.version_info >= (3, 12):
        yield
        return
    try:
        import overrides
    except ImportError:
        yield
        return
    original = overrides.override
    overrides.override = _mark_override
    try:
        yield
    finally:
        overrides.override = original


def _mark_override(method: Any = None, **_checks: Any) -> Any:
    """`typing.override`'s marker; also as `@override(check_signature=...)`."""
    if method is None:
        return _mark_override
    with contextlib.suppress(AttributeError, TypeError):
        method.__override__ = True
    return method
