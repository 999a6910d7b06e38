"""The model's memory-mapped weights, kept resident only where they are read (Linux; elsewhere
these do nothing).

ONNX Runtime maps the weights file (onnx_export.py) instead of reading it onto the heap. The
matrices it copies into its own packed form at load; what it reads from the mapping as it runs
is the word-embedding table (47 MB of all-MiniLM-L6-v2's 90), one row per token. Three things
keep that table's resident pages to the rows the daemon uses:

* no read-ahead on the mapping (MADV_RANDOM): a row's fault reads its page, not its neighbours;
* at load, the mapped pages leave the page cache (POSIX_FADV_DONTNEED; clean pages, read again
  on demand). A file just written or hashed sits there in large folios, and one fault mapped a
  whole folio: a query of six words made 8 MB resident, thirty queries the whole table;
* after bulk embedding, the mapping's pages are unmapped (MADV_DONTNEED): indexing reads most of
  the vocabulary, a search a dozen rows. The pages stay in the page cache, which the system
  reclaims as it needs, and the next row a query reads comes back in a minor fault.

MADV_DONTNEED on a private mapping also drops pages the process wrote. ONNX Runtime maps the
file writable (copy-on-write) but never writes an initializer; still, a page found written
(`/proc/self/pagemap`: present, not a file page) stops the release of that mapping for good.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vaultmem.index.libc import glibc

log = logging.getLogger("vaultmem.index.mapped_weights")

_MADV_RANDOM = 1  # from the kernel's mman headers, the same on every Linux architecture
_MADV_DONTNEED = 4
_PRESENT = 1 << 63  # /proc/<pid>/pagemap entry bits
_FILE_PAGE = 1 << 61
_ENTRY = 8


@dataclass
class Mapping:
    start: int
    length: int
    file_offset: int
    releasable: bool = True


def mappings_of(path: Path, maps: str) -> list[Mapping]:
    """The mappings of `path` in a /proc/<pid>/maps text."""
    wanted = str(path)
    found = []
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] == wanted:
            start, end = (int(part, 16) for part in fields[0].split("-"))
            found.append(Mapping(start, end - start, int(fields[2], 16)))
    return found


def written_pages(entries: bytes) -> int:
    """How many of these pagemap entries are pages present but not the file's (written)."""
    pages = np.frombuffer(entries, dtype=np.uint64, count=len(entries) // _ENTRY)
    written = (pages & np.uint64(_PRESENT | _FILE_PAGE)) == np.uint64(_PRESENT)
    return int(np.count_nonzero(written))


class MappedWeights:
    """The process's mappings of one weights file, found once the session has mapped it."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self._mappings: list[Mapping] = []
        self._page = os.sysconf("SC_PAGE_SIZE")

    @property
    def mapped_bytes(self) -> int:
        return sum(m.length for m in self._mappings)

    def settle(self) -> None:
        """At load: find the mappings, turn off their read-ahead and drop their pages from
        the page cache."""
        libc = glibc()
        if libc is None:
            return
        try:
            self._mappings = mappings_of(self.path, Path("/proc/self/maps").read_text())
            descriptor = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            log.debug("the weights' mappings are left as they are: %s", exc)
            self._mappings = []
            return
        try:
            for mapping in self._mappings:
                libc.madvise(mapping.start, mapping.length, _MADV_RANDOM)
                os.posix_fadvise(descriptor, mapping.file_offset, mapping.length,
                                 os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)

    def release(self) -> int:
        """Unmap the resident pages (they stay in the page cache); returns the bytes of the
        mappings released."""
        libc = glibc()
        if libc is None or not self._mappings:
            return 0
        released, page = 0, self._page
        try:
            with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
                for mapping in self._mappings:
                    if not mapping.releasable:
                        continue
                    pagemap.seek(mapping.start // page * _ENTRY)
                    if written_pages(pagemap.read(mapping.length // page * _ENTRY)):
                        mapping.releasable = False
                        log.warning("a page of %s was written: its mapping is kept", self.path)
                        continue
                    if libc.madvise(mapping.start, mapping.length, _MADV_DONTNEED) == 0:
                        released += mapping.length
        except OSError as exc:
            log.debug("the weights' pages are kept: %s", exc)
        return released
