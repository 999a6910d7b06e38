"""Names, threads and absolute evidence: the query-side signals of ranking."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.relevance import (
    evidence,
    name_match,
    name_matches,
    neighbours_at,
    propagate,
    thread_key,
    thread_neighbours,
    thread_of,
    word_evidence,
    words_found,
)
from vaultmem.core.words import content_keys, content_words, english_keys


def test_content_words_drop_stop_words_numbers_and_accents() -> None:
    assert content_words("What is the Café in 2023?") == ["cafe"]


@pytest.mark.parametrize(("query", "names", "coverage", "exact"), [
    ("word count", ["Word count"], 1.0, True),
    ("Word-Count!", ["word count"], 1.0, True),
    ("how do I fold headings", ["Folding"], 1.0, False),  # fold / folding share a stem
    ("fold", ["Settings"], 0.0, False),
    ("my openwrt box", ["Router setup", "OpenWrt box"], 1.0, False),
    ("What did Caroline research?", ["2023-05-25 s02 t008 Caroline"], 1.0, False),
    ("notes from session s02", ["2023-05-25 s02 t008 Caroline"], 0.5, False),
    ("", ["Anything"], 0.0, False),
    ("anything", ["  ", "Anything"], 1.0, True),  # a blank name is passed over
    ("turn 12 of the game", ["Turn 12", "Game 7"], 1.0, False),  # numbers the query has count
    ("the game", ["Game 7"], 1.0, False),  # ... and those it has not are left out
])
def test_name_match(query: str, names: list[str], coverage: float, exact: bool) -> None:
    found = name_match(query, names)
    assert found.coverage == pytest.approx(coverage)
    assert found.exact is exact


@pytest.mark.parametrize(("path", "key"), [
    ("conv/2023-05-08 s01 t003 Caroline.md", ("conv", "2023-05-08", "")),
    ("conv/Session 3 – turn 12.md", ("conv", "", "session")),
    ("conv/Session 3/Turn 7.md", ("conv/Session 3", "", "turn")),
    ("D3 12.md", ("", "", "")),
    ("Free Will 3 - How One Alone Exists.md", ("", "", "free will")),
    ("2026-11-24.md", None),  # a daily note: no sequence number
    ("Daily/Entry of 13th Feb.md", None),  # an ordinal is not a sequence number
    ("memories/2026-09-21 nas-ups-battery-replaced.md", None),
    ("memories/2026-11-08 k3s-ingress-needs-traefik.md", None),  # digits inside a word
    ("notes/Word count.md", None),
    ("notes/2023-05-081 not a date.md", ("notes", "", "")),
])
def test_thread_key(path: str, key: tuple[str, str, str] | None) -> None:
    assert thread_key(path) == key


def test_threads_are_in_natural_name_order_per_folder_and_date() -> None:
    folder = ["c/Session 1 – turn 10.md", "c/Session 1 – turn 2.md", "c/Session 10 – turn 1.md",
              "c/Session 2 – turn 1.md", "c/Home.md", "c/2023-01-01 t1.md"]
    assert thread_of(folder, ("c", "", "session")) == [
        "c/Session 1 – turn 2.md", "c/Session 1 – turn 10.md", "c/Session 2 – turn 1.md",
        "c/Session 10 – turn 1.md"]
    assert thread_of(folder, ("c", "2023-01-01", "")) == ["c/2023-01-01 t1.md"]
    assert thread_of(["c/Free Will 1.md", "c/Crypto 1.md", "c/Free Will 2.md"],
                     ("c", "", "free will")) == ["c/Free Will 1.md", "c/Free Will 2.md"]


def test_thread_neighbours_within_width_in_thread_order() -> None:
    thread = thread_of(["d/2023-01-01 t4.md", "d/2023-01-01 t1.md", "d/2023-01-01 t3.md",
                        "d/2023-01-01 t2.md", "d/2023-01-01 t5.md"], ("d", "2023-01-01", ""))
    found = thread_neighbours(thread, "d/2023-01-01 t3.md", 1)
    assert found == [("d/2023-01-01 t2.md", 1), ("d/2023-01-01 t4.md", 1)]
    assert len(thread_neighbours(thread, "d/2023-01-01 t1.md", 2)) == 2
    assert thread_neighbours(thread, "elsewhere.md", 2) == []


_NAME_WORDS = st.sampled_from(["Word", "count", "word-count", "s01", "2023", "the", "Café",
                                "cafe", "paintings", "painting", "東京", "x"])
_NAMES = st.lists(_NAME_WORDS, min_size=1, max_size=3).map(" ".join)


@given(_NAMES, st.dictionaries(st.sampled_from(["a.md", "b.md", "c.md"]),
                               st.lists(_NAMES, max_size=3), max_size=3),
       st.booleans())
def test_name_matches_is_name_match_of_each_note(query: str, names: dict[str, list[str]],
                                                 as_tuples: bool) -> None:
    """The batch (its quick rejection of notes sharing no word with the query included)
    answers as name_match note by note, for names given as tuples or as lists."""
    given_names = {p: tuple(n) if as_tuples else n for p, n in names.items()}
    paths = ["a.md", "b.md", "c.md"]
    found = name_matches(query, given_names, paths, lambda path: english_keys)
    assert found == {p: name_match(query, given_names.get(p, ())) for p in paths}


@given(st.dictionaries(st.sampled_from("abcdef"), st.floats(0.0, 1.0), min_size=1),
       st.dictionaries(st.sampled_from("abcdefg"),
                       st.lists(st.tuples(st.sampled_from("abcdefg"), st.integers(1, 3)),
                                max_size=4)),
       st.floats(0.0, 1.0), st.floats(0.1, 1.0))
def test_propagate_is_the_documented_formula(scores: dict[str, float],
                                             neighbours: dict[str, list[tuple[str, int]]],
                                             share: float, decay: float) -> None:
    expected = dict(scores)
    for path, around in neighbours.items():
        if path in scores:
            lift = max((scores.get(o, 0.0) * decay ** (d - 1) for o, d in around), default=0.0)
            expected[path] = scores[path] + share * lift
    assert propagate(scores, neighbours, share=share, decay=decay) == expected


@given(st.lists(st.text("abc", min_size=1, max_size=4), unique=True, max_size=12),
       st.integers(0, 4))
def test_neighbours_at_a_place_are_thread_neighbours_of_its_note(thread: list[str],
                                                                 width: int) -> None:
    found = {path: neighbours_at(thread, here, width) for here, path in enumerate(thread)}
    assert list(found) == thread
    assert all(found[path] == thread_neighbours(thread, path, width) for path in thread)


@given(st.lists(st.integers(0, 10_000), unique=True, min_size=1, max_size=30))
def test_natural_order_is_numeric_order(numbers: list[int]) -> None:
    paths = [f"f/Turn {n}.md" for n in numbers]
    assert thread_of(paths, ("f", "", "turn")) == [f"f/Turn {n}.md" for n in sorted(numbers)]


def test_propagate_adds_a_share_of_the_best_neighbour_less_with_distance() -> None:
    scores = {"a": 1.0, "b": 0.0, "c": 0.2}
    neighbours = {"b": [("a", 1), ("c", 1)], "c": [("a", 2)]}
    lifted = propagate(scores, neighbours, share=0.5, decay=0.7)
    assert lifted["a"] == 1.0
    assert lifted["b"] == pytest.approx(0.5)
    assert lifted["c"] == pytest.approx(0.2 + 0.5 * 0.7)


@given(st.dictionaries(st.sampled_from("abcde"), st.floats(0.0, 1.0)), st.floats(0.0, 1.0))
def test_propagate_never_lowers_a_score(scores: dict[str, float], share: float) -> None:
    neighbours = {p: [(q, 1) for q in scores if q != p] for p in scores}
    lifted = propagate(scores, neighbours, share=share, decay=0.7)
    assert all(lifted[p] >= scores[p] for p in scores)


def test_evidence_is_meaning_or_words_on_an_absolute_scale() -> None:
    assert evidence(None, "zorblatt widget", "the zorblatt widget needs oiling") == 1.0
    assert evidence(0.9, "completely different words", "unrelated text") == 1.0
    assert evidence(0.15, "Wie repariere ich mein Fahrrad", "the bike needs a new tyre") == 0.0
    assert 0.0 < evidence(0.4, "ups battery", "nothing") < 0.5
    assert word_evidence("painting sunsets", "she paints a sunset") == 1.0
    assert word_evidence("the of and", "anything") == 0.0


def test_words_found_name_the_places_of_the_query_words_a_text_holds() -> None:
    # content words: painting (0), sunsets (1), harbour (2); function words skipped
    assert words_found("painting the sunsets over a harbour", "a sunset") == ({1}, 3)
    assert words_found("painting sunsets harbour", "harbours painted") == ({0, 2}, 3)
    assert words_found("the of and", "anything") == (set(), 0)


def test_words_of_other_scripts_are_kept_and_not_stemmed() -> None:
    assert content_words("Шифрование данных") == ["шифрование", "данных"]
    assert content_words("Élève naïve paintings") == ["eleve", "naive", "paintings"]
    assert content_words("東京で暗号化") == ["東京", "京で", "で暗", "暗号", "号化"]
    # the English suffix strip leaves Cyrillic alone: "ключи" does not lose its ending
    assert word_evidence("ключи", "ключ") == 0.0
    assert word_evidence("ключи", "ключи от дома") == 1.0


def test_cjk_query_words_are_found_inside_a_sentence() -> None:
    assert word_evidence("東京", "日本語のテキストは東京で書かれました") == 1.0
    assert word_evidence("暗号化の方法", "暗号化の方法について") == 1.0
    assert word_evidence("大阪", "東京で書かれました") == 0.0


_LETTERS = st.text("abco", min_size=2, max_size=5)


@given(st.lists(_LETTERS, min_size=1, max_size=5), st.lists(
    st.one_of(_LETTERS, st.sampled_from([" ", "-", "_", "1", "é", "ab_c", "\n"])), max_size=30))
def test_word_evidence_counts_stems_where_a_longest_first_search_finds_them(
    query_words: list[str], text_parts: list[str],
) -> None:
    """word_evidence finds stems by substring search; it must agree with a search for any of
    the query's stems at a word start, longest first."""
    query, text = " ".join(query_words), "".join(text_parts)
    wanted = frozenset().union(*content_keys(query))
    longest_first = sorted(wanted, key=lambda s: (-len(s), s))
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, longest_first)) + ")")
    expected = len(set(pattern.findall(text.casefold()))) / len(wanted) if wanted else 0.0
    assert word_evidence(query, text) == pytest.approx(expected)
