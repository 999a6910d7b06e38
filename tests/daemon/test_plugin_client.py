"""The Obsidian plugin's client (plugin-bridge/src/client.ts) against a real daemon.

Starts `vaultmem run` on a copy of sample-vault/ and runs the plugin's vitest integration test
with the daemon's URL, token and vault in its environment. Needs npm and the plugin's
node_modules (`npm ci` in plugin-bridge/); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem_testing.daemon import REPO, DaemonProcess

PLUGIN = REPO / "plugin-bridge"
NPX = shutil.which("npx")

pytestmark = [
    pytest.mark.skipif(shutil.which("npm") is None or NPX is None, reason="npm is not installed"),
    pytest.mark.skipif(not (PLUGIN / "node_modules").is_dir(),
                       reason="plugin-bridge/node_modules is missing (npm ci in plugin-bridge)"),
]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "sample-vault", vault, symlinks=True)
    data = tmp_path / "data"
    data.mkdir()
    process = DaemonProcess(vault, data)
    try:
        process.start()
        yield process
    finally:
        process.stop()


@pytest.mark.timeout(300)
def test_plugin_client_against_daemon(daemon: DaemonProcess, tmp_path: Path) -> None:
    assert daemon.client is not None and NPX is not None
    report = tmp_path / "vitest.json"
    env = {
        **os.environ,
        "VAULTMEM_TEST_URL": daemon.client.base_url,
        "VAULTMEM_TEST_TOKEN": (daemon.data / "token").read_text(encoding="utf-8").strip(),
        "VAULTMEM_TEST_VAULT": str(daemon.vault),
    }
    result = subprocess.run(
        [NPX, "--no", "vitest", "run", "test/integration.test.ts",
         "--reporter=default", "--reporter=json", f"--outputFile.json={report}"],
        cwd=PLUGIN, env=env, capture_output=True, text=True, timeout=240, check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["numFailedTests"] == 0, output
    assert summary["numPendingTests"] == 0, output  # skipped: the env vars did not arrive
    assert summary["numPassedTests"] >= 8, output
