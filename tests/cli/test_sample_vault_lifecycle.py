"""The sample vault's memories at the reference time: decisions, review, gc and promotion."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, copy_vault, invoke, invoke_json
from tests.conftest import SAMPLE_VAULT

NOW = REFERENCE.isoformat()
PROMOTE = {
    "memories/2026-11-15 crumb-server-side-sessions-in-redis.md",
    "memories/2026-11-08 k3s-ingress-needs-traefik-entrypoint-annotation.md",
    "memories/2026-10-30 pgbouncer-transaction-mode-no-prepared-statements.md",
    "memories/2026-11-10 crumb-migrations-must-be-reversible.md",
}
FORGET = {
    "memories/2026-09-20 pihole-container-restart-after-update.md",
    "memories/2026-10-05 tried-caddy-in-front-of-gitea.md",
    "memories/2026-08-30 grafana-nas-dashboard-panel-order.md",
}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake"}


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_decisions_match_the_expected_table(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    for path in sorted((vault / "memories").glob("*.md")):
        rel = str(path.relative_to(vault))
        data = invoke_json(["get", rel, "--now", NOW], env=env)
        expected = "promote" if rel in PROMOTE else "forget" if rel in FORGET else "keep"
        assert data["decision"] == expected, (rel, data["reason"])


def test_read_only_commands_change_no_file(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    before = _digest(vault)
    for args in (["status"], ["review"], ["gc"], ["promote", "--dry-run"],
                 ["get", "dfc888ea-0e58-4d2e-8499-fe37117edeba"]):
        assert invoke([*args, "--now", NOW], env=env).exit_code == 0
    assert _digest(vault) == before


def test_status_counts_decisions(env: dict[str, str]) -> None:
    data = invoke_json(["status", "--now", NOW], env=env)
    assert data["memories"]["total"] == 14
    assert data["memories"]["decisions"] == {"keep": 7, "forget": 3, "promote": 4}


def test_review_queue_holds_the_danger_zone(env: dict[str, str]) -> None:
    data = invoke_json(["review", "--now", NOW], env=env)
    paths = [item["path"] for item in data["items"]]
    assert "memories/2026-11-12 sam-prefers-restic-to-borg.md" in paths
    assert all(0.15 < item["score"] < 0.35 for item in data["items"])


def test_gc_apply_archives_exactly_the_faded(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    assert invoke(["reindex"], env=env).exit_code == 0
    dry = invoke_json(["gc", "--now", NOW], env=env)
    assert {item["path"] for item in dry["archive"]} == FORGET
    done = invoke_json(["gc", "--apply", "--now", NOW, "--write-at-now"], env=env)
    assert {item["from"] for item in done["archived"]} == FORGET
    for item in done["archived"]:
        assert not (vault / item["from"]).exists()
        moved = vault / item["to"]
        assert item["to"].startswith("memories/archive/")
        assert "stm_status: archived" in moved.read_text(encoding="utf-8")
    again = invoke_json(["gc", "--now", NOW], env=env)
    assert again["archive"] == []


def test_promote_moves_to_stm_with_related_links(env: dict[str, str]) -> None:
    vault = Path(env["VAULTMEM_VAULT"])
    assert invoke(["reindex"], env=env).exit_code == 0
    original = vault / "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
    body_before = original.read_text(encoding="utf-8").split("---", 2)[2]
    data = invoke_json(["promote", "--now", NOW, "--write-at-now"], env=env)
    assert {item["from"] for item in data["promoted"]} == PROMOTE
    target = vault / "STM/2026-11-15 crumb-server-side-sessions-in-redis.md"
    text = target.read_text(encoding="utf-8")
    assert "stm_status: promoted" in text and "stm_promoted_at:" in text
    assert "## Related" in text and "[[" in text
    assert "[[Authentication Design" in text  # the note it links to / came from
    assert text.split("---", 2)[2].startswith(body_before.rstrip("\n").split("<!--")[0][:200])
    got = invoke_json(["get", "dfc888ea-0e58-4d2e-8499-fe37117edeba", "--now", NOW], env=env)
    assert got["status"] == "promoted" and got["path"].startswith("STM/")
