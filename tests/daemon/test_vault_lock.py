"""One writer per vault on a machine, whatever the data dir: the lock in the vault
(vault/writer_lock.py). A second daemon refuses naming the first; a command from a shell with
another data dir talks to the daemon; a dead holder's lock is taken with an explanation; a live
holder's is never taken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem.errors import DaemonError
from vaultmem.mcp.bridge import Bridge
from vaultmem.vault.writer_lock import (
    COMMAND,
    DAEMON,
    VaultBusy,
    VaultLock,
    current_holder,
    describe_stale,
    lock_path,
)
from vaultmem_testing.daemon import REPO, DaemonProcess


def make_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Garden.md").write_text("# Garden\n\nTomatoes and beans.\n")
    return vault


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_second_writer_with_another_data_dir_is_refused_naming_the_first(
    tmp_path: Path
) -> None:
    vault = make_vault(tmp_path)
    first = VaultLock(vault, DAEMON, tmp_path / "data-1")
    with first.held_while():
        first.serving(43210, "http://127.0.0.1:43210")
        with pytest.raises(VaultBusy) as caught:
            VaultLock(vault, COMMAND, tmp_path / "data-2").acquire()
        message = caught.value.message
        assert f"pid {os.getpid()}" in message and "port 43210" in message
        assert str(tmp_path / "data-1") in message and "per machine" in message
        holder = current_holder(vault)
        assert holder is not None and holder.kind == DAEMON and holder.port == 43210
    assert current_holder(vault) is None  # released: free for the next writer
    assert lock_path(vault).parent.name == ".vaultmem"


def test_a_dead_holders_lock_is_taken_and_explained_a_live_one_never(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    path = lock_path(vault)
    path.parent.mkdir()
    pid = dead_pid()
    path.write_text(json.dumps({"pid": pid, "kind": DAEMON, "data_dir": "/old/data",
                                "host": "here", "started": "2026-11-28T10:00:00+00:00",
                                "port": 5555, "url": "http://127.0.0.1:5555"}))
    lock = VaultLock(vault, DAEMON, tmp_path / "data")
    with lock.held_while():
        assert lock.stale is not None and lock.stale.pid == pid
        explained = describe_stale(lock.stale, lock.path)
        assert f"pid {pid}" in explained and "ended without releasing" in explained
        assert json.loads(path.read_text())["pid"] == os.getpid()  # the file names us now
    # a live holder (another process) keeps it, whatever the file says
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; "
         "from vaultmem.vault.writer_lock import VaultLock; "
         f"lock = VaultLock(Path({str(vault)!r}), 'command', Path('/elsewhere')); "
         "lock.acquire(); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        with pytest.raises(VaultBusy, match=f"pid {holder.pid}"):
            VaultLock(vault, DAEMON, tmp_path / "data").acquire(wait_s=0.2)
    finally:
        holder.kill()
        holder.wait()


def test_a_read_only_vault_needs_no_lock(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running with privileges that write anywhere (root)")
    vault = make_vault(tmp_path)
    vault.chmod(0o555)
    try:
        lock = VaultLock(vault, COMMAND, tmp_path / "data")
        with lock.held_while():
            assert not lock.held and lock.unavailable
    finally:
        vault.chmod(0o755)


@pytest.mark.timeout(180)
def test_two_daemons_with_other_data_dirs_the_second_refuses_and_the_cli_finds_the_first(
    tmp_path: Path
) -> None:
    vault = make_vault(tmp_path)
    first = DaemonProcess(vault, tmp_path / "data-1")
    try:
        client = first.start()
        port = json.loads((tmp_path / "data-1" / "daemon.json").read_text())["port"]
        second = DaemonProcess(vault, tmp_path / "data-2")
        second.spawn()
        assert second.proc is not None
        _, err = second.proc.communicate(timeout=60)
        assert second.proc.returncode != 0
        text = err.decode()
        assert f"pid {first.pid}" in text and f"port {port}" in text, text
        assert str(tmp_path / "data-1") in text and "per machine" in text, text
        assert not (tmp_path / "data-2" / "daemon.json").exists()
        assert client.health()  # the first still serves

        # a shell without the daemon's data dir: its default data dir is elsewhere
        env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
        env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "home" / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "home" / "config"), PYTHONPATH=str(REPO))
        saved = subprocess.run(
            [sys.executable, "-m", "vaultmem", "save", "The shed key hangs by the door.",
             "--vault", str(vault), "--json"],
            env=env, cwd=REPO, capture_output=True, timeout=60, check=True)
        memory = json.loads(saved.stdout)["memory"]
        assert client.call_op("get", {"id": memory["id"]})["id"] == memory["id"]
        assert not (tmp_path / "home" / "data").exists()  # nothing opened in-process
        # the MCP bridge, given another data dir, finds the daemon from the vault too
        bridge = Bridge(vault, tmp_path / "data-3", "vaultmem run")
        assert bridge.client() is not None
    finally:
        first.stop()
    # with no daemon, a command writes in-process and holds the lock meanwhile
    assert current_holder(vault) is None


def test_a_command_refuses_while_another_command_holds_the_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.cli.context import Context

    monkeypatch.setattr("vaultmem.vault.writer_lock.COMMAND_WAIT_S", 0.2)
    vault = make_vault(tmp_path)
    ctx = Context({"vault": vault, "data_dir": tmp_path / "data-2", "config": None})
    holder = VaultLock(vault, COMMAND, tmp_path / "data-1")
    with holder.held_while(), pytest.raises(DaemonError, match="a vaultmem command"), \
            ctx.app():
        pass
    with ctx.app() as app:  # free again
        assert app.root == vault.resolve()
