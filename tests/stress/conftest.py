"""The stress suite: a short form inside scripts/test, a long form through scripts/stress --long.

Every stress test takes its sizes (kills, fuzz examples, clients, seconds…) from
`tests.stress._level.LEVEL` (also the `stress` fixture), so that one code path serves both
forms. Timeouts: `@pytest.mark.timeout(LEVEL.pick(short, long))`.
"""

from __future__ import annotations

import pytest

from tests.stress._level import LEVEL, StressLevel


@pytest.fixture
def stress() -> StressLevel:
    return LEVEL


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "stress/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.stress)
