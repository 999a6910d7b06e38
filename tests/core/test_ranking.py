"""Fusion, aggregation, snippets, memory re-ranking and review blending."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.display import snippet
from vaultmem.core.ranking import (
    MATCH_THRESHOLD,
    TEXT_WEIGHT,
    ChunkHit,
    NoteMatch,
    NoteSignals,
    QueryContext,
    Ranked,
    hybrid_scores,
    meaning_floor,
    note_signals,
    rank_notes,
)
from vaultmem.core.rerank import blend_review, memory_factor, rerank


def hit(chunk_id: str, score: float = 0.5, path: str | None = None, text: str = "") -> ChunkHit:
    return ChunkHit(chunk_id, path or f"{chunk_id.split('#')[0]}.md", text or chunk_id, score)


def signals(vector: list[ChunkHit], text: list[ChunkHit]) -> dict[str, NoteSignals]:
    return note_signals(vector, text)


def test_note_signals_take_each_notes_best_chunk_per_list() -> None:
    vector = [hit("a#1", 0.9, text="alpha beta"), hit("a#2", 0.45), hit("b#0", 0.6)]
    text = [hit("a#2", 9.0), hit("c#0", 4.5)]
    found = signals(vector, text)
    assert set(found) == {"a.md", "b.md", "c.md"}
    assert found["a.md"].cosine == 0.9 and found["a.md"].text_score == 9.0
    assert found["c.md"].cosine is None and found["b.md"].text_score == 0.0


def test_hybrid_scores_normalise_each_signal_and_weight_them() -> None:
    found = signals([hit("a#0", 0.8), hit("b#0", 0.4)], [hit("b#0", 7.0), hit("c#0", 3.5)])
    scores = hybrid_scores(found, text_weight=0.6)
    assert scores["a.md"] == pytest.approx(0.4 * 1.0)
    assert scores["b.md"] == pytest.approx(0.4 * 0.0 + 0.6 * 1.0)
    assert scores["c.md"] == pytest.approx(0.6 * 0.5)  # only found by words: the lowest cosine
    with pytest.raises(ValueError):
        hybrid_scores(found, text_weight=1.5)


def test_the_meaning_floor_is_the_kth_best_cosine() -> None:
    cosines = [0.80, 0.95, 0.85, 0.90]
    assert meaning_floor(cosines, 1) == 0.95
    assert meaning_floor(cosines, 3) == 0.85
    assert meaning_floor(cosines, 4) == meaning_floor(cosines, 40) == 0.80  # fewer: the lowest
    assert meaning_floor([], 5) == 0.0
    with pytest.raises(ValueError):
        meaning_floor(cosines, 0)


def test_a_cosine_tail_scales_meaning_by_the_gap_to_the_kth_best() -> None:
    """With a tail of k, the best cosine is 1, the k-th best and any below it 0: a crowd of
    near misses no longer spreads the scale (e5's cosines sit between 0.8 and 0.9)."""
    vector = [hit("a#0", 0.90), hit("b#0", 0.88), hit("c#0", 0.86), hit("d#0", 0.70)]
    found = signals(vector, [hit("e#0", 4.0)])
    scores = hybrid_scores(found, text_weight=0.5, cosine_tail=3)
    assert scores["a.md"] == pytest.approx(0.5)
    assert scores["b.md"] == pytest.approx(0.5 * 0.5)
    assert scores["c.md"] == scores["d.md"] == 0.0
    assert scores["e.md"] == pytest.approx(0.5)  # words alone: the lowest cosine, below the floor
    minmax = hybrid_scores(found, text_weight=0.5)
    assert minmax["b.md"] == pytest.approx(0.5 * 0.18 / 0.20)
    assert hybrid_scores(found, text_weight=0.5, cosine_tail=4) == minmax  # the 4th: the lowest


def test_equal_cosines_all_count_fully_whatever_the_tail() -> None:
    found = signals([hit("a#0", 0.9), hit("b#0", 0.9), hit("c#0", 0.5)], [])
    scores = hybrid_scores(found, text_weight=0.5, cosine_tail=2)
    assert scores == {"a.md": 0.5, "b.md": 0.5, "c.md": 0.0}


def test_a_long_note_gains_nothing_from_its_many_loose_matches() -> None:
    """Per-note evidence is the best chunk: twelve loosely matching sections of a long note do
    not outrank the one short note that matches well."""
    long_note = [hit(f"long#{i}", 0.50) for i in range(12)]
    vector = [hit("short#0", 0.55), *long_note]
    text = [hit("short#0", 5.0), *[hit(f"long#{i}", 4.0) for i in range(12)]]
    ranked = rank_notes(signals(vector, text), QueryContext("word count"))
    assert ranked[0].path == "short.md"


def test_a_note_named_exactly_as_the_query_ranks_first() -> None:
    vector = [hit("cli#0", 0.62, text="word count of the vault"), hit("wc#0", 0.40)]
    text = [hit("cli#0", 8.0), hit("wc#0", 3.0)]
    names = {"cli.md": ("Obsidian CLI",), "wc.md": ("Word count",)}
    ranked = rank_notes(signals(vector, text), QueryContext("word count", names=names))
    assert [m.path for m in ranked] == ["wc.md", "cli.md"]
    assert ranked[0].relevance == 1.0


def test_a_short_note_named_for_the_query_beats_a_long_note_of_loose_matches() -> None:
    """"fold headings": the note *Folding* above *Settings*, whose many sections each mention
    folding or headings in passing (the shape seen on a real vault)."""
    settings = [hit(f"settings#{i}", 0.52, text="fold headings in the editor settings")
                for i in range(10)]
    vector = [*settings, hit("folding#0", 0.50, text="Fold a heading to hide its section."),
              hit("other#0", 0.2)]
    folding = "Fold a heading to hide its section."
    text = [*[hit(f"settings#{i}", 6.0, text="fold headings in the editor settings")
              for i in range(10)], hit("folding#0", 5.5, text=folding)]
    names = {"settings.md": ("Settings",), "folding.md": ("Folding",)}
    ranked = rank_notes(signals(vector, text), QueryContext("fold headings", names=names))
    assert ranked[0].path == "folding.md"


def test_an_alias_named_by_the_query_lifts_the_note() -> None:
    vector = [hit("a#0", 0.50), hit("b#0", 0.45), hit("c#0", 0.2)]
    names = {"a.md": ("Alpha",), "b.md": ("Router setup", "openwrt box")}
    plain = rank_notes(signals(vector, []), QueryContext("my openwrt box firmware"))
    named = rank_notes(signals(vector, []), QueryContext("my openwrt box firmware", names=names))
    assert plain[0].path == "a.md"
    assert named[0].path == "b.md"


def test_thread_neighbours_lift_the_answer_after_a_matching_question() -> None:
    question = "2023-05-08 s01 t001 Mel.md"
    answer = "2023-05-08 s01 t002 Cat.md"
    other = "2023-05-09 s02 t001 Mel.md"
    vector = [hit(f"{question[:-3]}#0", 0.7, path=question), hit(f"{other[:-3]}#0", 0.45,
              path=other), hit(f"{answer[:-3]}#0", 0.40, path=answer)]
    neighbours = {question: [(answer, 1)], answer: [(question, 1)]}
    alone = rank_notes(signals(vector, []), QueryContext("q"))
    threaded = rank_notes(signals(vector, []), QueryContext("q", neighbours=neighbours))
    assert [m.path for m in alone][1:] == [other, answer]
    assert [m.path for m in threaded][1:] == [answer, other]


def test_relevance_is_absolute_a_query_matching_nothing_is_not_confident() -> None:
    """The best note of a query that matches nothing (low cosines, none of its words) gets a
    low relevance, while a real match gets a high one, though both are first of their lists."""
    junk = signals([hit("a#0", 0.21, text="battery of the ups"), hit("b#0", 0.18)], [])
    real = signals([hit("a#0", 0.71, text="battery of the ups"), hit("b#0", 0.3)],
                   [hit("a#0", 6.0, text="battery of the ups")])
    weak = rank_notes(junk, QueryContext("Wie repariere ich mein Fahrrad"))
    strong = rank_notes(real, QueryContext("ups battery"))
    assert weak[0].relevance < MATCH_THRESHOLD <= strong[0].relevance
    assert all(0.0 <= m.relevance <= 1.0 for m in weak + strong)
    assert [m.relevance for m in strong] == sorted((m.relevance for m in strong), reverse=True)


def test_rank_notes_of_nothing_is_empty() -> None:
    assert rank_notes({}, QueryContext("anything")) == []


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(0, 3),
                          st.floats(-1.0, 1.0), st.floats(0.0, 20.0)), max_size=30),
       st.text(max_size=30))
def test_rank_notes_is_a_permutation_with_relevance_in_unit_interval(
    rows: list[tuple[str, int, float, float]], query: str,
) -> None:
    vector = [hit(f"{n}#{i}", c) for n, i, c, _ in rows]
    text = [hit(f"{n}#{i}", b) for n, i, _, b in rows if b > 0]
    ranked = rank_notes(signals(vector, text), QueryContext(query))
    assert sorted(m.path for m in ranked) == sorted({f"{n}.md" for n, *_ in rows})
    assert all(0.0 <= m.relevance <= 1.0 for m in ranked)
    assert [m.relevance for m in ranked] == sorted((m.relevance for m in ranked), reverse=True)


def test_snippet_short_text_is_whole() -> None:
    assert snippet("one  two\nthree", "two") == "one two three"


def test_snippet_window_around_first_term() -> None:
    words = [f"word{i}" for i in range(200)]
    words[120] = "Needle"
    result = snippet(" ".join(words), "needle", width=80)
    assert "Needle" in result
    assert result.startswith("…") and result.endswith("…")
    assert len(result) <= 80
    inner = result.strip("…").split()
    assert all(w in words for w in inner)  # cut at word boundaries


def test_snippet_without_match_starts_at_beginning() -> None:
    text = "start " + "filler " * 100
    result = snippet(text, "absent", width=50)
    assert result.startswith("start") and result.endswith("…")


@given(st.floats(min_value=0, max_value=10), st.floats(min_value=0, max_value=10))
def test_memory_factor_bounded_and_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert 0.5 <= memory_factor(low) <= memory_factor(high) <= 1.0


def test_memory_factor_anchors() -> None:
    assert memory_factor(0.0) == 0.5
    assert memory_factor(None) == memory_factor(1.0)
    assert memory_factor(1.0) > 0.95
    assert memory_factor(3.8) - memory_factor(1.0) < 0.03  # saturates


def test_decay_reranks_but_does_not_erase() -> None:
    matches = [
        NoteMatch("old-memory.md", 0.9, "", "o#0", 0.8),
        NoteMatch("fresh-memory.md", 0.3, "", "f#0", 0.3),
        NoteMatch("regular.md", 0.35, "", "r#0", 0.35),
    ]
    ranked = rerank(matches, {"old-memory.md": 0.001, "fresh-memory.md": 1.0})
    assert [r.path for r in ranked] == ["old-memory.md", "regular.md", "fresh-memory.md"]
    assert ranked[0].memory_score == 0.001
    assert ranked[1].memory_score is None


def test_rerank_orders_equal_relevance_by_memory_score_then_the_ranking() -> None:
    matches = [NoteMatch(p, 0.5, "", p, None) for p in ("b.md", "a.md", "c.md")]
    ranked = rerank(matches, {"c.md": 0.1})
    assert [r.path for r in ranked] == ["b.md", "a.md", "c.md"]
    assert ranked[0].final == pytest.approx(0.5 * memory_factor(None))


def test_a_query_nothing_matches_keeps_the_rankings_order() -> None:
    """Confidence 0 makes every relevance 0: the order is still the ranking's."""
    matches = [NoteMatch(p, 0.0, "", p, None) for p in ("z.md", "m.md", "a.md")]
    assert [r.path for r in rerank(matches, {})] == ["z.md", "m.md", "a.md"]


def _ranked(n: int) -> list[Ranked]:
    return [Ranked(f"n{i:02d}.md", 1 - i / 100, None, 1 - i / 100, "") for i in range(n)]


def test_blend_review_fills_slots_with_candidates() -> None:
    ranked = _ranked(20)
    priorities = {"n15.md": 1.0, "n12.md": 0.5, "n02.md": 1.0, "n18.md": 0.2}
    blended = blend_review(ranked, priorities, top_k=10)
    assert [r.path for r in blended[:7]] == [f"n{i:02d}.md" for i in range(7)]
    assert [r.path for r in blended[7:]] == ["n15.md", "n12.md", "n18.md"]
    assert all(r.review for r in blended[7:]) and not any(r.review for r in blended[:7])


def test_blend_review_without_candidates_keeps_ranking() -> None:
    ranked = _ranked(12)
    blended = blend_review(ranked, {"n01.md": 1.0}, top_k=10)
    assert blended == ranked[:10]


def test_blend_review_small_top_k_has_no_review_slot() -> None:
    assert blend_review(_ranked(5), {"n04.md": 1.0}, top_k=3) == _ranked(3)


@given(
    n=st.integers(min_value=0, max_value=30),
    top_k=st.integers(min_value=0, max_value=40),
    fraction=st.floats(min_value=0, max_value=1),
    priorities=st.dictionaries(
        st.integers(min_value=0, max_value=29).map(lambda i: f"n{i:02d}.md"),
        st.floats(min_value=0, max_value=1),
    ),
)
def test_blend_review_properties(
    n: int, top_k: int, fraction: float, priorities: dict[str, float]
) -> None:
    ranked = _ranked(n)
    blended = blend_review(ranked, priorities, top_k, fraction=fraction)
    paths = [r.path for r in blended]
    assert len(paths) == len(set(paths))
    assert len(blended) == min(top_k, n)
    assert all(priorities.get(r.path, 0) > 0 for r in blended if r.review)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 4), st.sampled_from([0.2, 0.5])),
                max_size=20),
       st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 4), st.sampled_from([1.0, 3.0])),
                max_size=20))
def test_each_notes_snippet_is_its_best_fused_chunk_ties_to_the_first_chunk_id(
    vector_rows: list[tuple[str, int, float]], text_rows: list[tuple[str, int, float]],
) -> None:
    vector = list({f"{n}#{i}": hit(f"{n}#{i}", s) for n, i, s in vector_rows}.values())
    text = list({f"{n}#{i}": hit(f"{n}#{i}", s) for n, i, s in text_rows}.values())
    fused: dict[str, float] = {}
    for hits, weight in ((vector, 1 - TEXT_WEIGHT), (text, TEXT_WEIGHT)):
        low, high = min((h.score for h in hits), default=0), max((h.score for h in hits), default=0)
        for h in hits:
            unit = 1.0 if high <= low else (h.score - low) / (high - low)
            fused[h.chunk_id] = fused.get(h.chunk_id, 0.0) + weight * unit
    expected: dict[str, str] = {}
    for chunk_id in sorted(fused, key=lambda c: (-fused[c], c)):
        expected.setdefault(f"{chunk_id.split('#')[0]}.md", chunk_id)
    found = signals(vector, text)
    assert {path: s.best.chunk_id for path, s in found.items()} == expected


def test_a_result_exactly_at_the_threshold_is_not_a_match() -> None:
    """The boundary is exclusive (measured: bench/match_boundary.py, docs/protocol.md)."""
    from vaultmem.core.ranking import MATCH_FLOOR, MATCH_THRESHOLD, is_match

    assert not is_match(MATCH_THRESHOLD) and is_match(MATCH_FLOOR)
    assert MATCH_THRESHOLD < MATCH_FLOOR < MATCH_THRESHOLD + 1e-12
    # `--matched-only` keeps relevance >= MATCH_FLOOR: exactly the results `is_match` accepts
    for relevance in (0.0, 0.4999999, MATCH_THRESHOLD, MATCH_FLOOR, 0.5000001, 1.0):
        assert (relevance >= MATCH_FLOOR) is is_match(relevance)
