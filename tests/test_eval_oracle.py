"""bench/eval_oracle.py: the per-question best of a run's systems, from its per-query rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.eval_oracle import ORACLE, main, oracle_table


def _row(system: str, qid: str, ranking: list[str], relevant: dict[str, int],
         layout: str = "ru", split: str = "dev", kind: str = "tldr") -> dict:
    return {"set": kind, "layout": layout, "system": system, "id": qid, "split": split,
            "ranking": ranking, "relevant": relevant}


def test_the_oracle_takes_each_questions_best_system() -> None:
    rows = [
        _row("bm25", "q1", ["a.md", "b.md"], {"a.md": 2}),       # q1: bm25 right at 1
        _row("dense", "q1", ["b.md", "c.md"], {"a.md": 2}),      # dense misses q1
        _row("bm25", "q2", ["x.md"], {"y.md": 2}),              # bm25 misses q2
        _row("dense", "q2", ["y.md"], {"y.md": 2}),             # dense right at 1
        _row("dense", "q3", ["y.md"], {}),                      # unanswerable: left out
        _row("dense", "q1", ["a.md"], {"a.md": 2}, kind="locomo"),  # another set: left out
    ]
    table = oracle_table(rows)
    assert set(table) == {("ru", "dev")}
    figures = table[("ru", "dev")]
    assert figures["bm25"] == pytest.approx(0.5)
    assert figures["dense"] == pytest.approx(0.5)
    assert figures[ORACLE] == pytest.approx(1.0)


def test_a_file_without_tldr_rows_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "run.jsonl"
    empty.write_text(json.dumps(_row("bm25", "q1", ["a.md"], {"a.md": 2}, kind="vault")) + "\n",
                     encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        main([str(empty)])
    assert stopped.value.code == 2
