"""How the daemon's main thread waits for its stop without waking for nothing.

It is stopped by another thread (`StopFlag.set`: a failed start, `Daemon.stop`) or by SIGTERM
or SIGINT. A Python signal handler runs only when the main thread next executes bytecode, and
a signal may reach any thread: a main thread asleep in a wait would not see it until the wait
timed out (it polled twice a second). `signal_wakeups` has the interpreter's own C-level
handler write each signal's number to a socket (`signal.set_wakeup_fd`) the moment it
arrives, whatever thread it reached; `StopFlag.wait` sleeps on that socket and on its own,
and wakes for nothing else. Neither handler takes a lock (daemon/run.py says why it must not).
"""

from __future__ import annotations

import contextlib
import selectors
import signal
import socket
import threading
from collections.abc import Collection, Iterator

SET = b"\0"  # StopFlag's wake-up byte; never a signal's number


class StopFlag:
    """A `threading.Event` that a thread asleep in `wait` sees at once. Its wake-up socket
    exists only while a thread waits in `wait`, so nothing is left open by a daemon that
    never served."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()  # `_waker` and its sends and close
        self._waker: socket.socket | None = None

    def set(self) -> None:
        with self._lock:
            self._event.set()
            if self._waker is not None:
                with contextlib.suppress(OSError):  # full: a wake-up is pending already
                    self._waker.send(SET)

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, signals: socket.socket | None = None,
             stopping: Collection[int] = ()) -> int:
        """Sleep until the flag is set (0) or one of the `stopping` signal numbers arrives
        on `signals` (the socket of `signal_wakeups`; that number). Other signals' numbers
        are read and slept through."""
        with self._lock:
            if self._event.is_set():
                return 0
            woken, self._waker = _pair()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(woken, selectors.EVENT_READ)
                if signals is not None:
                    selector.register(signals, selectors.EVENT_READ)
                while not self._event.is_set():
                    for key, _ in selector.select():
                        sock = key.fileobj
                        assert isinstance(sock, socket.socket)
                        got = _drain(sock)
                        if sock is signals and (hit := [n for n in got if n in stopping]):
                            return hit[0]
            return 0
        finally:
            with self._lock:
                waker, self._waker = self._waker, None
            woken.close()
            if waker is not None:
                waker.close()


@contextlib.contextmanager
def signal_wakeups() -> Iterator[socket.socket]:
    """Within the block, the number of each signal that has a Python handler is written to
    the socket yielded as it arrives (main thread only, like `signal.signal`)."""
    readable, writable = _pair()
    previous = signal.set_wakeup_fd(writable.fileno(), warn_on_full_buffer=False)
    try:
        yield readable
    finally:
        signal.set_wakeup_fd(previous)  # before the socket closes: its number may be reused
        readable.close()
        writable.close()


def _pair() -> tuple[socket.socket, socket.socket]:
    """A connected pair of non-blocking sockets: (the end read, the end written)."""
    readable, writable = socket.socketpair()
    readable.setblocking(False)
    writable.setblocking(False)
    return readable, writable


def _drain(sock: socket.socket) -> bytes:
    """Every byte waiting on `sock` (without blocking)."""
    got = b""
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while chunk := sock.recv(4096):
            got += chunk
    return got
