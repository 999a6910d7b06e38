"""What is imported where: the CLI talking to a running daemon imports neither the model
runtime nor LanceDB, a daemon serving with the ONNX runtime never imports torch, and what only
the watcher, the scheduler and the indexing need waits until the first answers are out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem_testing.daemon import REAL_MODEL, DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

pytestmark = pytest.mark.timeout(900)

HEAVY = ("lancedb", "pyarrow", "onnxruntime", "openvino", "tokenizers", "torch",
         "sentence_transformers", "transformers", "numpy")

#: Runs CLI commands in one process, then names the heavy modules it imported.
CLI = """
import json, sys
from vaultmem.cli.main import cli
for args in json.loads(sys.argv[1]):
    try:
        cli.main(args, prog_name="vaultmem", standalone_mode=False)
    except SystemExit:
        pass
print("HEAVY", json.dumps(sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)))
"""


#: Needed by the daemon only once it watches, schedules or reads notes (after its first answers).
LATER = ("markdown_it", "apscheduler", "watchdog", "pathspec", "multiprocessing")


def test_the_daemon_start_imports_nothing_that_only_its_background_work_needs() -> None:
    code = ("import json, sys, vaultmem.cli.main, vaultmem.app, vaultmem.daemon.run; "
            f"print(json.dumps(sorted(m for m in {list(LATER)!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == []


def _heavy_imports(env: dict[str, str], commands: list[list[str]]) -> tuple[list[str], str]:
    done = subprocess.run([sys.executable, "-c", CLI, json.dumps(commands), json.dumps(HEAVY)],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("HEAVY "), done.stdout + done.stderr
    return json.loads(last.removeprefix("HEAVY ")), done.stdout


def test_the_cli_beside_a_daemon_imports_no_model_runtime_and_no_lancedb(tmp_path: Path) -> None:
    vault = redated_sample_vault(tmp_path / "vault")
    daemon = DaemonProcess(vault, tmp_path / "data")
    try:
        daemon.start()
        heavy, out = _heavy_imports(daemon.env, [["search", "sourdough starter"], ["status"],
                                                 ["search", "backups", "--json"]])
    finally:
        daemon.stop()
    assert "sourdough" in out.lower()  # it did talk to the daemon
    assert heavy == []


@pytest.mark.model
@pytest.mark.parametrize(("runtime", "library"), [("onnx", "onnxruntime"),
                                                   ("openvino", "libopenvino")])
def test_a_daemon_on_an_onnx_graph_runtime_serves_and_follows_edits_without_torch(
    tmp_path: Path, runtime: str, library: str,
) -> None:
    """sentence-transformers cannot be imported without torch, and torch cannot be imported
    without mapping libtorch: the daemon's memory maps show which runtime it loaded."""
    vault = redated_sample_vault(tmp_path / "vault")
    daemon = DaemonProcess(vault, tmp_path / "data", settings=REAL_MODEL,
                           VAULTMEM_EMBEDDING_RUNTIME=runtime)
    try:
        daemon.start(600)  # the first index with the real model (~80 s on a loaded 2-core box)
        client = daemon.client
        assert client is not None and daemon.proc is not None
        daemon.wait_ready(600, model=True)
        assert client.search("keeping a sourdough starter alive")["results"]
        (vault / "Fresh note.md").write_text("Zyxquab is a new word for a starter.\n")
        wait_until(lambda: any(h["path"] == "Fresh note.md"
                               for h in client.search("zyxquab")["results"]), 180)
        maps = Path(f"/proc/{daemon.proc.pid}/maps").read_text()
    finally:
        daemon.stop()
    assert library in maps
    assert "libtorch" not in maps
