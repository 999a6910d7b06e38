"""A real `python -m vaultmem run` process on a vault and a data dir, for the daemon tests, the
stress suite and the benchmarks.

By default the process runs as the tests want it: the fake embedder, a short debounce and a fast
usage flush (FAST_TEST_SETTINGS), warnings only. A benchmark passes `settings=REAL_MODEL` (the
real model and the daemon's own defaults, as the service units start it), a log file and its own
log level.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vaultmem.api.client import Client

REPO = Path(__file__).resolve().parents[1]
FAST_TEST_SETTINGS = {"VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_DEBOUNCE_MS": "50",
                      "VAULTMEM_FLUSH_INTERVAL_SECONDS": "0.5"}
REAL_MODEL = {"VAULTMEM_EMBEDDING_MODEL": "default", "HF_HUB_OFFLINE": "1",
              "TRANSFORMERS_OFFLINE": "1"}


class DaemonProcess:
    """One daemon process at a time on `vault` and `data`; `env` (VAULTMEM_* and others) goes
    over `settings`. Its output goes to `output` (appended, one file over restarts) or to pipes."""

    def __init__(self, vault: Path, data: Path, *, settings: Mapping[str, str] = FAST_TEST_SETTINGS,
                 output: Path | None = None, log_level: str | None = "warning",
                 client_timeout: float = 30.0, source: Path = REPO, **env: str) -> None:
        self.vault = vault
        self.source = source  # the checkout whose `vaultmem` runs (a benchmark's baseline)
        self.data = data
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")},
            "VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(data),
            "VAULTMEM_CONFIG": str(data.parent / "none.toml"), "VAULTMEM_PORT": "0",
            **settings, **env,
        }
        self.output = output
        self.log_level = log_level  # None: the daemon's own default
        self.client_timeout = client_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: Client | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 60.0) -> Client:
        """Spawn, connect and wait until start-up indexing is done."""
        self.spawn()
        client = self.connect(timeout)
        self.wait_ready(timeout)
        return client

    def spawn(self) -> float:
        """Start the process (stopping a previous one first); the perf_counter() just before."""
        self.stop()
        self.data.mkdir(parents=True, exist_ok=True)
        (self.data / "daemon.json").unlink(missing_ok=True)
        command = [sys.executable, "-m", "vaultmem", "run"]
        if self.log_level is not None:
            command += ["--log-level", self.log_level]
        log = self.output.open("ab") if self.output is not None else None
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, env={**self.env, "PYTHONPATH": str(self.source)}, cwd=self.source,
            stdout=log or subprocess.PIPE,
            stderr=subprocess.STDOUT if log else subprocess.PIPE,
        )
        if log is not None:
            log.close()  # the child holds its own copy
        return started

    def connect(self, timeout: float = 60.0) -> Client:
        """A client once this process has written daemon.json (its socket answers from then)."""
        info = self._wait_for_daemon_file(timeout)
        token = (self.data / "token").read_text(encoding="utf-8").strip()
        self.client = Client(info["url"], token, timeout=self.client_timeout)
        return self.client

    def wait_ready(self, timeout: float = 60.0, model: bool = False) -> dict[str, Any]:
        """The status once start-up indexing is done (and, with `model`, the model loaded)."""
        found: list[dict[str, Any]] = []

        def ready() -> bool:
            status = self.status()
            daemon = status["daemon"]
            done = daemon["indexing"]["last"] is not None and not daemon["indexing"]["running"]
            found[:] = [status]
            return done and (daemon["model_loaded"] or not model)
        wait_until(ready, timeout)
        return found[0]

    def status(self) -> dict[str, Any]:
        assert self.client is not None
        return self.client.call("GET", "/v1/status")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=10)
            print(f"daemon {self.proc.pid} did not stop within {timeout:g} s of signal {sig}; "
                  "killed", file=sys.stderr, flush=True)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self.proc = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def _wait_for_daemon_file(self, timeout: float) -> dict[str, Any]:
        assert self.proc is not None
        path = self.data / "daemon.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {self._tail()}")
            if path.exists():
                try:
                    info: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
                    if info.get("pid") == self.proc.pid:
                        return info
                except json.JSONDecodeError:
                    pass
            time.sleep(0.01)
        raise TimeoutError(f"daemon did not start within {timeout:g} s")

    def _tail(self) -> str:
        """The end of the exited process's output."""
        assert self.proc is not None
        if self.output is not None:
            text = self.output.read_text(encoding="utf-8", errors="replace")
            return f"{self.output} ends with:\n{text[-3000:]}"
        return self.proc.stderr.read().decode() if self.proc.stderr else ""


def wait_until(condition: Callable[[], bool], timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(step)
    raise TimeoutError("condition not met in time")
