"""docs/configuration.md documents every setting with its default; a setting added without docs
fails here."""

from __future__ import annotations

import re
from pathlib import Path

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


MEANING = re.compile(r"^\| `(\w+)` \| (?:`[^`]*`|[^|]*?) \| (.*) \|$", re.M)


def _plain(markdown: str) -> str:
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", markdown).replace("`", "")


def test_the_config_files_help_is_the_docs_meaning() -> None:
    from vaultmem.config_help import HELP, SECTIONS

    meanings = {name: _plain(text) for name, text in MEANING.findall(DOCS)}
    assert [name for name in _FIELDS if name not in HELP] == []
    assert {name: text for name, text in HELP.items() if meanings.get(name) != text} == {}
    grouped = [name for _, names in SECTIONS for name in names]
    assert sorted(grouped) == sorted(set(grouped)) and set(grouped) <= set(_FIELDS)


def test_the_file_init_writes_explains_every_setting_and_loads_back(tmp_path: Path) -> None:
    from vaultmem.config import load_settings, render_config

    text = render_config(Settings(vault=tmp_path))
    assert "vaultmem restore" in text and "stm_*" in text
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if re.match(r"#? ?\w+ =", line) and not line.startswith("# ---"):
            assert lines[number - 1].startswith("# "), line  # a comment above every key
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    loaded = load_settings(path, env={})
    assert loaded.unknown_keys == () and loaded.vault == tmp_path
