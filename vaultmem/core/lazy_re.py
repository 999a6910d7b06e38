"""Regular expressions compiled at their first use rather than at import.

The secret gate's rules are ~50 patterns (core/secret_rules.py, plain_secrets.py, intake.py)
that only a save or an edit's scan needs. Compiled at import they cost ~35 ms of every start,
on the daemon's way to its first answer and in every CLI call.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _LazyPattern:
    """Stands in for the compiled pattern: any attribute (finditer, search, pattern, ...) is
    the compiled pattern's, which is made on the first such use."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile: the same pattern either way
            compiled = self._compiled = re.compile(self._source, self._flags)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._source!r}, {self._flags})"


def lazy_compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, done when the pattern is first used."""
    return cast("re.Pattern[str]", _LazyPattern(source, flags))
