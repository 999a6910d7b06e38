"""`embedding_model = "auto"`: the vault's languages choose the bundled model, the first index
keeps the choice, an explicit setting wins, and `reindex --choose-model` chooses again (with the
deterministic fake embedder standing in for both models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmem import app as app_module
from vaultmem.app import build_app, resolve_model
from vaultmem.config import load_settings
from vaultmem.engine import model_choice
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.identity import recorded_choice
from vaultmem.vault.ignore import IgnoreRules

ENGLISH = ("The backup job runs every night and copies the photos to the NAS in the attic, "
           "and the old snapshots are pruned after thirty days.")
RUSSIAN = ("Резервное копирование запускается каждую ночь и копирует фотографии на сервер, "
           "а старые снимки удаляются через тридцать дней.")


def _vault(tmp_path: Path, english: int, russian: int) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(english):
        (vault / f"note {i}.md").write_text(f"# Note {i}\n\n{ENGLISH}\n", encoding="utf-8")
    for i in range(russian):
        (vault / f"заметка {i}.md").write_text(f"# Заметка {i}\n\n{RUSSIAN}\n", encoding="utf-8")
    return vault


def _settings(vault: Path, data: Path, model: str = "auto") -> Any:
    return load_settings(data.parent / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(data), "embedding_model": model})


@pytest.fixture
def fake_models(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Both bundled models made as fakes of different sizes (their names differ, as the real
    models' do); returns the specs asked for."""
    asked: list[str] = []

    def make(spec: str, options: Any = None) -> FakeEmbedder:
        asked.append(spec)
        return FakeEmbedder({"english": 32, "multilingual": 48}.get(spec, 16))

    monkeypatch.setattr(app_module, "make_embedder", make)
    return asked


def test_a_vault_mostly_in_russian_is_served_by_the_multilingual_model(
        tmp_path: Path, fake_models: list[str]) -> None:
    vault = _vault(tmp_path, english=10, russian=30)
    app = build_app(_settings(vault, tmp_path / "data"))
    try:
        assert app.model.model == "multilingual" and app.model.setting == "auto"
        assert "30 of 40 notes sampled are not in English" in app.model.reason
        app.sync.reindex()
        status = app.status.status(_now())
        assert status.model.model == "multilingual"
    finally:
        app.close()
    assert fake_models == ["multilingual"]
    assert recorded_choice(tmp_path / "data" / "lance") == {
        "model": "multilingual", "reason": app.model.reason}


def test_an_english_vault_keeps_the_english_model(tmp_path: Path, fake_models: list[str]) -> None:
    vault = _vault(tmp_path, english=40, russian=2)
    model = resolve_model(_settings(vault, tmp_path / "data"), vault, IgnoreRules(vault),
                          tmp_path / "data" / "lance")
    assert model.model == "english" and "2 of 42" in model.reason


def test_the_recorded_choice_is_kept_without_sampling_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path, english=5, russian=30)
    index = tmp_path / "data" / "lance"
    rules = IgnoreRules(vault)
    first = resolve_model(_settings(vault, tmp_path / "data"), vault, rules, index)
    for i in range(200):  # the vault turns English afterwards: the index keeps its model
        (vault / f"more {i}.md").write_text(ENGLISH, encoding="utf-8")

    def no_sampling(*_: Any) -> Any:
        raise AssertionError("sampled again")

    monkeypatch.setattr(app_module, "choose_for_vault", no_sampling)
    again = resolve_model(_settings(vault, tmp_path / "data"), vault, rules, index)
    assert again == first and again.model == "multilingual"


def test_a_small_vault_is_chosen_for_but_asked_again_later(tmp_path: Path) -> None:
    vault = _vault(tmp_path, english=0, russian=5)
    index = tmp_path / "data" / "lance"
    model = resolve_model(_settings(vault, tmp_path / "data"), vault, IgnoreRules(vault), index)
    assert model.model == "multilingual" and recorded_choice(index) is None


def test_an_explicit_setting_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path, english=0, russian=40)
    monkeypatch.setattr(model_choice, "scan_vault", lambda *_: pytest.fail("sampled"))
    model = resolve_model(_settings(vault, tmp_path / "data", "english"), vault,
                          IgnoreRules(vault), tmp_path / "data" / "lance")
    assert (model.setting, model.model) == ("english", "english")
    assert model.reason == "set in the configuration"


def test_choosing_again_switches_the_model_and_rebuilds_the_index(
        tmp_path: Path, fake_models: list[str]) -> None:
    from click.testing import CliRunner

    from vaultmem.cli.main import cli

    vault = _vault(tmp_path, english=40, russian=0)
    data = tmp_path / "data"
    app = build_app(_settings(vault, data))
    try:
        app.sync.reindex()
        assert app.model.model == "english"
    finally:
        app.close()
    for i in range(30):
        (vault / f"новая {i}.md").write_text(RUSSIAN, encoding="utf-8")
    args = ["--vault", str(vault), "--data-dir", str(data), "--json"]
    result = CliRunner().invoke(cli, ["reindex", "--choose-model", *args])
    assert result.exit_code == 0, result.output
    assert recorded_choice(data / "lance")["model"] == "multilingual"  # type: ignore[index]
    assert fake_models[-1] == "multilingual"
    app = build_app(_settings(vault, data))
    try:
        assert app.model.model == "multilingual"
        assert app.index.identity_problem() is None  # rebuilt with the new model
        indexed = [r for r in app.catalog.records().values() if r.status == "indexed"]
        assert len(indexed) == 70
    finally:
        app.close()


def test_choose_model_is_refused_for_an_explicit_setting(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vaultmem.cli.main import cli

    vault = _vault(tmp_path, english=3, russian=0)
    (tmp_path / "config.toml").write_text('embedding_model = "fake"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["reindex", "--choose-model", "--vault", str(vault),
                                      "--config", str(tmp_path / "config.toml")])
    assert result.exit_code == 1 and "applies to embedding_model = auto" in result.output


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 11, 28, tzinfo=UTC)
