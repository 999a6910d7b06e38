"""LanceDB imported with its REST namespace client made lazy (vaultmem/index/lazy_client.py):
taken with the installed versions, LanceDB working either way, and the plain import whenever a
package's `__init__` is not of the expected shape."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.index.lazy_client import (
    CLIENT,
    LAZY_PACKAGES,
    LazyPackageFinder,
    deferred_models,
    lazy_packages,
    lazy_plan,
    marked_overrides,
)

# Run in a fresh interpreter: which modules an import loads depends on what ran before it.
PROBE = """
import json, sys, tempfile
from vaultmem.index import lazy_client
if sys.argv[1] == "plain":  # as if the installed layout were not the expected one
    lazy_client.lazy_plan = lambda source, package: None
from vaultmem.index import lance
import lancedb
imported = [p for p in lazy_client.LAZY_PACKAGES if p in sys.modules]
embedding_modules = sorted(m for m in sys.modules if m.startswith("lancedb.embeddings."))
made_lazy = [p for p in imported
             if isinstance(sys.modules[p].__spec__.loader, lazy_client._LazyLoader)]
from lancedb.index import FTS
api_before = sorted(m for m in sys.modules if m.startswith(lazy_client.CLIENT + ".api."))
db = lancedb.connect(tempfile.mkdtemp())
table = db.create_table("t", data=[
    {"id": 1, "text": "sourdough starter feeding", "vector": [1.0, 0.0]},
    {"id": 2, "text": "window manager on linux", "vector": [0.0, 1.0]}])
table.create_index("text", config=FTS())
table.add([{"id": 3, "text": "rye starter", "vector": [0.7, 0.7]}])
text = table.search("starter", query_type="fts").select(["id"]).limit(5).to_list()
near = table.search([0.0, 1.0]).select(["id"]).limit(1).to_list()
client = sys.modules[lazy_client.CLIENT]
from pydantic import BaseModel
from lance_namespace import ListTablesResponse
deferred = not ListTablesResponse.__pydantic_complete__
listed = ListTablesResponse(tables=["a", "b"]).tables  # built on first use
import overrides
print(json.dumps({
    "override_restored": overrides.override.__module__ == "overrides.overrides",
    "deferred": deferred, "built": ListTablesResponse.__pydantic_complete__, "listed": listed,
    "base_config": sorted(BaseModel.model_config),
    "imported": imported, "made_lazy": made_lazy, "api_before": api_before,
    "embedding_modules": embedding_modules,
    "fts": sorted(r["id"] for r in text), "nearest": near[0]["id"],
    "rows": db.open_table("t").count_rows(),
    "table_api": client.TableApi.__module__, "api_attr": client.api.__name__,
}))
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["lazy", "plain"])
def test_lancedb_works_with_the_lazy_client_and_without(mode: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                          timeout=110, check=False)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if mode == "lazy":  # the installed client has the layout the lazy import expects
        # not even the api package
        assert got["imported"] == [CLIENT, f"{CLIENT}.models", "lancedb.embeddings"]
        assert got["made_lazy"] == got["imported"]
        assert got["api_before"] == []  # no API module imported by `import lancedb`
        # what LanceDB itself takes from its embedding functions, none of the functions
        assert got["embedding_modules"] == ["lancedb.embeddings.base",
                                            "lancedb.embeddings.registry",
                                            "lancedb.embeddings.utils"]
    else:
        assert got["imported"] == list(LAZY_PACKAGES)
        assert got["made_lazy"] == []
        assert f"{CLIENT}.api.table_api" in got["api_before"]
        assert "lancedb.embeddings.openai" in got["embedding_modules"]
    assert got["deferred"] and got["built"]  # its validator made on first use, not at import
    assert got["listed"] == ["a", "b"]
    assert got["override_restored"]
    assert "defer_build" not in got["base_config"]
    assert got["fts"] == [1, 3]
    assert got["nearest"] == 2
    assert got["rows"] == 3
    assert got["table_api"] == f"{CLIENT}.api.table_api"  # names still resolve, on first use
    assert got["api_attr"] == f"{CLIENT}.api"


def test_the_installed_client_inits_have_the_expected_shape() -> None:
    """If an upgrade changes them, this says the lazy path is no longer taken."""
    for package in LAZY_PACKAGES:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        plan = lazy_plan(Path(spec.origin).read_text(encoding="utf-8"), package)
        assert plan is not None, package
        assert all(where.startswith(f"{package}.") for where, _ in plan.names.values())
    models = importlib.util.find_spec(f"{CLIENT}.models")
    assert models is not None and models.origin is not None
    plan = lazy_plan(Path(models.origin).read_text(encoding="utf-8"), f"{CLIENT}.models")
    assert plan is not None and len(plan.names) > 100


def test_models_defined_in_the_block_are_built_on_first_use() -> None:
    from pydantic import BaseModel, ValidationError

    with deferred_models():
        class Inside(BaseModel):
            count: int

    class Outside(BaseModel):
        count: int

    assert not Inside.__pydantic_complete__
    assert Outside.__pydantic_complete__
    assert "defer_build" not in BaseModel.model_config
    assert Inside(count="3").count == 3  # built now, and validates as any model
    assert Inside.__pydantic_complete__
    with pytest.raises(ValidationError):
        Inside(count="three")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="LanceDB uses typing.override there")
def test_overrides_are_marked_within_the_block_and_still_enforced() -> None:
    import overrides
    from overrides import EnforceOverrides

    original = overrides.override
    with marked_overrides():
        override = overrides.override
        assert override is not original

        class Base(EnforceOverrides):
            def run(self) -> int:
                return 1

        class Marked(Base):
            @override
            def run(self) -> int:
                return 2

        class MarkedWithChecks(Base):
            @override(check_signature=False)
            def run(self) -> int:
                return 3

        with pytest.raises(TypeError, match="does not have @override"):
            class Unmarked(Base):
                def run(self) -> int:
                    return 4
    assert overrides.override is original
    assert Marked().run() == 2 and MarkedWithChecks().run() == 3
    assert Marked.run.__override__ and MarkedWithChecks.run.__override__  # type: ignore[attr-defined]


def test_a_base_config_that_says_how_to_build_is_left_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import BaseModel

    monkeypatch.setitem(BaseModel.model_config, "defer_build", False)
    with deferred_models():
        class Eager(BaseModel):
            count: int
    assert Eager.__pydantic_complete__
    assert BaseModel.model_config["defer_build"] is False


@pytest.mark.parametrize("source", [
    "import os\nfrom pkg.a import A\n",  # imports from elsewhere
    "from pkg.a import A\nVALUE = compute()\n",  # code
    "from pkg.a import *\n",
    "from ..a import A\n",  # from the parent package
    "from pkg.a import A\n__all__ = names()\n",  # an assignment that is not a literal
    "def f():\n    pass\n",
    "from pkg.a import (A\n",  # not Python
    '"""only a docstring"""\n',  # nothing to make lazy
])
def test_any_other_init_is_not_planned(source: str) -> None:
    assert lazy_plan(source, "pkg") is None


def test_a_generated_init_is_planned() -> None:
    plan = lazy_plan('"""doc"""\n__version__ = "1.0"\nfrom pkg.a import A\n'
                     "from pkg.sub.b import B as C\nfrom .d import D\n"
                     '__all__ = ["A", "C", "D"]\n', "pkg")
    assert plan is not None
    assert plan.constants == {"__version__": "1.0", "__all__": ["A", "C", "D"]}
    assert plan.names == {"A": ("pkg.a", "A"), "C": ("pkg.sub.b", "B"), "D": ("pkg.d", "D")}


@pytest.fixture
def packages(tmp_path: Path) -> Iterator[Path]:
    """`lazyfake` (a generated-style `__init__`) and `plainfake` (one with code) on sys.path."""
    for name, init in {
        "lazyfake": '"""doc"""\nVERSION = 2\nfrom lazyfake.heavy import Thing\n'
                    "from lazyfake.light import other\n",
        "plainfake": "from plainfake.heavy import Thing\nRAN = bool(Thing)\n",
    }.items():
        package = tmp_path / name
        package.mkdir()
        (package / "__init__.py").write_text(init, encoding="utf-8")
        (package / "heavy.py").write_text("import sys\nsys.modules[__name__].LOADED = True\n"
                                          "class Thing:\n    pass\n", encoding="utf-8")
        (package / "light.py").write_text("def other():\n    return 7\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.split(".")[0] in ("lazyfake", "plainfake")]:
            del sys.modules[module]


def test_a_lazy_package_loads_its_modules_on_first_use(packages: Path) -> None:
    with lazy_packages(["lazyfake", "plainfake"]) as finder:
        import lazyfake
    assert isinstance(finder, LazyPackageFinder)
    assert finder not in sys.meta_path
    assert finder.lazy == ["lazyfake"]
    assert lazyfake.VERSION == 2
    assert "lazyfake.heavy" not in sys.modules
    assert lazyfake.other() == 7
    assert "lazyfake.heavy" not in sys.modules
    thing = lazyfake.Thing
    assert sys.modules["lazyfake.heavy"].LOADED
    assert thing is sys.modules["lazyfake.heavy"].Thing
    assert "Thing" in dir(lazyfake)
    assert lazyfake.light.__name__ == "lazyfake.light"  # a submodule by attribute
    with pytest.raises(AttributeError):
        _ = lazyfake.missing


def test_a_package_of_another_shape_is_imported_as_it_is(packages: Path) -> None:
    with lazy_packages(["lazyfake", "plainfake"]) as finder:
        import plainfake
    assert finder.lazy == []
    assert plainfake.RAN
    assert sys.modules["plainfake.heavy"].LOADED  # its __init__ ran, eagerly
