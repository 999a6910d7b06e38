"""Start and stop a real `vaultmem run` process on a temp vault, for integration tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultmem.api.client import Client

REPO = Path(__file__).resolve().parents[2]


class DaemonProcess:
    def __init__(self, vault: Path, data: Path, **env: str) -> None:
        self.vault = vault
        self.data = data
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")},
            "VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(data),
            "VAULTMEM_CONFIG": str(data.parent / "none.toml"),
            "VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_PORT": "0",
            "VAULTMEM_DEBOUNCE_MS": "50", "VAULTMEM_FLUSH_INTERVAL_SECONDS": "0.5",
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: Client | None = None
        self.output: Path | None = None  # a log file for the daemon's output (else pipes)

    def start(self, timeout: float = 60.0) -> Client:
        (self.data / "daemon.json").unlink(missing_ok=True)
        log = self.output.open("ab") if self.output is not None else None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vaultmem", "run", "--log-level", "warning"],
            env=self.env, cwd=REPO, stdout=log or subprocess.PIPE,
            stderr=subprocess.STDOUT if log else subprocess.PIPE,
        )
        if log is not None:
            log.close()  # the child holds its own copy
        info = self._wait_for_daemon_file(timeout)
        token = (self.data / "token").read_text(encoding="utf-8").strip()
        self.client = Client(info["url"], token, timeout=30)
        wait_until(lambda: not self.status()["daemon"]["indexing"]["running"]
                   and self.status()["daemon"]["indexing"]["last"] is not None, timeout)
        return self.client

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
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {err}")
            if path.exists():
                try:
                    info: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
                    if info.get("pid") == self.proc.pid:
                        return info
                except json.JSONDecodeError:
                    pass
            time.sleep(0.05)
        raise TimeoutError("daemon did not start")


def wait_until(condition: Callable[[], bool], timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(step)
    raise TimeoutError("condition not met in time")


def redated_sample_vault(target: Path) -> Path:
    """A copy of sample-vault/ whose memories are shifted so that today is the sample's
    reference time (the daemon reads the real clock)."""
    import importlib.util
    import shutil
    from datetime import UTC, datetime

    spec = importlib.util.spec_from_file_location("demo_vault", REPO / "scripts/demo_vault.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shutil.copytree(REPO / "sample-vault", target, symlinks=True)
    delta = datetime.now(UTC).replace(microsecond=0) - module.REFERENCE
    for note in target.rglob("*.md"):
        module.shift_note(note, delta)
    return target
