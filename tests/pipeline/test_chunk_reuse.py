"""An edited note keeps the stored vectors of its unchanged chunks: only new or changed chunks
are embedded, and the index afterwards equals one built from scratch from the same notes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tests.pipeline.test_indexer import CountingStore, write
from vaultmem.config import Settings
from vaultmem.index.base import Vector
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.pipeline.indexer import Indexer
from vaultmem.settings_params import indexer_options
from vaultmem.vault.ignore import IgnoreRules

pytestmark = pytest.mark.timeout(120)

BIG = "notes/big.md"
SMALL = "notes/small.md"


class CountingEmbedder(FakeEmbedder):
    """The fake embedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(32)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.texts.extend(texts)
        return super().embed(texts)


def section(n: int, words: str = "about ordinary things") -> str:
    """A section long enough to be a chunk of its own."""
    sentence = f"Section {n} talks {words}; sentence {n} of the large note."
    return f"## Part {n}\n\n" + " ".join([sentence] * 5)


def body(sections: Sequence[str], title: str = "Big") -> str:
    return f"---\ntitle: {title}\n---\n# Big\n\n" + "\n\n".join(sections) + "\n"


SECTIONS = [section(n) for n in range(20)]


class Built:
    def __init__(self, root: Path, vault: Path) -> None:
        self.embedder = CountingEmbedder()
        self.catalog = Catalog(root / "catalog.sqlite3")
        self.store = CountingStore(root / "lance")
        self.indexer = Indexer(vault, IgnoreRules.from_vault(vault), self.catalog, self.store,
                               self.embedder, indexer_options(Settings()))

    def chunks(self) -> list[tuple[str, str, str, list[float]]]:
        stored = self.store.index.stored_chunks([BIG, SMALL])
        return sorted((c.chunk_id, c.heading, c.text, c.vector.tolist()) for c in stored)

    def close(self) -> None:
        self.store.index.close()
        self.catalog.close()


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[Path, Built]]:
    vault = tmp_path / "vault"
    write(vault, BIG, body(SECTIONS))
    write(vault, SMALL, "# Small\n\nA short note.\n")
    index = Built(tmp_path / "edited", vault)
    index.indexer.sync()
    index.embedder.texts.clear()
    yield vault, index
    index.close()


def test_appending_a_section_embeds_only_the_new_chunk(built: tuple[Path, Built]) -> None:
    vault, index = built
    write(vault, BIG, body([*SECTIONS, section(99, "about sourdough starters")]))
    report = index.indexer.sync(paths=[BIG])
    assert report.changed == 1 and report.chunks_embedded == 1
    assert len(index.embedder.texts) == 1 and "sourdough" in index.embedder.texts[0]
    assert len(index.store.index.stored_chunks([BIG])) == len(SECTIONS) + 1


def test_changing_one_section_embeds_only_that_chunk(built: tuple[Path, Built]) -> None:
    vault, index = built
    edited = list(SECTIONS)
    edited[7] = section(7, "about something else entirely")
    write(vault, BIG, body(edited))
    assert index.indexer.sync(paths=[BIG]).chunks_embedded == 1
    assert ["something else entirely" in text for text in index.embedder.texts] == [True]


def test_a_new_title_reembeds_every_chunk_of_the_edited_note(built: tuple[Path, Built]) -> None:
    """The title is part of each chunk's embedding input."""
    vault, index = built
    chunks = len(index.store.index.stored_chunks([BIG]))
    write(vault, BIG, body([*SECTIONS, section(99)], title="Renamed"))
    assert index.indexer.sync(paths=[BIG]).chunks_embedded == chunks + 1


Edit = Callable[[list[str]], list[str]]
EDITS: dict[str, Edit] = {
    "append": lambda s: [*s, section(50, "about new things")],
    "insert in the middle": lambda s: [*s[:5], section(51, "about inserted things"), *s[5:]],
    "delete a section": lambda s: [*s[:3], *s[4:]],
    "rename a heading": lambda s: [*s[:2], s[2].replace("## Part 2", "## Chapter two"), *s[3:]],
    "repeat a section": lambda s: [*s, s[0], s[0]],
    "swap two sections": lambda s: [s[1], s[0], *s[2:]],
    "empty the note": lambda s: [],
}


@pytest.mark.parametrize("name", list(EDITS))
def test_after_edits_the_index_equals_one_built_from_scratch(
    built: tuple[Path, Built], tmp_path: Path, name: str
) -> None:
    vault, index = built
    sections = list(SECTIONS)
    for round_ in range(2):  # the second edit reuses vectors the first one kept
        sections = EDITS[name](sections) if round_ == 0 else [*sections, section(60 + round_)]
        write(vault, BIG, body(sections))
        index.indexer.sync(paths=[BIG])
    fresh = Built(tmp_path / "fresh", vault)
    try:
        fresh.indexer.sync()
        assert index.chunks() == fresh.chunks()
        assert index.catalog.records_for([BIG])[BIG].chunk_count == len(fresh.chunks()) - 1
        if name != "empty the note":  # the two edits embedded far fewer chunks than it holds
            assert len(index.embedder.texts) < len(fresh.embedder.texts) // 2
    finally:
        fresh.close()

