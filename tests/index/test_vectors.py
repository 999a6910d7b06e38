"""VectorMatrix: exact top-k against a brute-force reference, tombstones and compaction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.index.vectors import VectorMatrix, normalise_rows

DIM = 6


def _unit_rows(rng: np.random.Generator, count: int) -> np.ndarray:
    return normalise_rows(rng.standard_normal((count, DIM)).astype(np.float32))


def _add_note(matrix: VectorMatrix, path: str, vectors: np.ndarray) -> None:
    count = len(vectors)
    matrix.add(
        [f"{path}#{i}" for i in range(count)],
        [path] * count,
        [f"text of {path} {i}" for i in range(count)],
        vectors,
    )


# Each operation: ("add", note number, chunk count) or ("remove", note number).
_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 15), st.integers(1, 4)),
        st.tuples(st.just("remove"), st.integers(0, 15), st.just(0)),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    operations=_operations,
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 12),
    filtered=st.booleans(),
)
def test_top_k_matches_brute_force(
    operations: list[tuple[str, int, int]], seed: int, k: int, filtered: bool
) -> None:
    rng = np.random.default_rng(seed)
    matrix = VectorMatrix(DIM)
    reference: dict[str, np.ndarray] = {}
    for action, number, count in operations:
        path = f"n{number}.md"
        if action == "add":
            matrix.remove_paths([path])
            reference[path] = _unit_rows(rng, count)
            _add_note(matrix, path, reference[path])
        else:
            matrix.remove_paths([path])
            reference.pop(path, None)
        if rng.random() < 0.2:
            matrix.compact()
    allowed = {p for p in reference if rng.random() < 0.5} if filtered else None
    query = rng.standard_normal(DIM).astype(np.float32)
    unit_query = query / np.linalg.norm(query)
    expected = sorted(
        (
            (float(vector @ unit_query), f"{path}#{i}")
            for path, vectors in reference.items()
            if allowed is None or path in allowed
            for i, vector in enumerate(vectors)
        ),
        reverse=True,
    )[:k]
    hits = matrix.search(query, k, allowed)
    assert len(matrix) == sum(len(v) for v in reference.values())
    assert [hit.chunk_id for hit in hits] == [chunk_id for _, chunk_id in expected]
    for hit, (score, _) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, abs=1e-5)
        assert hit.path == hit.chunk_id.split("#")[0]
        assert hit.text == f"text of {hit.path} {hit.chunk_id.split('#')[1]}"


def test_removing_many_rows_compacts() -> None:
    rng = np.random.default_rng(1)
    matrix = VectorMatrix(DIM)
    for i in range(3000):
        _add_note(matrix, f"n{i}.md", _unit_rows(rng, 1))
    matrix.remove_paths(f"n{i}.md" for i in range(1500))
    assert len(matrix) == 1500
    assert matrix._dead == 0  # compacted: more than a quarter of the rows were dead
    assert all(hit.path >= "n1500.md" for hit in matrix.search(rng.standard_normal(DIM), 50))


def test_note_vectors_are_normalised_means_and_related_excludes_self() -> None:
    matrix = VectorMatrix(3)
    _add_note(matrix, "a.md", np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32))
    _add_note(matrix, "b.md", np.array([[1, 0.1, 0]], dtype=np.float32))
    _add_note(matrix, "c.md", np.array([[0, 0, 1]], dtype=np.float32))
    vectors = matrix.note_vectors()
    np.testing.assert_allclose(vectors["a.md"], [2**-0.5, 2**-0.5, 0], rtol=1e-6)
    related = matrix.related("b.md", 5)
    assert [path for path, _ in related] == ["a.md", "c.md"]
    assert related[1][1] == pytest.approx(0.0, abs=1e-6)
    matrix.remove_paths(["a.md"])
    assert set(matrix.note_vectors()) == {"b.md", "c.md"}
    assert [path for path, _ in matrix.related("b.md", 5)] == ["c.md"]


def test_search_edge_cases() -> None:
    matrix = VectorMatrix(DIM)
    query = np.ones(DIM, dtype=np.float32)
    assert matrix.search(query, 5) == []
    _add_note(matrix, "a.md", _unit_rows(np.random.default_rng(0), 2))
    assert matrix.search(query, 0) == []
    assert len(matrix.search(query, 10)) == 2
    assert matrix.search(query, 10, paths=["missing.md"]) == []
    with pytest.raises(ValueError):
        matrix.add(["x#0"], ["x"], ["t"], np.ones((1, DIM + 1), dtype=np.float32))


@pytest.mark.parametrize("share", [0.9, 0.3, 0.05, 0.01])
def test_broad_filters_walk_the_ranking_and_find_what_gathering_rows_finds(
    share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    matrix = VectorMatrix(DIM)
    for i in range(400):
        _add_note(matrix, f"n{i}.md", _unit_rows(rng, 1 + i % 3))
    matrix.remove_paths([f"n{i}.md" for i in range(0, 400, 7)])  # some tombstones
    allowed = {f"n{i}.md" for i in range(400) if rng.random() < share}
    for k in (1, 10, 50, 2000):
        query = rng.standard_normal(DIM).astype(np.float32)
        monkeypatch.setattr("vaultmem.index.vectors.BROAD_FILTER", 0)  # gather rows
        gathered = matrix.search(query, k, allowed)
        monkeypatch.setattr("vaultmem.index.vectors.BROAD_FILTER", 10**9)  # walk the ranking
        walked = matrix.search(query, k, allowed)
        assert [h.chunk_id for h in walked] == [h.chunk_id for h in gathered]
        # float32 dot products over a subset or the whole matrix may differ in the last bits
        # (BLAS blocks them differently): a cosine near 0 differs by ~1e-8, beyond a relative bound
        assert [h.score for h in walked] == pytest.approx([h.score for h in gathered], abs=1e-6)
        assert all(hit.path in allowed for hit in walked)


def test_chunks_of_keeps_each_rows_place_through_compaction() -> None:
    matrix = VectorMatrix(DIM)
    rng = np.random.default_rng(3)
    for n in range(1100):  # removing most of them compacts the matrix
        path = f"n{n}.md"
        vectors = _unit_rows(rng, 2)
        matrix.add([f"{path}#0", f"{path}#1"], [path, path], ["a", "b"], vectors,
                   [(0, "Intro"), (1, f"Part {n}")])
    kept = matrix.chunks_of(["n1099.md"])
    matrix.remove_paths(f"n{n}.md" for n in range(1000))
    assert len(matrix) == 200
    assert len(matrix._ids) < 2200  # compacted at least once: rows were copied
    again = matrix.chunks_of(["n1099.md"])
    assert [row[:5] for row in again] == [row[:5] for row in kept] == [
        ("n1099.md#0", "n1099.md", 0, "Intro", "a"),
        ("n1099.md#1", "n1099.md", 1, "Part 1099", "b")]
    assert all(np.array_equal(a[5], b[5]) for a, b in zip(again, kept, strict=True))
    assert matrix.chunks_of(["n5.md"]) == []
    _add_note(matrix, "bare.md", _unit_rows(rng, 1))  # no places given
    with pytest.raises(ValueError, match="without its place"):
        matrix.chunks_of(["bare.md"])


def test_rows_are_found_by_row_id_while_known_and_alive() -> None:
    matrix = VectorMatrix(DIM)
    rng = np.random.default_rng(4)
    for n in range(1300):
        path = f"n{n}.md"
        matrix.add([f"{path}#0"], [path], [f"text {n}"], _unit_rows(rng, 1), row_ids=[7 * n])
    matrix.add(["new.md#0"], ["new.md"], ["new"], _unit_rows(rng, 1))  # written: id not known
    hits = matrix.hits_by_row_id([7 * 1099, 0], [2.5, 1.0])
    assert hits is not None
    assert [(h.chunk_id, h.path, h.text, h.score) for h in hits] == [
        ("n1099.md#0", "n1099.md", "text 1099", 2.5), ("n0.md#0", "n0.md", "text 0", 1.0)]
    assert matrix.hits_by_row_id([7 * 5, 123456], [1.0, 1.0]) is None  # an unknown id
    matrix.remove_paths(f"n{n}.md" for n in range(1100))  # compacts: rows move
    assert len(matrix._ids) == 201
    assert matrix.hits_by_row_id([7 * 5], [1.0]) is None  # a removed row
    moved = matrix.hits_by_row_id([7 * 1250], [1.0])
    assert moved is not None and moved[0].text == "text 1250"
    # an optimise gives every row a new id: the old ones are forgotten, the new row learns one
    matrix.set_row_ids([1, 2], ["new.md#0", "n1250.md#0"], ["new.md", "n1250.md"])
    assert matrix.hits_by_row_id([7 * 1250], [1.0]) is None
    found = matrix.hits_by_row_id([1, 2], [1.0, 0.5])
    assert found is not None and [h.chunk_id for h in found] == ["new.md#0", "n1250.md#0"]


def test_zero_rows_are_left_unwritten_in_the_zeroed_matrix() -> None:
    """A zero vector (a first index's words pass) is not written: the matrix is made zeroed,
    and the pages never written take no memory."""
    from vaultmem.index.vectors import _write_rows

    matrix = np.full((5, 3), np.nan, dtype=np.float32)
    rows = np.array([[0, 0, 0], [1, 2, 3], [0, 0, 0], [0, 0.5, 0]], dtype=np.float32)
    _write_rows(matrix, 1, rows)
    assert np.isnan(matrix[[0, 1, 3]]).all()
    assert matrix[2].tolist() == [1, 2, 3] and matrix[4].tolist() == [0, 0.5, 0]


def test_zero_rows_grow_and_compact_like_any_other() -> None:
    """Notes added with zero vectors, then given theirs (words first, then vectors), across the
    matrix's growth and compactions: searches and stored vectors as a plain reference has
    them."""
    rng = np.random.default_rng(7)
    matrix = VectorMatrix(DIM)
    reference: dict[str, np.ndarray] = {}
    for i in range(2500):
        reference[f"n{i}.md"] = np.zeros((1 + i % 3, DIM), dtype=np.float32)
        _add_note(matrix, f"n{i}.md", reference[f"n{i}.md"])
    for i in range(0, 2500, 2):  # half of them get their vectors, some rows still zero
        path = f"n{i}.md"
        vectors = _unit_rows(rng, 1 + i % 3)
        vectors[0] *= i % 5 != 0
        matrix.remove_paths([path])
        reference[path] = vectors
        _add_note(matrix, path, vectors)
    assert matrix._vectors.shape[0] >= len(matrix._ids) > 1024  # grown, compacted on the way
    query = rng.standard_normal(DIM).astype(np.float32)
    unit = query / np.linalg.norm(query)
    scores = {f"{p}#{n}": float(v @ unit) for p, vs in reference.items() for n, v in enumerate(vs)}
    hits = matrix.search(query, 40)
    assert [h.score for h in hits] == pytest.approx(sorted(scores.values(), reverse=True)[:40],
                                                    abs=1e-5)
    assert all(scores[h.chunk_id] == pytest.approx(h.score, abs=1e-5) for h in hits)
    with_place = VectorMatrix(DIM)
    with_place.add(["a#0", "a#1"], ["a", "a"], ["x", "y"], np.array(
        [np.zeros(DIM), np.ones(DIM)], dtype=np.float32), [(0, ""), (1, "")])
    with_place.compact()
    stored = with_place.chunks_of(["a"])
    assert [row[5].tolist() for row in stored] == [[0.0] * DIM, [1.0] * DIM]
    matrix.compact()
    assert len(matrix) == sum(len(v) for v in reference.values())
    assert [h.chunk_id for h in matrix.search(query, 40)] == [h.chunk_id for h in hits]
