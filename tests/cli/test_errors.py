"""User mistakes get one clear line and exit 1, never a traceback; nothing is changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, invoke, memory_note

NOW = REFERENCE.isoformat()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = tmp_path / "vault"
    memory_note(vault, "m", use_count=2, last_used=REFERENCE)
    (vault / "Regular.md").write_text("# Regular\n\nplain note\n", encoding="utf-8")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake"}


def _fails(args: list[str], env: dict[str, str], needle: str) -> None:
    result = invoke(args, env=env)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error: ") and needle in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_id(env: dict[str, str]) -> None:
    _fails(["get", "no-such-id"], env, "no memory with id")
    _fails(["touch", "no-such-id"], env, "no memory with id")


def test_bad_paths(env: dict[str, str]) -> None:
    _fails(["get", "../outside.md"], env, "vault")
    _fails(["get", "/etc/passwd"], env, "not inside the vault")
    _fails(["get", "missing/note.md"], env, "no note")
    _fails(["touch", "Regular.md"], env, "regular note")


def test_missing_vault(env: dict[str, str], tmp_path: Path) -> None:
    _fails(["status"], {**env, "VAULTMEM_VAULT": str(tmp_path / "nope")}, "does not exist")
    _fails(["status"], {k: v for k, v in env.items() if k != "VAULTMEM_VAULT"}, "no vault")


def test_malformed_config(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("decay_model = [\n", encoding="utf-8")
    _fails(["status", "--config", str(config)], env, "not valid TOML")
    config.write_text('decay_model = "linear"\n', encoding="utf-8")
    _fails(["status", "--config", str(config)], env, "decay_model")
    _fails(["status"], {**env, "VAULTMEM_HALF_LIFE_DAYS": "soon"}, "VAULTMEM_HALF_LIFE_DAYS")


def test_unknown_config_keys_are_reported(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("half_life_dayz = 3\n", encoding="utf-8")
    result = invoke(["status", "--config", str(config)], env={**env, "VAULTMEM_COLOUR": "red"})
    assert result.exit_code == 0
    assert "half_life_dayz" in result.stderr and "VAULTMEM_COLOUR" in result.stderr


def test_bad_save_and_search_input(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    before = sorted(p.name for p in vault.rglob("*"))
    _fails(["save", "hi"], env, "too short")
    _fails(["save", "a perfectly fine memory text", "--type", "whim"], env, "type must be one of")
    _fails(["search", "   "], env, "empty")
    assert sorted(p.name for p in vault.rglob("*")) == before


def test_init_writes_a_config_that_is_then_used(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "conf.toml"
    result = invoke(["init", "--config", str(config)], env=env)
    assert result.exit_code == 0, result.output
    assert 'decay_model = "power_law"' in config.read_text(encoding="utf-8")
    _fails(["init", "--config", str(config)], env, "already exists")
    no_vault_env = {k: v for k, v in env.items() if k != "VAULTMEM_VAULT"}
    assert invoke(["status", "--config", str(config)], env=no_vault_env).exit_code == 0


@pytest.mark.timeout(60)
def test_model_free_commands_do_not_load_lancedb_or_torch(env: dict[str, str]) -> None:
    code = (
        "import sys\n"
        "from vaultmem.cli.main import cli\n"
        "for args in (['status'], ['get', 'memories/m.md'], ['review'], ['gc'],\n"
        "             ['touch', 'memories/m.md']):\n"
        "    try:\n"
        "        cli(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('lancedb', 'torch', 'sentence_transformers') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env={**env, "PATH": "/usr/bin:/bin",
                         "VAULTMEM_EMBEDDING_MODEL": "default"},
                         capture_output=True, text=True, timeout=60, check=True)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("command", [["init"], ["token"], ["run"], ["mcp"],
                                     ["service", "install"], ["service", "status"]])
def test_help_lists_only_options_that_mean_something(command: list[str]) -> None:
    """A time means nothing to writing a config, printing a token or serving: no --now."""
    shown = invoke([*command, "--help"]).output
    assert "--now" not in shown and "--vault" in shown


@pytest.mark.parametrize("command", [["search", "x"], ["sweep"], ["get", "x"], ["gc"]])
def test_commands_that_evaluate_a_time_keep_now(command: list[str]) -> None:
    assert "--now" in invoke([*command, "--help"]).output


FUTURE = "2026-12-26T00:00:00Z"


@pytest.mark.parametrize("command", [["sweep", "--apply"], ["gc", "--apply"],
                                     ["reconcile", "--apply"], ["promote"],
                                     ["consolidate", "--merge", "c1"]])
def test_now_with_a_write_is_refused_without_write_at_now(
    env: dict[str, str], command: list[str]
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    _fails([*command, "--now", FUTURE], env, "--write-at-now")
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before


def test_now_previews_and_write_at_now_replays(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    memory_note(vault, "busy", use_count=12, last_used=REFERENCE, strength=3.0,
                created=REFERENCE)
    preview = invoke(["sweep", "--now", FUTURE, "--json"], env=env)
    assert preview.exit_code == 0, preview.output
    replay = invoke(["sweep", "--apply", "--now", FUTURE, "--write-at-now", "--json"], env=env)
    assert replay.exit_code == 0, replay.output


@pytest.mark.parametrize(("args", "code", "needle", "exit_code"), [
    (["touch", "no-such-id"], "not_found", "no memory with id", 1),
    (["get", "../outside.md"], "path_outside_vault", "vault", 1),
    (["save", "hi"], "refused", "too short", 1),
    (["search", "x", "-k", "0"], "invalid_input", "--top-k", 2),
    (["sweep", "--now", "yesterday"], "invalid_input", "ISO 8601", 2),
])
def test_json_errors_are_one_json_object_of_the_sockets_shape(
    env: dict[str, str], args: list[str], code: str, needle: str, exit_code: int
) -> None:
    result = invoke([*args, "--json"], env=env)
    assert result.exit_code == exit_code, result.output
    assert result.stderr == "" and len(result.stdout.strip().splitlines()) == 1
    error = json.loads(result.stdout)
    assert list(error) == ["error"] and set(error["error"]) == {"code", "message"}
    assert error["error"]["code"] == code and needle in error["error"]["message"]


def test_a_folder_or_tag_that_names_nothing_is_an_error(env: dict[str, str]) -> None:
    _fails(["search", "fact", "--folder", "No Such Folder"], env,
           "no indexed note is in the folder 'No Such Folder'")
    _fails(["search", "fact", "--folder", "MEMORIES"], env, "did you mean 'memories'?")
    _fails(["search", "fact", "--tag", "nosuchtag"], env, "no indexed note has the tag")
    found = invoke(["search", "fact", "--folder", "memories", "--tag", "test", "--json"],
                   env=env)
    assert found.exit_code == 0, found.output
