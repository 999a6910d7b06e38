"""What a new user tripped over: `status` decisions that ignored the active-memory cap, type
filters that depended on letter case, and a tag written as `#three` on the tags line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, ago, invoke, invoke_json, memory_note, small_vault_env

NOW = REFERENCE.isoformat()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return small_vault_env(tmp_path)


@pytest.mark.timeout(120)
def test_status_counts_what_the_cap_would_archive_like_gc(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    for n in range(6):  # six fading but not forgotten memories, two days old
        memory_note(vault, f"fact {n}", use_count=1, last_used=ago(days=2 + n / 10))
    memory_note(vault, "long gone", use_count=1, last_used=ago(days=300))
    capped = {**env, "VAULTMEM_MAX_ACTIVE_MEMORIES": "3"}
    status = invoke_json(["status", "--now", NOW], env=capped)
    dry_run = invoke_json(["gc", "--now", NOW], env=capped)
    assert len(dry_run["archive"]) == 4  # the faded one, and the three weakest above the cap
    assert status["memories"]["decisions"] == {"keep": 3, "forget": 4, "promote": 0}
    shown = invoke(["status", "--now", NOW], env=capped).output
    assert "decisions now: keep 3, forget 4, promote 0" in shown


@pytest.mark.timeout(120)
def test_type_filters_ignore_letter_case_and_refuse_unknown_types(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    _, saved = memory_note(vault, "sessions in redis", use_count=1, last_used=ago(hours=1),
                           type="decision", body="Crumb keeps sessions in Redis.")
    _, by_hand = memory_note(vault, "hand typed", use_count=1, last_used=ago(hours=1),
                             type="Decision", body="Crumb keeps its queue in Redis too.")
    for asked in ("Decision", "DECISION", "decision"):
        found = invoke_json(["search", "Redis", "--type", asked, "--now", NOW], env=env)
        assert {hit["id"] for hit in found["results"]} == {saved, by_hand}, asked
    assert invoke_json(["get", by_hand, "--now", NOW], env=env)["type"] == "decision"
    refused = invoke(["search", "Redis", "--type", "decisions", "--now", NOW], env=env)
    assert refused.exit_code == 1
    assert "unknown memory type 'decisions': use one of convention, decision, fact" in (
        refused.output)


@pytest.mark.timeout(120)
def test_a_hashtag_after_the_tags_is_a_tag_and_status_says_why(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    note = vault / "Notes" / "Tagged.md"
    note.write_text("---\ntags: one, two #three\n---\n# Tagged\n\nThe tagged note.\n")
    found = invoke_json(["search", "tagged note", "--tag", "three"], env=env)
    assert [hit["path"] for hit in found["results"]] == ["Notes/Tagged.md"]
    assert found["results"][0]["tags"] == ["one", "two", "three"]
    status = invoke_json(["status"], env=env)
    [warning] = status["coverage"]["warnings"]
    assert warning["path"] == "Notes/Tagged.md" and "#three in the tags line" in warning["reason"]


def test_text_output_says_what_the_index_writer_is_doing(
        capsys: pytest.CaptureFixture[str]) -> None:
    from vaultmem.cli.output import _show_daemon, show_search
    show_search({"query": "sourdough starter", "results": [],
                 "indexing": {"done": 120, "total": 1003}})
    assert capsys.readouterr().out.splitlines() == [
        "index building: 120 of 1,003 notes — results are partial",
        "nothing relevant for 'sourdough starter'"]
    _show_daemon({"pid": 7, "indexing": {
        "running": True, "kind": "changes", "done": 8, "total": 9, "queued": 2, "error": None,
        "current": {"path": "Inbox/Big.md", "chunks_done": 1280, "chunks_total": 6061}}})
    assert capsys.readouterr().out.strip() == (
        "daemon: pid 7, indexing 8 of 9 notes; embedding Inbox/Big.md: 1,280 of 6,061 "
        "chunks; 2 changed notes queued")
    # a daemon of an earlier version: no kind, counts or queue in its indexing
    _show_daemon({"pid": 7, "queue_depth": 8, "indexing": {
        "running": False, "done": 33, "total": 33, "last": None, "error": None}})
    assert capsys.readouterr().out.strip() == "daemon: pid 7, index idle; 8 changed notes queued"
