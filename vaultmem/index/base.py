"""Value types and the embedder protocol shared by the index modules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

#: Bump when the layout of the stored tables changes; an index with another version is rebuilt.
# 2: aliases join the title in the full-text index; 3: no notes table; 4: full-text words are
# searchable in CJK text (the chunks' `cjk` column of bigrams); 5: a note's title is its file
# name or `title` property, its first heading one of its other names; 6: vaultmem's own sections
# (banners, Related) are not indexed; 7: a note's short textual property values are among its
# other names; 8: the embedded title context keeps only the title's word tokens (no dates,
# numbers or ids); 9: each note's language in the catalog, the chunks' `terms` column (their
# words analysed in that language: stemmed, CJK cut into words) in place of `cjk`
SCHEMA_VERSION: int = 9

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class IndexOptions:
    """How the LanceDB store is maintained (from Settings, which holds the defaults)."""

    optimize_every: int  # writes between automatic compactions (0: never)
    # LanceDB caches entries per table version (manifests, index metadata) and its own limits
    # are 6 GB and 1 GB: unbounded, a daemon grows with every write. The working set is small
    # (the full-text index of 50k chunks is ~8 MB), so these caps keep search fast and RSS flat.
    index_cache_mb: int
    metadata_cache_mb: int


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    #: Identity recorded in the index (known without loading the model).
    name: str

    @property
    def dim(self) -> int:
        """Vector dimension (may load the model)."""
        ...

    def embed(self, texts: Sequence[str]) -> Vector:
        """Shape (len(texts), dim), float32, rows of unit length."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Shape (dim,), float32, unit length."""
        ...


@dataclass(frozen=True)
class NoteRecord:
    """What the index knows about one note file (indexed, skipped or failed)."""

    path: str
    file_hash: str
    body_hash: str
    title: str
    tags: tuple[str, ...]
    # other names: the aliases, the first heading, short property values (never shown)
    aliases: tuple[str, ...]
    links: tuple[str, ...]
    note_id: str
    status: str
    reason: str
    mtime_ns: int
    size: int
    chunk_count: int
    language: str = ""  # core.language_id.note_language of its text ("" unknown)


@dataclass(frozen=True)
class ChunkRecord:
    """One embedded piece of a note; chunk_id is f"{path}#{index}"."""

    chunk_id: str
    path: str
    index: int
    heading: str
    text: str
    vector: Vector
    #: its `terms` column (index/analysis.py's `note_terms` of `text` in its note's language)
    #: when made already (the words pass makes them apart); None: made when it is written
    terms: str | None = None


def note_names(record: NoteRecord) -> tuple[str, ...]:
    """What a user calls a note: its file name (Obsidian's name for it), its title (frontmatter
    `title`, a memory's heading) and its other names (aliases, first heading), each once."""
    return names_of(record.path, record.title, record.aliases)


def names_of(path: str, title: str, aliases: Sequence[str]) -> tuple[str, ...]:
    # The file name's stem as PurePosixPath(path).stem (vault.notes.title_of) gives it, by
    # string slicing: this runs for every candidate of every search, where PurePosixPath
    # measured ~18 µs a call.
    stem = path.rpartition("/")[2]
    stem = stem[: stem.rfind(".")] if "." in stem[1:] else stem
    names = (stem, title, *aliases)
    return tuple(dict.fromkeys(name for name in names if name.strip()))


def searchable_title(record: NoteRecord) -> str:
    """The full-text index's title field: every name of the note."""
    return " | ".join(note_names(record))


def chunk_id_for(path: str, index: int) -> str:
    """The chunk id convention: the note path, '#', the chunk's position in the note."""
    return f"{path}#{index}"
