"""A large note's Markdown parsed and chunked in a child process, so that the work does not
hold the daemon's GIL.

Parsing Markdown is pure Python (~0.7 ms per KB: ~0.25 s at 0.3 MB, seconds for a note of
several MB). On any thread of the daemon it holds the GIL that requests and the small notes'
own sync need, so an edit written beside a large note waited for its parse however the work
was ordered (a parse on a thread of its own beside them was measured: no better). A child
process costs ~0.2 s to start and is used only from PROCESS_BYTES up; meanwhile the sync's
thread lets waiting edits in (`wait`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from vaultmem.core.chunking import Chunk, note_chunks
from vaultmem.vault.notes import Note, RawNote

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

log = logging.getLogger(__name__)
PROCESS_BYTES = 262_144  # below this a parse takes less than starting a process
LOOK_S = 0.05  # how often the waiting thread calls `wait`
CHILD_NICENESS = 10


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
