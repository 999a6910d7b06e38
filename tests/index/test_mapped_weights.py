"""The memory-mapped model weights: found in the process's maps, released after bulk work,
and never released once a page of them was written."""

from __future__ import annotations

import mmap
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from vaultmem.index.mapped_weights import MappedWeights, mappings_of, written_pages

PAGE = os.sysconf("SC_PAGE_SIZE")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the weights' pages are managed on Linux only")


def test_mappings_are_read_from_the_maps_text() -> None:
    maps = (
        "7f29e1200000-7f29e3eb6000 rw-p 00000000 fe:00 16039963   /models/a b/model.weights\n"
        "7f29f0240000-7f29f0300000 rw-p 02cc0000 fe:00 16039963   /models/a b/model.weights\n"
        "7f29f0300000-7f29f0400000 r--p 00000000 fe:00 16039964   /models/a b/model.weights.x\n"
        "7f29f0400000-7f29f0500000 rw-p 00000000 00:00 0\n"
    )
    found = mappings_of(Path("/models/a b/model.weights"), maps)
    assert [(m.start, m.length, m.file_offset) for m in found] == [
        (0x7F29E1200000, 0x7F29E3EB6000 - 0x7F29E1200000, 0),
        (0x7F29F0240000, 0xC0000, 0x2CC0000)]


def test_written_pages_are_present_pages_that_are_not_the_files() -> None:
    present, file_page = 1 << 63, 1 << 61
    entries = np.array([0, present | file_page, present, file_page, present | 7],
                       dtype=np.uint64).tobytes()
    assert written_pages(entries) == 2
    assert written_pages(b"") == 0


def _resident_pages(start: int, length: int) -> int:
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        pagemap.seek(start // PAGE * 8)
        entries = np.frombuffer(pagemap.read(length // PAGE * 8), dtype=np.uint64)
    return int(np.count_nonzero(entries & np.uint64(1 << 63)))


@linux_only
@pytest.mark.timeout(60)
def test_release_unmaps_read_pages_and_keeps_a_written_mapping(tmp_path: Path) -> None:
    data = np.random.default_rng(3).integers(0, 255, 64 * PAGE, dtype=np.uint8).tobytes()
    path = tmp_path / "model.weights"
    path.write_bytes(data)
    with path.open("r+b") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)  # private, writable
    try:
        view = np.frombuffer(mapped, dtype=np.uint8)
        start = view.ctypes.data
        weights = MappedWeights(path)
        weights.settle()
        assert weights.mapped_bytes == len(data)
        assert int(view[::PAGE].sum()) == sum(data[::PAGE])  # every page read
        assert _resident_pages(start, len(data)) == 64
        assert weights.release() == len(data)
        assert _resident_pages(start, len(data)) == 0
        assert bytes(mapped[:]) == data  # read again from the file, unchanged
        mapped[5 * PAGE] = (data[5 * PAGE] + 1) % 256  # a copy-on-write page of our own
        assert weights.release() == 0
        assert mapped[5 * PAGE] == (data[5 * PAGE] + 1) % 256  # kept, not dropped
        assert weights.release() == 0  # and never released again
        del view
    finally:
        mapped.close()


def test_a_file_nobody_maps_has_nothing_to_release(tmp_path: Path) -> None:
    path = tmp_path / "model.weights"
    path.write_bytes(b"\0" * PAGE)
    weights = MappedWeights(path)
    weights.settle()
    assert weights.mapped_bytes == 0 and weights.release() == 0
