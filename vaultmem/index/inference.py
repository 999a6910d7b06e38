"""The inference thread: every model call in the process runs on one long-lived thread.

Why one thread: torch's OpenMP workers belong to the thread that calls the model; called from
a new thread per request (the socket's), each call started another worker team, and a daemon
search took ~120 ms instead of ~40 on 2 cores. One thread also keeps concurrent calls from
oversubscribing the cores.

Why priorities: indexing embeds hundreds of chunks; a search waiting behind them would wait
seconds. Bulk work is queued as small pieces (one model batch each) at BULK priority, and a
query embedding, queued at QUERY priority, runs as soon as the piece in progress ends. A large
note's pieces go at LARGE priority (`with at_priority(LARGE): embedder.embed(...)`): any other
note's embedding (an edit let in between its pieces, a save's similarity check) runs before
the large note's pieces still queued, after at most the one in progress.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

from vaultmem.index.base import Vector

T = TypeVar("T")

QUERY = 0
BULK = 1
LARGE = 2
THREAD_NAME = "vaultmem-inference"

_LAST = 1 << 30  # after every queued call
# The priority of the bulk pieces the current thread (context) queues: BULK unless lowered.
_BULK_PRIORITY: ContextVar[int] = ContextVar("vaultmem_bulk_priority", default=BULK)


def _stop() -> None:
    """The marker that ends the thread."""


_Task = tuple[int, int, Callable[..., Any], tuple[Any, ...], "Future[Any]"]


class InferenceThread:
    """Daemon threads running submitted calls, lowest priority number first, then in
    submission order: one, or more once `widen` asks (ONNX Runtime's one-thread calls side by
    side: each call uses one core, and a query still waits for at most one piece). Started on
    the first submission."""

    def __init__(self, name: str = THREAD_NAME) -> None:
        self._name = name
        self._queue: queue.PriorityQueue[_Task] = queue.PriorityQueue()
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._width = 1

    def widen(self, workers: int) -> None:
        """Run up to `workers` calls side by side from now on (never fewer than before)."""
        with self._lock:
            self._width = max(self._width, workers)
            started = bool(self._threads)
        if started:
            self._ensure_started()

    def submit(self, priority: int, function: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._ensure_started()
        self._queue.put((priority, next(self._order), function, args, future))
        return future

    def run(self, priority: int, function: Callable[..., T], *args: Any) -> T:
        """Run on an inference thread (inline if already on one) and wait for the result."""
        if threading.current_thread() in self._threads:
            return function(*args)
        return self.submit(priority, function, *args).result()

    def close(self) -> None:
        """Stop the threads once the queued calls are done (a later submission restarts
        them)."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._queue.put((_LAST, next(self._order), _stop, (), Future()))
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join()

    def _ensure_started(self) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < self._width:
                name = self._name if not self._threads else f"{self._name}-{len(self._threads)}"
                thread = threading.Thread(target=self._work, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while True:
            _, _, function, args, future = self._queue.get()
            if function is _stop:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args)
            except BaseException as exc:  # handed to the caller, never lost
                future.set_exception(exc)
            else:
                future.set_result(result)


_SHARED: list[InferenceThread] = []
_SHARED_LOCK = threading.Lock()


def shared() -> InferenceThread:
    """The process's inference thread (one for every embedder, as the model is shared too)."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(InferenceThread())
        return _SHARED[0]


@contextmanager
def at_priority(priority: int) -> Iterator[None]:
    """Within the block, this thread's bulk embeddings are queued at `priority`."""
    token = _BULK_PRIORITY.set(priority)
    try:
        yield
    finally:
        _BULK_PRIORITY.reset(token)


def embed_in_pieces(texts: Sequence[Any], encode: Callable[..., Vector], batch_size: int,
                    dim: int, *args: Any, lengths: Sequence[int] | None = None) -> Vector:
    """`encode(piece, *args)` over `texts`, longest first (less padding: by `lengths`, the
    texts' token counts, if given, else by characters), one queued piece per model batch (at
    BULK priority, or the one `at_priority` set) so that a query embedding can run between two
    pieces; rows in the order of `texts`."""
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    sizes = lengths if lengths is not None else [len(text) for text in texts]
    order = sorted(range(len(texts)), key=lambda i: -sizes[i])
    thread, priority = shared(), _BULK_PRIORITY.get()
    pieces = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    futures = [thread.submit(priority, encode, [texts[i] for i in piece], *args)
               for piece in pieces]
    out = np.empty((len(texts), dim), dtype=np.float32)
    for piece, future in zip(pieces, futures, strict=True):
        out[piece] = future.result()
    return out
