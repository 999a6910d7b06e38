"""A large note parsed in a child process (vault/parse_apart.py)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os

import pytest

from vaultmem.core.chunking import note_chunks
from vaultmem.errors import NoteError, Stopping
from vaultmem.vault.notes import RawNote
from vaultmem.vault.parse_apart import CHILD_NICENESS, PROCESS_BYTES, parse_apart

SIZES = {"max_chars": 1000, "min_chars": 200}

pytestmark = pytest.mark.timeout(60)


def large_raw(path: str = "Inbox/Large.md") -> RawNote:
    section = "## Part {n}\n\nSome text with a [[Link {n}]] and a #tag{n} in it.\n\n"
    body = "".join(section.format(n=n) for n in range(PROCESS_BYTES // 40))
    raw = f"---\ntitle: A large note\naliases: [Big]\n---\n# Large\n\n{body}".encode()
    assert len(raw) >= PROCESS_BYTES
    return RawNote(path, raw, 123, False)


def test_a_large_note_is_parsed_and_chunked_apart_as_here_while_wait_is_called() -> None:
    raw = large_raw()
    waits: list[int] = []
    note, chunks = parse_apart(raw, lambda: waits.append(1), look_s=0.01, **SIZES)
    assert note == raw.parse()
    assert chunks == note_chunks(note.body, note.title, **SIZES)
    assert waits  # the parse ran elsewhere: this thread was free meanwhile
    assert not multiprocessing.active_children()


def test_a_smaller_note_is_parsed_here() -> None:
    raw = RawNote("small.md", b"# Small\n\nText.\n", 0, False)
    waits: list[int] = []
    note = raw.parse()
    assert parse_apart(raw, lambda: waits.append(1), **SIZES) == (
        note, note_chunks(note.body, note.title, **SIZES))
    assert not waits


def test_the_childs_error_is_raised_here() -> None:
    raw = RawNote("binary.md", b"\x00" * PROCESS_BYTES, 0, False)
    with pytest.raises(NoteError, match="binary"):
        parse_apart(raw, lambda: None, **SIZES)
    assert not multiprocessing.active_children()


def test_an_error_from_wait_ends_the_child() -> None:
    def stop() -> None:
        raise Stopping("stopping")

    with pytest.raises(Stopping):
        parse_apart(large_raw(), stop, look_s=0.001, **SIZES)
    assert not multiprocessing.active_children()


def test_the_child_runs_at_a_lower_cpu_priority_than_the_daemon() -> None:
    """Beside it, the daemon's own work (an edit's embedding) goes first on a busy machine."""
    seen: list[int] = []

    def look() -> None:
        for child in multiprocessing.active_children():
            with contextlib.suppress(ProcessLookupError):  # it may just have ended
                seen.append(os.getpriority(os.PRIO_PROCESS, child.pid or 0))

    parse_apart(large_raw(), look, look_s=0.005, **SIZES)
    assert max(seen) >= os.getpriority(os.PRIO_PROCESS, 0) + CHILD_NICENESS
