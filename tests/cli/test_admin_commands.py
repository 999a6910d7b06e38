"""`vaultmem list` and `vaultmem forget` (in-process, the fake embedder): memories listed with
status, score and decision, filtered and sorted; one memory forgotten now, restorable; bad input
refused with nothing changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, invoke, invoke_json, memory_note, small_vault_env
from vaultmem.vault.frontmatter import parse

NOW = REFERENCE.isoformat()
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = small_vault_env(tmp_path)
    vault = Path(env["VAULTMEM_VAULT"])
    memory_note(vault, "kettle descaling", use_count=4, last_used=ago(hours=2),
                tags=("kitchen",), type="convention", memory_id="m-kettle")
    memory_note(vault, "bike chain wax", use_count=1, last_used=ago(days=200),
                tags=("bike", "garage/tools"), memory_id="m-bike")
    memory_note(vault, "garage code", use_count=1, last_used=ago(days=1), pinned=True,
                tags=("garage",), memory_id="m-garage")
    return env


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def ids(data: dict[str, list[dict[str, str]]]) -> list[str]:
    return [m["id"] for m in data["memories"]]


def test_list_shows_every_memory_best_score_first(env: dict[str, str]) -> None:
    data = invoke_json(["list", "--now", NOW], env=env)
    assert data["total"] == 3
    assert ids(data) == ["m-kettle", "m-garage", "m-bike"]
    kettle = data["memories"][0]
    assert kettle["status"] == "active" and kettle["decision"] == "promote"
    assert kettle["use_count"] == 4 and kettle["type"] == "convention"
    scores = [m["score"] for m in data["memories"]]
    assert scores == sorted(scores, reverse=True)
    text = invoke(["list", "--now", NOW], env=env).output
    assert "kettle descaling (m-kettle)" in text and "[pinned]" in text and "promote" in text


def test_list_filters_and_sorts(env: dict[str, str]) -> None:
    assert ids(invoke_json(["list", "--tag", "garage", "--now", NOW], env=env)) == [
        "m-garage", "m-bike"]  # a nested tag matches its parent
    assert ids(invoke_json(["list", "--type", "Convention", "--now", NOW], env=env)) == [
        "m-kettle"]
    assert ids(invoke_json(["list", "--decision", "forget", "--now", NOW], env=env)) == [
        "m-bike"]
    assert ids(invoke_json(["list", "--pinned", "--now", NOW], env=env)) == ["m-garage"]
    by_title = invoke_json(["list", "--sort", "title", "--now", NOW], env=env)
    assert ids(by_title) == ["m-bike", "m-garage", "m-kettle"]
    limited = invoke_json(["list", "--limit", "1", "--now", NOW], env=env)
    assert ids(limited) == ["m-kettle"] and limited["total"] == 3


def test_forget_archives_one_memory_now_and_restore_brings_it_back(
    env: dict[str, str],
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    original = vault / "memories" / "kettle descaling.md"
    before = original.read_bytes()
    data = invoke_json(["forget", "m-kettle", "--now", NOW], env=env)
    assert data["forgotten"] == {"id": "m-kettle", "from": "memories/kettle descaling.md",
                                 "to": "memories/archive/kettle descaling.md"}
    archived = vault / data["forgotten"]["to"]
    assert not original.exists() and data["memory"]["status"] == "archived"
    # only stm_status changed: every other byte, the use count and dates included, is kept
    assert archived.read_bytes() == before.replace(b"stm_status: active",
                                                   b"stm_status: archived")
    assert "m-kettle" not in ids(invoke_json(["list", "--now", NOW], env=env))
    assert "m-kettle" in ids(invoke_json(["list", "--all", "--now", NOW], env=env))
    restored = invoke_json(["restore", "m-kettle", "--now", NOW], env=env)
    assert restored["restored"]["to"] == "memories/kettle descaling.md"
    fields, _, _ = parse(original.read_text(encoding="utf-8"))
    assert fields["stm_status"] == "active" and fields["stm_use_count"] == 4


@pytest.mark.parametrize(("args", "message"), [
    (["forget", "m-garage"], "is pinned, so it is never forgotten: unpin it first"),
    (["forget", "no-such-memory"], "no memory with id 'no-such-memory'"),
    (["forget", "Notes/Bikes.md"], "is a regular note, not a memory"),
    (["list", "--type", "recipe"], "unknown memory type 'recipe'"),
])
def test_bad_input_is_refused_and_changes_nothing(
    env: dict[str, str], args: list[str], message: str
) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    invoke_json(["list", "--now", NOW], env=env)  # the index exists: only the refusal is left
    before = digest(vault)
    result = invoke([*args, "--now", NOW], env=env)
    assert result.exit_code == 1 and message in result.stderr, result.output
    assert digest(vault) == before


def test_forgetting_an_archived_memory_says_so(env: dict[str, str]) -> None:
    invoke_json(["forget", "m-bike", "--now", NOW], env=env)
    result = invoke(["forget", "m-bike", "--now", NOW], env=env)
    assert result.exit_code == 1 and "already archived" in result.stderr


def test_edit_changes_the_text_title_and_tags_and_nothing_else(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    path = vault / "memories" / "kettle descaling.md"
    text = path.read_text(encoding="utf-8")
    text += "\n<!-- vaultmem:related -->\n## Related\n\n- [[Bikes]]\n<!-- /vaultmem:related -->\n"
    path.write_text(text, encoding="utf-8")
    head = text[:text.index("# kettle descaling")]
    data = invoke_json(["edit", "m-kettle", "Descale the office kettle with citric acid monthly.",
                        "--title", "Kettle descaling", "--tags", "kitchen, office",
                        "--now", NOW], env=env)
    assert data["edited"] == {"id": "m-kettle", "path": "memories/kettle descaling.md",
                              "changed": ["text", "title", "tags"]}
    after = path.read_text(encoding="utf-8")
    stm = [ln for ln in head.splitlines() if ln.startswith("stm_")]
    assert [ln for ln in after.splitlines() if ln.startswith("stm_")] == stm  # state kept
    assert "# Kettle descaling\n\nDescale the office kettle with citric acid monthly.\n\n" in after
    assert after.endswith(text[text.index("<!-- vaultmem:related -->"):])
    assert data["memory"]["tags"] == ["kitchen", "office"] and data["memory"]["use_count"] == 4
    found = invoke_json(["search", "citric acid monthly", "--now", NOW], env=env)
    assert found["results"][0]["id"] == "m-kettle"  # the index follows the edit


def test_an_edit_that_carries_a_secret_is_refused_and_writes_nothing(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    invoke_json(["list", "--now", NOW], env=env)
    before = digest(vault)
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = invoke(["edit", "m-kettle", f"The CI bot pushes with {token}", "--now", NOW],
                    env=env)
    assert result.exit_code == 1 and "secret" in result.stderr and token not in result.stderr
    assert invoke(["edit", "m-kettle", "--now", NOW], env=env).exit_code == 1  # nothing to do
    assert digest(vault) == before
