"""Search the sample vault from the CLI with the real model: by meaning and by exact words."""

from __future__ import annotations

import pytest

from tests.cli._support import REFERENCE, copy_vault, invoke, invoke_json
from tests.conftest import SAMPLE_VAULT

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]
NOW = REFERENCE.isoformat()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("sample")
    vault = copy_vault(SAMPLE_VAULT, base / "vault")
    env = {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(base / "data")}
    result = invoke(["reindex", "--json"], env=env)
    assert result.exit_code == 0, result.output
    return env


def _top(env: dict[str, str], query: str, k: int = 5) -> list[str]:
    data = invoke_json(["search", query, "--top-k", str(k), "--now", NOW], env=env)
    return [hit["path"] for hit in data["results"]]


@pytest.mark.parametrize(("query", "expected"), [
    ("levain", "Recipes/Sourdough Country Loaf.md"),
    ("SameSite", "Projects/Crumb/Authentication Design.md"),
    ("tadka", "Recipes/Weeknight Dal.md"),
    ("WireGuard", "Areas/Homelab/Tailscale VPN.md"),
])
def test_exact_words(env: dict[str, str], query: str, expected: str) -> None:
    assert _top(env, query)[0] == expected


@pytest.mark.parametrize(("query", "expected"), [
    ("how do I keep old snapshots of my files", "Areas/Homelab/Restic Backups to NAS.md"),
    ("remembering what I read by testing myself at increasing intervals",
     "Reading/Make It Stick.md"),
    ("reach my home servers securely while traveling", "Areas/Homelab/Tailscale VPN.md"),
])
def test_by_meaning(env: dict[str, str], query: str, expected: str) -> None:
    assert _top(env, query)[0] == expected


def test_by_meaning_the_two_notes_that_answer_lead(env: dict[str, str]) -> None:
    """Two notes answer this one: the decision memory ("server-side sessions in Redis, not
    JWTs") and the design note that weighs the options; both belong at the top."""
    top = _top(env, "why don't we use tokens for login in the recipe app", 3)
    assert {"memories/2026-11-15 crumb-server-side-sessions-in-redis.md",
            "Projects/Crumb/Authentication Design.md"} <= set(top)


def test_old_memory_is_still_found(env: dict[str, str]) -> None:
    """The Pi-hole memory was last used 60 days ago (score ~0.02): decay re-ranks, not erases."""
    data = invoke_json(["search", "pihole container restart after an update", "--now", NOW],
                       env=env)
    hits = {hit["path"]: hit for hit in data["results"][:3]}
    path = "memories/2026-09-20 pihole-container-restart-after-update.md"
    assert path in hits
    assert hits[path]["score"] < 0.05
    assert hits[path]["id"] == "d8768a8d-2adb-41e7-98f9-0fbdb7770399"


def test_search_json_contract(env: dict[str, str]) -> None:
    data = invoke_json(["search", "backups", "--now", NOW], env=env)
    assert data["results"]
    for hit in data["results"]:
        assert {"id", "path", "title", "snippet", "relevance", "score", "review"} <= hit.keys()
        assert (hit["id"] is None) == (hit["score"] is None)


def test_ignored_templates_are_not_found(env: dict[str, str]) -> None:
    assert not any(p.startswith("Templates/") for p in _top(env, "Verdict Gratitude", 10))


def test_filters(env: dict[str, str]) -> None:
    paths = _top(env, "backups", 10)
    assert any(not p.startswith("memories/") for p in paths)
    mem_only = invoke_json(["search", "backups", "--memories-only", "--now", NOW], env=env)
    assert mem_only["results"] and all(h["id"] for h in mem_only["results"])
    folder = _top(env, "backups", 10)
    in_recipes = invoke_json(["search", "bread", "--folder", "Recipes", "--now", NOW], env=env)
    assert all(h["path"].startswith("Recipes/") for h in in_recipes["results"])
    assert folder
    typed = invoke_json(["search", "battery", "--type", "fact", "--now", NOW], env=env)
    assert [h["path"] for h in typed["results"]] == [
        "memories/2026-09-21 nas-ups-battery-replaced.md"]


@pytest.mark.parametrize(("query", "expected"), [
    ("weeknight dal", "Recipes/Weeknight Dal.md"),  # the title, lower-cased
    ("Make It Stick", "Reading/Make It Stick.md"),
    ("recipe box", "Projects/Crumb/Crumb.md"),  # an alias, found nowhere but the frontmatter
    ("Sessions vs JWT", "Projects/Crumb/Authentication Design.md"),  # an alias
    ("connection pooling", "Projects/Crumb/PgBouncer Connection Pooling.md"),  # an alias
])
def test_a_note_named_or_aliased_as_the_query_ranks_first(
    env: dict[str, str], query: str, expected: str
) -> None:
    data = invoke_json(["search", query, "--now", NOW], env=env)
    assert data["results"][0]["path"] == expected
    assert data["results"][0]["matched"] is True


@pytest.mark.parametrize("query", [
    "Wie repariere ich die Kette meines Fahrrads",  # a language the model does not read
    "Comment réparer la chaîne de mon vélo",
    "自行车链条怎么修理",
    "qwxzv blorf snargle",  # words no note has
])
def test_a_query_that_matches_nothing_is_not_confident(env: dict[str, str], query: str) -> None:
    data = invoke_json(["search", query, "--now", NOW], env=env)
    assert data["results"], "without a threshold the closest notes are still listed"
    assert all(h["relevance"] < 0.5 and not h["matched"] for h in data["results"])
    only = invoke_json(["search", query, "--matched-only", "--now", NOW], env=env)
    assert only["results"] == []
    shown = invoke(["search", query, "--matched-only", "--now", NOW], env=env)
    assert "nothing relevant" in shown.output


def test_matched_only_keeps_the_real_matches(env: dict[str, str]) -> None:
    everything = invoke_json(["search", "restic backups to the NAS", "--now", NOW], env=env)
    only = invoke_json(["search", "restic backups to the NAS", "--matched-only", "--now", NOW],
                       env=env)
    assert only["results"]
    assert all(h["matched"] and h["relevance"] > 0.5 for h in only["results"])
    assert [h["path"] for h in only["results"]] == [
        h["path"] for h in everything["results"] if h["matched"]]
    higher = invoke_json(["search", "restic backups to the NAS", "--min-relevance", "0.9",
                          "--now", NOW], env=env)
    assert all(h["relevance"] >= 0.9 for h in higher["results"])
    bad = invoke(["search", "x", "--min-relevance", "2", "--now", NOW], env=env)
    assert bad.exit_code != 0


def test_status_files_lists_what_is_indexed_with_each_memorys_state(
        env: dict[str, str]) -> None:
    """`vaultmem status --files`: every indexed note with its chunks; memories with their id,
    status and score."""
    data = invoke_json(["status", "--files", "--now", NOW], env=env)
    files = {item["path"]: item for item in data["coverage"]["files"]}
    assert len(files) == data["notes"]
    memories = {p: f for p, f in files.items() if f["memory"] is not None}
    assert memories and all(p.startswith("memories/") for p in memories)
    for item in memories.values():
        assert item["memory"]["status"] in ("active", "promoted", "archived")
        assert item["memory"]["score"] >= 0 and item["memory"]["id"]
    regular = [f for p, f in files.items() if not p.startswith("memories/")]
    assert regular and all(f["memory"] is None and f["chunks"] >= 1 for f in regular
                           if f["status"] == "indexed")
    text = invoke(["status", "--files", "--now", NOW], env=env).output
    some = next(iter(memories))
    assert any(some in line and "memory " in line and "score" in line
               for line in text.splitlines())


def test_a_search_says_the_index_state_above_its_results_until_it_is_ready(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from vaultmem.cli.output import show_search

    def shown(indexing: dict[str, object] | None) -> str:
        show_search({"query": "ups", "results": [], "indexing": indexing})
        return capsys.readouterr().out.splitlines()[0]

    assert shown({"state": "starting", "by_words": "partial", "by_meaning": "partial"}) == (
        "index: the daemon is starting, the vault not counted yet — results may be partial")
    assert shown({"state": "indexing", "by_words": "complete", "by_meaning": "partial",
                  "done": 120, "total": 10000}) == (
        "index building: 120 of 10,000 notes — every note searchable by its words, "
        "by meaning partly")
    assert shown({"done": 3, "total": 9}) == (  # an older daemon
        "index building: 3 of 9 notes — results are partial")
    assert shown({"state": "ready", "by_words": "complete", "by_meaning": "complete"}) == (
        "nothing relevant for 'ups'")
