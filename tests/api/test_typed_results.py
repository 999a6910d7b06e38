"""The use cases answer frozen dataclasses (`engine/results.py`, `engine/upkeep_results.py`),
each with its own wire function (`api/wire.py`); the search path is typed end to end (no
`Any`)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_server import REFERENCE, SAMPLE_ID, sample_app
from vaultmem.api import wire
from vaultmem.api.ops import Api
from vaultmem.engine import results, search, successors, upkeep_results
from vaultmem.engine.results import Result
from vaultmem.engine.status_results import StatusAnswer
from vaultmem.pipeline.index_ports import ReindexResult

# op, body, the class of its result (in an order the answers do not depend on each other)
TYPED: list[tuple[str, dict[str, Any], type]] = [
    ("search", {"query": "redis sessions"}, results.SearchResult),
    ("related", {"id": SAMPLE_ID}, results.RelatedResult),
    ("get", {"id": SAMPLE_ID}, results.MemoryView),
    ("touch", {"id": SAMPLE_ID}, results.MemoryView),
    ("feedback", {"id": SAMPLE_ID, "helpful": True}, results.MemoryView),
    ("pin", {"id": SAMPLE_ID, "pinned": False}, results.MemoryView),
    ("observe", {"ids": [SAMPLE_ID], "context_tags": ["ops"]}, results.ObserveResult),
    ("review", {}, results.ReviewResult),
    ("save", {"content": "The staging database runs on port 5433, not 5432."},
     results.SaveResult),
    ("list", {}, results.ListResult),
    ("edit", {"id": SAMPLE_ID, "title": "Sessions live in Redis"}, results.EditResult),
    ("clusters", {}, results.ClustersResult),
    ("gc", {}, upkeep_results.GcResult),
    ("promote", {"dry_run": True}, upkeep_results.PromoteResult),
    ("sweep", {}, upkeep_results.SweepResult),
    ("forget", {"id": SAMPLE_ID}, results.ForgetResult),
    ("restore", {"id": SAMPLE_ID}, results.RestoreResult),
    ("status", {"files": True}, StatusAnswer),
    ("reindex", {}, ReindexResult),
]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with sample_app(tmp_path_factory.mktemp("typed")) as app:
        yield app.api(clock=lambda: REFERENCE)


def _frozen_all_the_way(value: object) -> list[str]:
    """Fields of `value` (and of the results inside it) that are mutable containers, and
    dataclasses that are not frozen."""
    problems: list[str] = []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            problems.append(type(value).__name__)
        for field in dataclasses.fields(value):
            inner = getattr(value, field.name)
            if isinstance(inner, list | dict | set):
                problems.append(f"{type(value).__name__}.{field.name}")
            problems += _frozen_all_the_way(inner)
    elif isinstance(value, tuple):
        for item in value:
            problems += _frozen_all_the_way(item)
    return problems


@pytest.mark.timeout(120)
def test_each_use_case_answers_its_dataclass(api: Api) -> None:
    for op, body, cls in TYPED:
        result = api.run(op, body)
        assert type(result) is cls, op
        assert _frozen_all_the_way(result) == [], op
        assert type(result) in wire._SHAPES, op


@pytest.mark.timeout(60)
def test_the_wire_is_built_from_the_typed_result(api: Api) -> None:
    """What `call` sends is the shape function applied to what `run` returns."""
    for op, body in (("get", {"id": SAMPLE_ID}), ("list", {}), ("clusters", {}),
                     ("search", {"query": "redis sessions"})):
        result = api.run(op, body)
        assert wire.to_wire(result) == api.call(op, body) == wire._SHAPES[type(result)](result)


def test_every_result_type_has_its_wire_function() -> None:
    typed = set(typing.get_args(Result))
    assert typed and typed <= set(wire._SHAPES)
    assert {cls for _, _, cls in TYPED} <= typed


def test_a_result_without_a_wire_function_is_caught() -> None:
    @dataclasses.dataclass(frozen=True)
    class Stray:
        value: int

    assert Stray not in wire._SHAPES
    assert wire.to_wire(Stray(1)) == Stray(1)  # passed as it is: json.dumps would refuse it


def _mentions_any(hint: object) -> bool:
    return hint is Any or any(_mentions_any(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("function", [
    search.Search.search, search.Search._hit, search.Search._listed_copies,
    search.Search._candidate_memories, search.Search._visible, successors.prefer_current,
    successors.mark_superseded, successors.successor,
], ids=lambda f: f.__qualname__)
def test_the_search_path_takes_and_answers_no_any(function: Any) -> None:
    hints = typing.get_type_hints(function)
    assert hints and not [name for name, hint in hints.items() if _mentions_any(hint)]


def test_the_any_check_can_fail() -> None:
    def loose(ranked: Any) -> dict[str, Any]:
        return {}

    assert _mentions_any(typing.get_type_hints(loose)["ranked"])
    assert _mentions_any(typing.get_type_hints(loose)["return"])


def test_typed_results_hold_no_wire_json() -> None:
    """No result field is a dict: the JSON is built at the edge only."""
    for cls in typing.get_args(Result):
        for field in dataclasses.fields(cls):
            assert "dict" not in str(field.type) and "JSON" not in str(field.type), \
                f"{cls.__name__}.{field.name}"
