"""The daemon start's first answers: the index opened and the model loaded before the rest.

The first search needs the index open and the model loaded; the start-up reconcile needs
neither at first (it compares the vault with the catalog). All three are mostly Python
holding the interpreter lock, so on an index with chunks to search the reconcile waits:
run beside them, it delayed the first answer by ~0.2-0.4 s (docs/benchmarks.md, "A light
daemon"). So do the watcher's and the scheduler's start (and their imports), until the
searches sent meanwhile are answered: nothing is missed, the reconcile after them finds
what changed before the watcher ran. An empty index (a first start, a rebuild) has
nothing to answer from: its reconcile, the first index, starts at once, and answers say
how far it got. The order itself is the daemon's (`Daemon._startup`, daemon/run.py).
"""

from __future__ import annotations

import logging
import threading
import time

from vaultmem.api.server import ApiServer
from vaultmem.app import DaemonParts
from vaultmem.daemon.stop_flag import StopFlag

log = logging.getLogger(__name__)
MODEL_WAIT_S = 5.0  # the start-up reconcile waits this long at most for the model
FIRST_ANSWERS_WAIT_S = 2.0  # and this long at most for the calls in flight once it is loaded


class FirstAnswers:
    """What the start-up thread does before the watcher, the scheduler and the reconcile;
    each wait ends at once when the daemon stops (`stop`)."""

    def __init__(self, parts: DaemonParts, stop: StopFlag) -> None:
        self.parts = parts
        self._stop = stop
        self._model_loaded = threading.Event()

    def load_model(self) -> None:
        """Load the model now, not on the first search (on the inference thread, while the
        start-up thread opens the index: ~0.3 s for the ONNX runtime, several for torch)."""
        try:
            if not self._stop.is_set():
                _ = self.parts.embedder.dim
        except Exception:
            log.exception("loading the embedding model failed")
        finally:
            self._model_loaded.set()

    def open_index(self) -> bool:
        """Open the index and load what searches read (importing LanceDB is most of it);
        whether it has chunks to search. A failure is left to the reconcile, which meets it
        again and reports it."""
        try:
            return self.parts.index().warm() > 0
        except Exception as exc:
            log.debug("opening the index at start failed: %s", exc)
            return False

    def wait_for_model(self) -> bool:
        """Whether the model was loaded within MODEL_WAIT_S (torch takes seconds, and a first
        start exports the ONNX file: minutes); False at once if the daemon stops meanwhile."""
        deadline = time.monotonic() + MODEL_WAIT_S
        while not self._model_loaded.wait(0.1):
            if self._stop.is_set() or time.monotonic() > deadline:
                return False
        return True

    def let_go(self, server: ApiServer | None) -> None:
        """Wait (FIRST_ANSWERS_WAIT_S at most) until no call is in flight: a search sent
        while the daemon started waited for the index and the model, and is answered sooner
        without the watcher's start, the scheduler's and the reconcile beside it."""
        if server is not None and not self._stop.is_set():
            server.calls.wait_idle(FIRST_ANSWERS_WAIT_S)
