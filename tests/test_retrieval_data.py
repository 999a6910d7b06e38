"""The judged retrieval set over the vaultofknowledge vault (tests/data/retrieval) is well formed.

The set is data for scripts/eval; a malformed entry (a typo in a path, a grade of 3, a query
with only partial judgments) would silently skew nDCG, so its shape is checked here, and, when
the corpus is present beside the repository, every judged path must name a real note.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPORA

DATA = Path(__file__).resolve().parent / "data" / "retrieval" / "vaultofknowledge.json"
VAULT = CORPORA / "vaultofknowledge" / "vault"
KINDS = {"keyword", "conceptual", "title", "multi"}
SPLITS = {"dev", "test"}


def _queries() -> list[dict[str, Any]]:
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert isinstance(raw, dict) and isinstance(raw.get("queries"), list)
    return list(raw["queries"])


def test_every_query_is_well_formed() -> None:
    queries = _queries()
    assert len(queries) >= 60
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids)), "query ids must be unique"
    texts = [q["query"].strip().lower() for q in queries]
    assert len(texts) == len(set(texts)), "query texts must be unique"
    for q in queries:
        assert set(q) == {"id", "query", "kind", "split", "relevant"}, q["id"]
        assert isinstance(q["query"], str) and q["query"].strip(), q["id"]
        assert q["kind"] in KINDS, q["id"]
        assert q["split"] in SPLITS, q["id"]
        relevant = q["relevant"]
        assert isinstance(relevant, dict) and relevant, q["id"]
        assert set(relevant.values()) <= {1, 2}, q["id"]
        assert 2 in relevant.values(), f"{q['id']} has no grade-2 note"
        for path in relevant:
            assert path.endswith(".md") and not path.startswith("/"), (q["id"], path)
            assert "\\" not in path and ".." not in path.split("/"), (q["id"], path)


def test_kinds_and_splits_are_balanced() -> None:
    queries = _queries()
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) == KINDS
    assert min(kinds.values()) >= 10
    for kind in KINDS:
        splits = Counter(q["split"] for q in queries if q["kind"] == kind)
        assert abs(splits["dev"] - splits["test"]) <= 1, (kind, splits)
    multi = [q for q in queries if q["kind"] == "multi"]
    assert all(list(q["relevant"].values()).count(2) >= 2 for q in multi), \
        "a multi-note question needs at least two relevant notes"


@pytest.mark.skipif(not VAULT.is_dir(), reason="vaultofknowledge corpus not present")
def test_every_judged_path_is_a_note_with_content() -> None:
    missing, empty = [], []
    for q in _queries():
        for path in q["relevant"]:
            note = VAULT / path
            if not note.is_file():
                missing.append((q["id"], path))
            elif not note.read_bytes().strip():
                empty.append((q["id"], path))
    assert not missing, missing
    assert not empty, empty
