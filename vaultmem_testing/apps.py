"""An App over a vault with the deterministic fake embedder, indexed and closed after use: what
most engine and api tests stand on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vaultmem.app import App, build_app
from vaultmem.config import load_settings


@contextmanager
def fake_app(vault: Path, data: Path, **overrides: Any) -> Iterator[App]:
    """`build_app` on `vault` (data in `data`), no config file or environment read, the whole
    vault indexed first; `overrides` are further settings."""
    settings = load_settings(data.parent / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(data), "embedding_model": "fake", **overrides})
    app = build_app(settings)
    try:
        app.sync.reindex()
        yield app
    finally:
        app.close()


def write_notes(vault: Path, notes: Mapping[str, str]) -> Path:
    """`notes` (path in the vault -> text) written into `vault`; the vault."""
    for path, text in notes.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    return vault


@contextmanager
def notes_app(tmp_path: Path, notes: Mapping[str, str], **overrides: Any) -> Iterator[App]:
    """`fake_app` over a vault of `notes` written under `tmp_path` (data beside it)."""
    with fake_app(write_notes(tmp_path / "vault", notes), tmp_path / "data", **overrides) as app:
        yield app
