"""A large note's Markdown parsed and chunked in a child process, so that the work does not
hold the daemon's GIL.

Parsing Markdown is pure Python (~0.7 ms per KB: ~0.25 s at 0.3 MB, seconds for a note of
several MB). On any thread of the daemon it holds the GIL that requests and the small notes'
own sync need, so an edit written beside a large note waited for its parse however the work
was ordered (a parse on a thread of its own beside them was measured: no better). A child
process costs ~0.2 s to start and is used only from PROCESS_BYTES up; meanwhile the sync's
thread lets waiting edits in (`wait`).

`ApartMap` runs one function over many notes in a few child processes (a first index's words
pass: every note of the vault parsed, chunked and judged): the daemon's GIL stays free for the
searches meanwhile, and on two cores the notes are parsed side by side while the daemon writes
the ones already done.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from types import TracebackType
from typing import TYPE_CHECKING, Generic, TypeVar

from vaultmem.core.chunking import Chunk, note_chunks
from vaultmem.vault.notes import Note, RawNote

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

log = logging.getLogger(__name__)
PROCESS_BYTES = 262_144  # below this a parse takes less than starting a process
LOOK_S = 0.05  # how often the waiting thread calls `wait`
CHILD_NICENESS = 10
#: Notes handed to a child at a time by `ApartMap` (~0.2 s of parsing at ~3 ms a note).
GROUP_NOTES = 64
#: Groups a child may have done or under way before the caller takes them.
AHEAD_GROUPS = 8
#: Fewer notes than this are worked through here: starting a child (~0.3 s, its imports) costs
#: more than it saves.
APART_NOTES = 256

T = TypeVar("T")
R = TypeVar("R")


Parsed = tuple[Note, list[Chunk]]


def parse_apart(
    raw: RawNote, wait: Callable[[], None], *, max_chars: int, min_chars: int,
    look_s: float = LOOK_S,
) -> Parsed:
    """`raw.parse()` and its `note_chunks`, in a child process for a note of PROCESS_BYTES or
    more, calling `wait()` every `look_s` until it answers (an exception from `wait` ends the
    child). Done here when no child can be started or one ends without an answer."""
    work = (raw, max_chars, min_chars)
    if len(raw.raw) < PROCESS_BYTES:
        return _parse_and_chunk(*work)
    import multiprocessing  # here: most notes never need it, the daemon's start neither

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_parse_and_send, args=(work, send), name="vaultmem-parse",
                            daemon=True)
    try:
        child.start()
    except OSError as exc:
        log.warning("cannot start a process to parse %s (%s): parsed in the daemon", raw.path, exc)
        receive.close()
        return _parse_and_chunk(*work)
    finally:
        send.close()
    try:
        answer = _answer(receive, child, wait, look_s)
    finally:
        receive.close()
        if child.is_alive():
            child.terminate()
        child.join()
    if answer is None:
        log.warning("the process parsing %s ended without an answer (exit code %s): parsed in "
                    "the daemon", raw.path, child.exitcode)
        return _parse_and_chunk(*work)
    parsed, error = answer
    if error is not None:
        raise error
    assert parsed is not None
    return parsed


def _answer(
    receive: Connection, child: BaseProcess, wait: Callable[[], None],
    look_s: float,
) -> tuple[Parsed | None, BaseException | None] | None:
    while not receive.poll(look_s):
        if not child.is_alive() and not receive.poll():
            return None
        wait()
    try:
        answer: tuple[Parsed | None, BaseException | None] = receive.recv()
    except (EOFError, OSError):
        return None
    return answer


def _parse_and_chunk(raw: RawNote, max_chars: int, min_chars: int) -> Parsed:
    note = raw.parse()
    return note, note_chunks(note.body, note.title, max_chars=max_chars, min_chars=min_chars)


def _parse_and_send(work: tuple[RawNote, int, int], send: Connection) -> None:
    """The child's work, at a lower CPU priority: on a machine with few cores the edits the
    daemon indexes meanwhile go first."""
    with contextlib.suppress(AttributeError, OSError):  # no nice() here: run as it is
        os.nice(CHILD_NICENESS)
    try:
        send.send((_parse_and_chunk(*work), None))
    except Exception as exc:  # the parent raises it where the parse was asked for
        send.send((None, exc))
    finally:
        send.close()


class ApartMap(Generic[T, R]):
    """`work` over `items` in `processes` child processes (spawned, none forked from the
    daemon's threads), the results in the items' order. Used as a context manager: the
    children start on entering (so the caller does other work while they start and parse) and
    end on leaving, whatever was taken. `work` must be picklable (a module's function, or a
    partial of one) and pure: it raises nothing it does not mean the caller to see. Done here
    when there are few items, no child can be started or one dies (each item at most once)."""

    def __init__(self, work: Callable[[T], R], items: Sequence[T], *, processes: int,
                 group: int = GROUP_NOTES, apart_from: int | None = None) -> None:
        self._work = work
        self._items = items
        self._group = group
        fewest = APART_NOTES if apart_from is None else apart_from
        self._processes = processes if len(items) >= fewest else 0
        self._pool: ProcessPoolExecutor | None = None
        self._futures: deque[Future[list[R]]] = deque()
        self._submitted = 0  # groups handed to the children

    def __enter__(self) -> ApartMap[T, R]:
        if self._processes > 0:
            # here: most syncs never need them, the daemon's start neither
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            try:
                self._pool = ProcessPoolExecutor(
                    self._processes, mp_context=multiprocessing.get_context("spawn"))
                for _ in range(AHEAD_GROUPS * self._processes):
                    self._submit_next()
            except OSError as exc:
                log.warning("cannot start processes to parse %d notes (%s): parsed in the "
                            "daemon", len(self._items), exc)
                self._close()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._close()

    def __iter__(self) -> Iterator[R]:
        if self._pool is None:
            yield from map(self._work, self._items)
            return
        from concurrent.futures.process import BrokenProcessPool

        taken = 0
        while self._futures:
            future = self._futures.popleft()  # what is taken is not held here
            try:
                done = future.result()
            except BrokenProcessPool:
                log.warning("a process parsing notes ended without an answer: the %d notes "
                            "left parsed in the daemon", len(self._items) - taken)
                self._close()
                yield from map(self._work, self._items[taken:])
                return
            taken += len(done)
            self._submit_next()
            yield from done

    def _submit_next(self) -> None:
        """The next group to the children, if any is left (AHEAD_GROUPS a child at most wait
        to be taken: a writer slower than the children does not gather all the results)."""
        start = self._submitted * self._group
        if self._pool is None or start >= len(self._items):
            return
        self._futures.append(self._pool.submit(_each, self._work,
                                               list(self._items[start:start + self._group])))
        self._submitted += 1

    def _close(self) -> None:
        """End the children: the groups not started are dropped, one under way ends first."""
        pool, self._pool = self._pool, None
        self._futures.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _each(work: Callable[[T], R], items: list[T]) -> list[R]:
    """A child's share: `work` on each item, in order."""
    return [work(item) for item in items]
