"""A large note parsed in a child process (vault/parse_apart.py)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os

import pytest

from vaultmem.core.chunking import note_chunks
from vaultmem.errors import NoteError, Stopping
from vaultmem.vault.notes import RawNote
from vaultmem.vault.parse_apart import CHILD_NICENESS, PROCESS_BYTES, ApartMap, parse_apart

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


def _words(raw: RawNote) -> tuple[str, str, int]:
    """A note's title, as a child and the caller compute it, with the process that did."""
    return raw.path, raw.parse().title, os.getpid()


def _dies_in_a_child(item: tuple[int, int]) -> int:
    """Ends the child process it runs in at item 5 (its parent's pid is item[1])."""
    number, parent = item
    if number == 5 and os.getpid() != parent:
        os._exit(3)
    return number


def raws(count: int) -> list[RawNote]:
    return [RawNote(f"n{n}.md", f"---\ntitle: Note {n}\n---\n# H\n\nText {n}.\n".encode(), n,
                    False) for n in range(count)]


def test_many_notes_are_worked_through_in_child_processes_in_their_order() -> None:
    notes = raws(23)
    with ApartMap(_words, notes, processes=2, group=4, apart_from=10) as done:
        results = list(done)
    assert [(path, title) for path, title, _ in results] == [
        (raw.path, f"Note {n}") for n, raw in enumerate(notes)]
    assert os.getpid() not in {pid for _, _, pid in results}  # none here
    assert not multiprocessing.active_children()


def test_few_notes_are_worked_through_here() -> None:
    with ApartMap(_words, raws(3), processes=2, apart_from=10) as done:
        assert not multiprocessing.active_children()
        assert {pid for _, _, pid in done} == {os.getpid()}


def test_a_child_that_dies_leaves_the_rest_to_this_process_each_item_once() -> None:
    items = [(n, os.getpid()) for n in range(12)]
    with ApartMap(_dies_in_a_child, items, processes=1, group=2, apart_from=0) as done:
        assert list(done) == list(range(12))
    assert not multiprocessing.active_children()


def test_leaving_early_ends_the_children() -> None:
    with ApartMap(_words, raws(200), processes=2, group=2, apart_from=0) as done:
        assert next(iter(done))[0] == "n0.md"
    assert not multiprocessing.active_children()


def test_the_children_work_ahead_of_the_caller_by_a_few_groups_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A caller slower than the children (the daemon writing) does not gather every result."""
    monkeypatch.setattr("vaultmem.vault.parse_apart.AHEAD_GROUPS", 2)
    with ApartMap(_words, raws(60), processes=1, group=3, apart_from=0) as done:
        results = iter(done)
        next(results)
        assert len(done._futures) <= 2  # the rest not handed over yet
        assert [path for path, _, _ in results] == [f"n{n}.md" for n in range(1, 60)]
