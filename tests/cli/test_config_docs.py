"""docs/configuration.md documents every setting with its default; a setting added without docs
fails here."""

from __future__ import annotations

import re

from tests.conftest import REPO
from vaultmem.config import _FIELDS, Settings

DOCS = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\w+)` \| `([^`]*)` \|", re.M)


def test_every_setting_has_a_row_with_its_default() -> None:
    rows = dict(ROW.findall(DOCS))
    defaults = Settings()
    missing = [name for name in _FIELDS if name not in rows]
    assert not missing, f"settings missing from docs/configuration.md: {missing}"
    numeric = [name for name in _FIELDS if isinstance(getattr(defaults, name), int | float)]
    wrong = {name: rows[name] for name in numeric if rows[name] != repr(getattr(defaults, name))}
    assert not wrong, f"defaults documented wrongly: {wrong}"


def test_no_row_names_a_setting_that_does_not_exist() -> None:
    unknown = [name for name in dict(ROW.findall(DOCS)) if name not in _FIELDS]
    assert not unknown
