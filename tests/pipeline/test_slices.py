"""A large note's pieces are the embedder's own model call: one chunk on ONNX Runtime, its
`texts_per_call` where an embedder says it (OpenVINO: 4); texts are grouped by the embedder's
own lengths where it pads; a sync's slices share one `bulk` block."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from tests.pipeline.test_indexer import CountingStore, write
from vaultmem.config import Settings
from vaultmem.index.base import Vector
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.pipeline.indexer import Indexer
from vaultmem.pipeline.progress import CHANGES, IndexProgress
from vaultmem.pipeline.slices import SLICE_CHUNKS, SlicedEmbedding, bulk_work
from vaultmem.settings_params import indexer_options
from vaultmem.vault.ignore import IgnoreRules


class CallsSeen(FakeEmbedder):
    def __init__(self, texts_per_call: int | None) -> None:
        super().__init__(16)
        if texts_per_call is not None:
            self.texts_per_call = texts_per_call
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls.append(len(texts))
        return super().embed(texts)


@pytest.mark.parametrize(("per_call", "pieces"), [(None, [1] * 19), (1, [1] * 19),
                                                  (4, [4, 4, 4, 4, 3])])
def test_a_large_notes_pieces_are_the_embedders_own_call(per_call: int | None,
                                                         pieces: list[int]) -> None:
    embedder = CallsSeen(per_call)
    progress = IndexProgress()
    texts = [f"chunk {i} " + "word " * i for i in range(19)]
    assert len(texts) > SLICE_CHUNKS
    seen: list[frozenset[str]] = []
    rows = SlicedEmbedding(embedder, progress).embed(
        texts, "Large.md", frozenset({"Large.md"}), seen.append, progress.begin(CHANGES))
    assert embedder.calls == pieces and len(seen) == len(pieces) - 1  # a look between pieces
    np.testing.assert_array_equal(np.stack(rows), FakeEmbedder(16).embed(texts))
    small = CallsSeen(4)
    SlicedEmbedding(small, progress).embed(texts[:SLICE_CHUNKS], "Small.md", frozenset(), None,
                                           progress.begin(CHANGES))
    assert small.calls == [SLICE_CHUNKS]  # a note of one slice: one call, as before


class TokenCounted(CallsSeen):
    """Counts a text's length as its number of "x" (its tokens, say), not its characters."""

    def __init__(self, texts_per_call: int) -> None:
        super().__init__(texts_per_call)
        self.slices: list[list[str]] = []

    def text_lengths(self, texts: Sequence[str]) -> list[int]:
        return [text.count("x") for text in texts]

    def embed(self, texts: Sequence[str]) -> Vector:
        self.slices.append(list(texts))
        return super().embed(texts)


@pytest.mark.parametrize("per_call", [1, 4])
def test_slices_group_texts_by_the_embedders_own_lengths_when_it_pads(per_call: int) -> None:
    # characters and "tokens" disagree: long texts of few tokens, short texts of many
    texts = [("x" * n if n % 2 else "y" * 40 * n + "x" * n) for n in range(1, 17)]
    embedder = TokenCounted(per_call)
    progress = IndexProgress()
    rows = SlicedEmbedding(embedder, progress).embed(texts, None, frozenset(), None,
                                                     progress.begin(CHANGES))
    np.testing.assert_array_equal(np.stack(rows), FakeEmbedder(16).embed(texts))
    first = embedder.slices[0]
    if per_call > 1:  # by "tokens": the 8 texts of most x first
        assert sorted(t.count("x") for t in first) == list(range(9, 17))
    else:  # one text a call pads nothing: by characters, as before
        assert first == sorted(texts, key=len, reverse=True)[:SLICE_CHUNKS]


class BulkSeen(FakeEmbedder):
    """Records the `bulk` blocks open around each embedding."""

    def __init__(self) -> None:
        super().__init__(16)
        self.open = 0
        self.entered = 0
        self.open_at_embed: list[int] = []

    @contextmanager
    def bulk(self) -> Iterator[None]:
        self.open += 1
        self.entered += 1
        try:
            yield
        finally:
            self.open -= 1

    def embed(self, texts: Sequence[str]) -> Vector:
        self.open_at_embed.append(self.open)
        return super().embed(texts)


@pytest.mark.timeout(120)
def test_a_sync_embeds_every_slice_in_one_bulk_block(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for n in range(12):
        write(vault, f"notes/n{n}.md", f"# Note {n}\n\n" + f"Words of note {n}. " * 40)
    embedder = BulkSeen()
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), Catalog(tmp_path / "c.sqlite3"),
                      CountingStore(tmp_path / "lance"), embedder, indexer_options(Settings()))
    indexer.sync()
    assert len(embedder.open_at_embed) > 1 and set(embedder.open_at_embed) == {1}
    assert embedder.entered == 1 and embedder.open == 0  # handed back once, at the end
    assert bulk_work(FakeEmbedder(8)).__enter__() is None  # no block of its own: nothing
