"""Only the edges read the clock: the engine, the index-writing pipeline, the memory store, the
core, the vault layer and the index take `now` from their caller.

A wall-clock read (`datetime.now`, `datetime.utcnow`, `date.today`, `time.time`, …) in
`engine/`, `pipeline/`, `store/`, `core/`, `vault/` or `index/` fails. Timers that measure a
duration or a deadline (`time.monotonic`, `time.perf_counter`) say nothing about the date, so
those layers may use them (the indexer times its runs); the core, stricter still, uses no timer
at all (tests/core/test_purity.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vaultmem

PACKAGE = Path(vaultmem.__file__).parent
TAKE_NOW = ("engine", "pipeline", "store", "core", "vault", "index")
MODULES = sorted(p for area in TAKE_NOW for p in (PACKAGE / area).rglob("*.py"))

#: methods that read the wall clock whatever they are called on (datetime, date, pendulum, …)
CLOCK_METHODS = frozenset({"now", "utcnow", "today"})
#: functions of the `time` module that read the wall clock
TIME_CLOCK = frozenset({"time", "time_ns", "localtime", "gmtime", "ctime", "asctime",
                        "strftime", "clock_gettime", "clock_gettime_ns"})


def clock_reads(tree: ast.Module) -> list[str]:
    """Wall-clock reads: `x.now()`, `x.utcnow()`, `x.today()`, `time.time()` and its kin,
    and those `time` functions imported by name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            found += [f"line {node.lineno}: from time import {alias.name}"
                      for alias in node.names if alias.name in TIME_CLOCK]
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        on_time = isinstance(func.value, ast.Name) and func.value.id == "time"
        if func.attr in CLOCK_METHODS or (on_time and func.attr in TIME_CLOCK):
            found.append(f"line {node.lineno}: {ast.unparse(func)}()")
    return found


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_the_layers_below_the_edges_take_now_from_their_caller(path: Path) -> None:
    assert clock_reads(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_check_catches_clock_reads_and_lets_timers_pass() -> None:
    sample = ast.parse(
        "import time\nfrom datetime import UTC, date, datetime\nfrom time import time_ns\n"
        "a = datetime.now(UTC)\nb = date.today()\nc = time.time()\nd = datetime.utcnow()\n"
        "t0 = time.perf_counter()\ndeadline = time.monotonic() + 5\nstamp.time()\n"
        "e = time.localtime()\n"
    )
    assert clock_reads(sample) == [
        "line 3: from time import time_ns", "line 4: datetime.now()", "line 5: date.today()",
        "line 6: time.time()", "line 7: datetime.utcnow()", "line 11: time.localtime()"]


def test_every_layer_is_checked() -> None:
    assert {"engine/search.py", "pipeline/note_records.py", "store/memory_store.py",
            "core/memory.py", "vault/writes.py", "vault/demo.py", "index/lance.py"} <= {
        _rel(p) for p in MODULES}
