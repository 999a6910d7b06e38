"""The wire JSON of every operation, byte for byte: a scripted session over the sample vault
(fake embedder, fixed clock) whose answers must match the recorded ones exactly, key order
included. Typed results are turned into JSON at the Api's edge (`vaultmem/api/wire.py`); this
pins that the JSON does not change with them.

After a deliberate change to the protocol, record the answers again with
`RECORD_WIRE_ANSWERS=1 .venv/bin/python -m pytest tests/api/test_wire_golden.py` and review
the diff of tests/data/wire/session.json.
"""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_server import REFERENCE, SAMPLE_ID, SAMPLE_PATH, sample_app
from tests.cli._support import memory_note
from tests.conftest import REPO
from vaultmem.api.ops import Api
from vaultmem.errors import VaultmemError

GOLDEN = REPO / "tests" / "data" / "wire" / "session.json"
RESTIC = "memories/2026-11-12 sam-prefers-restic-to-borg.md"
RESTIC_ID = "a2cd2095-8207-4fe9-aba0-d4ef94d26ecf"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LATER = timedelta(days=400)  # far enough on that memories decay past the forget threshold
KETTLE = ("The office kettle descales best with citric acid every second Friday morning before "
          "the team arrives, rinse it twice and boil plain water once.")


def session(api: Api, clock: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each op with its body, in order; the answers depend on the ones before."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("health", {}),
        ("status", {"files": True}),
        ("search", {"query": "redis sessions"}),
        ("search", {"query": "restic backups", "memories_only": True, "top_k": 3}),
        ("related", {"id": SAMPLE_ID, "top_k": 3}),
        ("get", {"id": SAMPLE_ID}),
        ("touch", {"id": SAMPLE_ID}),
        ("touch", {"path": SAMPLE_PATH, "boost": True}),
        ("feedback", {"id": SAMPLE_ID, "helpful": False}),
        ("pin", {"id": SAMPLE_ID, "pinned": True}),
        ("pin", {"id": SAMPLE_ID, "pinned": False}),
        ("observe", {"ids": [SAMPLE_ID], "context_tags": ["ops"]}),
        ("review", {"limit": 5}),
        ("save", {"content": "The staging database runs on port 5433, not 5432.",
                  "tags": ["crumb"], "type": "fact"}),
        ("save", {"content": "The staging database runs on port 5433, not 5432.",
                  "tags": ["crumb"], "type": "fact"}),
        ("save", {"content": "The staging database now runs on port 6543 instead of 5433.",
                  "tags": ["crumb"], "type": "fact"}),
        ("list", {"limit": 5}),
        ("list", {"sort": "title", "tags": ["crumb"]}),
        ("edit", {"id": SAMPLE_ID, "tags": ["crumb", "redis", "sessions"]}),
        ("supersede", {"id": RESTIC, "by": SAMPLE_ID}),
        ("search", {"query": "restic borg"}),
        ("unsupersede", {"id": RESTIC}),
        ("forget", {"id": RESTIC}),
        ("restore", {"id": RESTIC_ID}),
        ("clusters", {}),
        ("reconcile", {}),
        ("reconcile", {"apply": True}),
        ("write_kettles", {}),
        ("conflict_copy", {}),
        ("reindex", {}),
        ("clusters", {}),
        ("merge_cluster", {"cluster_id": "<listed>"}),
        ("undo", {"list": True}),
        ("reconcile", {}),
        ("reconcile", {"apply": True}),
        ("gc", {}),
        ("promote", {"dry_run": True}),
        ("sweep", {}),
        ("later", {}),
        ("sweep", {"dry_run": False}),
        ("undo", {"list": True}),
        ("undo", {}),
        ("gc", {"apply": True}),
        ("promote", {}),
        ("reindex", {}),
        ("status", {}),
    ]
    return steps


def run_session(api: Api, clock: list[Any], vault: Path) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    for op, body in session(api, clock):
        if op == "later":
            clock[0] = REFERENCE + LATER
            continue
        if op == "write_kettles":  # two memories saying one thing: a cluster to merge
            for n, name in enumerate(("kettle descaling", "kettle-descaling")):
                memory_note(vault, name, use_count=3 + n, created=REFERENCE - timedelta(days=9),
                            last_used=REFERENCE - timedelta(days=2 + n), body=KETTLE,
                            memory_id=f"0000000{n}-0000-4000-8000-00000000000{n}")
            continue
        if op == "conflict_copy":  # a sync tool's conflict copy of a memory's note
            text = (vault / SAMPLE_PATH).read_text(encoding="utf-8")
            copy = SAMPLE_PATH.replace(".md", ".sync-conflict-20261120-110000-ABCDEFG.md")
            (vault / copy).write_text(text.replace("stm_use_count: ", "stm_use_count: 1"),
                                      encoding="utf-8")
            continue
        if body.get("cluster_id") == "<listed>":
            listed = next(a["answer"] for a in reversed(answers) if a["op"] == "clusters")
            body = {"cluster_id": listed["clusters"][0]["id"]}
        try:
            answer: Any = api.call(op, body)
        except VaultmemError as exc:
            answer = {"error": type(exc).__name__, "message": exc.message}
        answers.append({"op": op, "body": body, "answer": answer})
    return answers


def wire_text(answers: list[dict[str, Any]], root: Path) -> str:
    """One line per answer, as the socket encodes it (key order kept); run-specific values
    (the tmp folder, the operation ids, the index build's timings) made stable."""
    lines = []
    known = set(UUID.findall((REPO / "sample-vault").joinpath("memories").as_posix()))
    known |= {m for p in (REPO / "sample-vault").rglob("*.md")
              for m in UUID.findall(p.read_text(encoding="utf-8"))}
    made: dict[str, str] = {}
    for item in answers:
        text = json.dumps(item, ensure_ascii=False)
        text = text.replace(str(root), "<tmp>")
        for found in UUID.findall(text):  # ids of memories the session saved are random
            if found not in known:
                made.setdefault(found, f"<saved-{len(made)}>")
        for found, stable in made.items():
            text = text.replace(found, stable)
        text = re.sub(r'"op-[0-9a-z-]+"', '"<operation>"', text)
        text = re.sub(r'("(?:seconds|elapsed_s|duration_s|[a-z_]*_s)": )[0-9.e-]+', r"\1<s>",
                      text)
        lines.append(text)
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(120)
def test_every_answer_on_the_wire_is_unchanged(tmp_path: Path) -> None:
    clock = [REFERENCE]
    with sample_app(tmp_path) as app:
        api = app.api(clock=lambda: clock[0])
        got = wire_text(run_session(api, clock, app.root), tmp_path)
    if os.environ.get("RECORD_WIRE_ANSWERS"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(got, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    for n, (want, have) in enumerate(zip(expected.splitlines(), got.splitlines(), strict=True)):
        assert have == want, f"answer {n} differs"


def test_a_changed_answer_is_caught(tmp_path: Path) -> None:
    answers = [{"op": "health", "body": {}, "answer": {"status": "ok", "vault": "v"}}]
    reordered = [{"op": "health", "body": {}, "answer": {"vault": "v", "status": "ok"}}]
    assert wire_text(answers, tmp_path) != wire_text(reordered, tmp_path)
