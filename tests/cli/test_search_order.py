"""The CLI's search listing is in `final` order (the ranking key), and every result that is not
says why: a superseded memory just below its successor, a review item after the primary
results. Generated listings in the engine's order (`core.supersede.prefer_successors` over the
`final` order, review items last)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.cli.output import show_search
from vaultmem.core.supersede import prefer_successors


def _hit(n: int, final: float, review: bool = False, by: str | None = None) -> dict[str, Any]:
    return {"id": f"m{n}", "path": f"memories/m{n}.md", "title": f"memory {n}", "snippet": "",
            "relevance": final, "matched": True, "score": 1.0, "final": final,
            "review": review, "superseded_by": None if by is None else {
                "id": by, "title": by, "path": f"memories/{by}.md", "uri": None}}


@st.composite
def listings(draw: st.DrawFn) -> list[dict[str, Any]]:
    size = draw(st.integers(2, 8))
    finals = sorted(draw(st.lists(st.floats(0.05, 1.0), min_size=size, max_size=size)),
                    reverse=True)
    hits = [_hit(n, f) for n, f in enumerate(finals)]
    for stale in draw(st.sets(st.integers(0, size - 1), max_size=size // 2)):
        newer = draw(st.integers(0, size - 1))
        if newer != stale and hits[newer]["superseded_by"] is None:
            hits[stale]["superseded_by"] = {"id": f"m{newer}", "title": "", "uri": None,
                                            "path": hits[newer]["path"]}
    successor = {h["path"]: h["superseded_by"]["path"] for h in hits if h["superseded_by"]}
    ordered = prefer_successors(hits, lambda h: h["path"], successor)
    reviews = draw(st.integers(0, 2))
    for hit in ordered[len(ordered) - reviews:]:
        hit["review"] = True
    return ordered


@given(listings())
@settings(max_examples=200, deadline=None)
def test_every_result_out_of_final_order_says_why(results: list[dict[str, Any]]) -> None:
    lines = _render(results)
    finals = [float(re.search(r"final (\d\.\d{3})", line).group(1))  # type: ignore[union-attr]
              for line in lines]
    for n in range(1, len(lines)):
        if finals[n] > finals[n - 1]:
            assert "[placed below its successor" in lines[n] or "[review" in lines[n], lines


def test_the_reported_listing_names_the_placement() -> None:
    """`1. …5001… final 0.819` above `2. …5000… final 0.991` after a supersede."""
    results = [_hit(5001, 0.819), _hit(5000, 0.991, by="m5001")]
    lines = _render(results)
    assert lines[1].endswith("final 0.991  [placed below its successor, 1.]")
    assert "[placed" not in lines[0]


def _render(results: list[dict[str, Any]]) -> list[str]:
    import io
    from contextlib import redirect_stdout
    out = io.StringIO()
    with redirect_stdout(out):
        show_search({"query": "q", "results": results})
    return [line for line in out.getvalue().splitlines() if "final " in line]


@pytest.mark.parametrize("review", [True])
def test_a_review_item_says_it_was_blended_in(review: bool) -> None:
    lines = _render([_hit(1, 0.5), _hit(2, 0.9, review=review)])
    assert lines[1].endswith("[review: placed after the primary results]")
