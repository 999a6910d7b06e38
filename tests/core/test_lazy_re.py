"""lazy_compile: the compiled pattern's behaviour, compiled only when first used."""

from __future__ import annotations

import re

import pytest

from vaultmem.core.lazy_re import lazy_compile


def test_a_lazy_pattern_compiles_on_first_use_and_behaves_as_the_compiled_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda source, flags=0: compiled.append(source)
                        or real(source, flags))
    lazy = lazy_compile(r"(?P<v>\d+)-(\w+)", re.IGNORECASE)
    assert compiled == []
    eager = real(r"(?P<v>\d+)-(\w+)", re.IGNORECASE)
    text = "a 12-ab, 7-C and 9-"
    assert [m.group("v") for m in lazy.finditer(text)] == ["12", "7"]
    assert compiled == [r"(?P<v>\d+)-(\w+)"]
    assert lazy.search(text).span() == eager.search(text).span()  # type: ignore[union-attr]
    assert lazy.sub("#", text) == eager.sub("#", text)
    assert lazy.findall(text) == eager.findall(text)
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (eager.pattern, eager.flags,
                                                          eager.groupindex)
    assert compiled == [r"(?P<v>\d+)-(\w+)"]  # once


def test_a_bad_pattern_fails_where_it_is_used() -> None:
    lazy = lazy_compile("(unclosed")
    with pytest.raises(re.error):
        lazy.search("x")
