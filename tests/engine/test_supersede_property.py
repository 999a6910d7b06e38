"""No sequence of saves, supersedes, unsupersedes, restores and sweeps loses a memory or leaves
`stm_superseded_by` (or `stm_supersedes`) pointing at nothing; the links stay paired.

A hypothesis state machine over the Api in-process (fake embedder, a temporary vault), reading
every note from disk after each step.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.vault.frontmatter import parse

START = datetime.fromisoformat("2026-10-20T10:00:00+00:00")
FACTS = [f"The {thing} is on port {port}." for thing in ("NAS admin page", "Grafana board",
                                                         "Gitea server") for port in (80, 5000)]


class SupersedeMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="vaultmem-supersede-"))
        vault = self.tmp / "vault"
        (vault / "memories").mkdir(parents=True)
        config = load_settings(self.tmp / "none.toml", env={}, overrides={
            "vault": str(vault), "data_dir": str(self.tmp / "data"), "embedding_model": "fake",
            "update_cosine": 0.3, "auto_supersede": True})  # detected updates linked too
        self.app: App = build_app(config)
        self.app.sync.reindex()
        self.now = START
        self.saved: set[str] = set()
        self.n = 0

    def teardown(self) -> None:
        if hasattr(self, "app"):
            self.app.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def call(self, op: str, body: dict[str, object]) -> dict[str, object] | None:
        self.now += timedelta(hours=1)
        try:
            return self.app.api(clock=lambda: self.now).call(op, body)
        except (InvalidInput, NotFound):
            return None  # refused: the invariants say it changed nothing that matters

    def ids(self) -> list[str]:
        return sorted(self.saved)

    @rule(fact=st.sampled_from(FACTS), link=st.booleans(), pick=st.integers(0, 50))
    def save(self, fact: str, link: bool, pick: int) -> None:
        self.n += 1
        body: dict[str, object] = {"content": f"{fact} Note {self.n}."}
        if link and self.saved:
            body["supersedes"] = self.ids()[pick % len(self.saved)]
        answer = self.call("save", body)
        if answer is not None:
            self.saved.add(answer["memory"]["id"])  # type: ignore[index]

    @rule(a=st.integers(0, 50), b=st.integers(0, 50))
    def supersede(self, a: int, b: int) -> None:
        if self.saved:
            ids = self.ids()
            self.call("supersede", {"id": ids[a % len(ids)], "by": ids[b % len(ids)]})

    @rule(a=st.integers(0, 50))
    def unsupersede(self, a: int) -> None:
        if self.saved:
            self.call("unsupersede", {"id": self.ids()[a % len(self.saved)]})

    @rule(a=st.integers(0, 50))
    def restore(self, a: int) -> None:
        archived = sorted(i for i, f in self.notes().items() if f.get("stm_status") == "archived")
        if archived:  # mostly memories the sweep archived as superseded
            self.call("restore", {"id": archived[a % len(archived)]})

    def notes(self) -> dict[str, dict[str, object]]:
        states = {}
        for path in self.app.root.rglob("*.md"):
            fields = parse(path.read_text(encoding="utf-8"))[0]
            if fields.get("stm_id"):
                states[str(fields["stm_id"])] = fields
        return states

    @rule(days=st.sampled_from([0, 2, 40]))
    def sweep(self, days: int) -> None:
        self.now += timedelta(days=days)
        self.call("sweep", {"dry_run": False})

    @invariant()
    def nothing_lost_and_links_resolve(self) -> None:
        if not hasattr(self, "app"):
            return
        states = self.notes()
        assert self.saved <= set(states), "a saved memory is gone"
        for memory_id, fields in states.items():
            newer, older = fields.get("stm_superseded_by"), fields.get("stm_supersedes")
            if newer is not None:
                assert newer in states, f"{memory_id} is superseded by a memory that is gone"
                assert states[newer].get("stm_supersedes") == memory_id, "unpaired link"
            if older is not None:
                assert older in states, f"{memory_id} supersedes a memory that is gone"
                assert states[older].get("stm_superseded_by") == memory_id, "unpaired link"


SupersedeMachine.TestCase.settings = settings(
    max_examples=20, stateful_step_count=15, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_supersede_sequences = pytest.mark.timeout(600)(SupersedeMachine.TestCase)
