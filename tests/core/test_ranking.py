"""Fusion, aggregation, snippets, memory re-ranking and review blending."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.ranking import (
    ChunkHit,
    NoteMatch,
    Ranked,
    aggregate_by_note,
    blend_review,
    fuse,
    memory_factor,
    rerank,
    snippet,
    text_weight_for,
)


def hit(chunk_id: str, score: float = 0.5, path: str | None = None, text: str = "") -> ChunkHit:
    return ChunkHit(chunk_id, path or f"{chunk_id.split('#')[0]}.md", text or chunk_id, score)


def test_fuse_normalises_each_list_and_weights_them() -> None:
    vector = [hit("a#0", 0.8), hit("b#0", 0.4)]
    text = [hit("b#0", 7.0), hit("c#0", 3.5)]
    fused = dict((h.chunk_id, s) for h, s in fuse(vector, text, text_weight=0.3))
    assert fused["a#0"] == pytest.approx(0.7 * 1.0)
    assert fused["b#0"] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert fused["c#0"] == pytest.approx(0.3 * 0.5)
    order = [h.chunk_id for h, _ in fuse(vector, text, text_weight=0.3)]
    assert order == ["a#0", "b#0", "c#0"]


def test_fuse_ignores_repeated_chunk_in_one_list_and_empty_lists() -> None:
    fused = fuse([hit("a#0", 1.0), hit("a#0", 0.2), hit("b#0", 0.5)], [], text_weight=0.0)
    assert dict((h.chunk_id, s) for h, s in fused) == {"a#0": 1.0, "b#0": 0.5}
    assert fuse([], []) == []
    with pytest.raises(ValueError):
        fuse([], [], text_weight=1.5)


def test_when_nothing_is_close_in_meaning_the_exact_word_wins() -> None:
    # a rare word: the nearest chunks by meaning are noise (cosine 0.15), one chunk has it
    noise = [hit("b#0", 0.15), hit("c#0", 0.14), hit("a#0", 0.05)]
    text = [hit("a#0", 4.2)]
    order = [h.chunk_id for h, _ in fuse(noise, text, text_weight=0.5)]
    assert order[0] == "a#0"
    fused = dict((h.chunk_id, s) for h, s in fuse(noise, text, text_weight=0.5))
    assert fused["b#0"] == pytest.approx(0.5 * 0.15 / 0.5)  # normalised by the floor
    # a confident best cosine is normalised as before
    close = dict((h.chunk_id, s) for h, s in fuse([hit("b#0", 0.8)], [], text_weight=0.3))
    assert close["b#0"] == pytest.approx(0.7)


def test_short_queries_weigh_exact_words_more() -> None:
    assert text_weight_for("PgBouncer") > text_weight_for("how do I pool database connections")


def test_aggregate_one_entry_per_note() -> None:
    vector = [hit("a#1", 0.9, text="alpha beta"), hit("a#2", 0.45), hit("b#0", 0.6)]
    text = [hit("a#1", 9.0, text="alpha beta"), hit("c#0", 4.5)]
    matches = aggregate_by_note(fuse(vector, text, text_weight=0.3), vector_hits=vector,
                                query="beta")
    assert [m.path for m in matches] == ["a.md", "b.md", "c.md"]
    best = matches[0]
    assert best.chunk_id == "a#1"
    # best chunk 1.0 (top of both lists) plus half of the second (0.7·0.5), over the bound 2
    assert best.relevance == pytest.approx((1.0 + 0.5 * 0.35) / 2)
    assert best.vector_similarity == 0.9
    assert best.snippet == "alpha beta"
    assert matches[1].vector_similarity == 0.6
    assert matches[2].vector_similarity is None
    assert all(0.0 < m.relevance <= 1.0 for m in matches)


def test_aggregate_more_matching_chunks_count_but_are_bounded() -> None:
    single = aggregate_by_note(fuse([hit("a#0")], [], text_weight=0.0))[0].relevance
    several = aggregate_by_note(
        fuse([hit("a#0"), hit("a#1"), hit("a#2")], [], text_weight=0.0))[0].relevance
    assert single == pytest.approx(0.5)
    assert single < several < single * 2


def test_several_good_passages_beat_one_chunk_found_by_both_lists() -> None:
    """A note that matches by meaning in many passages outranks one chunk that is 6th by
    meaning and 1st by words (the sample vault's spaced-repetition query, real scores)."""
    vector = [hit("m#1", 0.565), hit("m#2", 0.532), hit("m#0", 0.453), hit("h#2", 0.414),
              hit("x#0", 0.366), hit("n#2", 0.331), hit("m#6", 0.322)]
    text = [hit("n#2", 7.24), hit("r#5", 5.14), hit("d#0", 3.79), hit("n#1", 3.31),
            hit("c#0", 3.04), hit("m#6", 2.86)]
    matches = aggregate_by_note(fuse(vector, text))
    assert matches[0].path == "m.md"
    assert all(0.0 < m.relevance <= 1.0 for m in matches)


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


def test_rerank_orders_equal_relevance_by_memory_score_then_path() -> None:
    matches = [NoteMatch(p, 0.5, "", p, None) for p in ("b.md", "a.md", "c.md")]
    ranked = rerank(matches, {"c.md": 0.1})
    assert [r.path for r in ranked] == ["a.md", "b.md", "c.md"]
    assert ranked[0].final == pytest.approx(0.5 * memory_factor(None))


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
