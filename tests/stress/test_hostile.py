"""A real daemon on a vault full of hostile content: every file is indexed or reported with a
reason, no byte and no mtime changes, and the daemon keeps serving throughout.

The cases and their expected outcomes are in `tests/stress/hostile_vault.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import psutil
import pytest
from click.testing import CliRunner

import vaultmem.pipeline.indexer as indexer_module
from tests.stress import hostile_vault as hv
from tests.stress._level import LEVEL
from vaultmem.api.client import Client
from vaultmem.app import build_app
from vaultmem.cli.main import cli
from vaultmem.config import load_settings
from vaultmem.daemon.watch import VaultWatcher
from vaultmem.errors import FrontmatterError, VaultmemError
from vaultmem.vault import yamlsafe
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.scan import scan_vault
from vaultmem_testing.daemon import DaemonProcess, wait_until

# The daemon's resident memory must stay below this while it indexes the hostile vault (the
# largest note it reads is LEVEL.pick(3, 15) MiB; a note over max_note_bytes is never read).
RSS_LIMIT_MB = LEVEL.pick(800, 1500)
SLOW_S = LEVEL.pick(600, 3600)
SETTLE_S = LEVEL.pick(60, 600)


class Watch:
    """Samples the daemon's RSS and keeps asking it for health and searches, from its spawn
    (so during start-up indexing too) until stopped."""

    def __init__(self, daemon: DaemonProcess) -> None:
        self.daemon = daemon
        self.max_rss = 0
        self.requests = 0
        self.errors: list[str] = []
        self.slowest = 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._sample, daemon=True),
                         threading.Thread(target=self._probe, daemon=True)]

    def __enter__(self) -> Watch:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            proc = self.daemon.proc
            if proc is None:
                continue
            with contextlib.suppress(psutil.Error):
                self.max_rss = max(self.max_rss, psutil.Process(proc.pid).memory_info().rss)

    def _probe(self) -> None:
        client = self._client()
        while client is not None and not self._stop.wait(0.25):
            for method, path, body in (("GET", "/v1/health", None),
                                       ("POST", "/v1/search", {"query": "heron marsh"})):
                started = time.monotonic()
                try:
                    client.call(method, path, body)
                except VaultmemError as exc:
                    self.errors.append(f"{path}: {type(exc).__name__}: {exc.message}")
                self.slowest = max(self.slowest, time.monotonic() - started)
                self.requests += 1

    def _client(self) -> Client | None:
        info = self.daemon.data / "daemon.json"
        while not self._stop.wait(0.05):
            try:
                url = json.loads(info.read_text(encoding="utf-8"))["url"]
                token = (self.daemon.data / "token").read_text(encoding="utf-8").strip()
                return Client(url, token, timeout=SLOW_S)
            except (OSError, ValueError, KeyError):
                continue
        return None


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[hv.HostileVault]:
    built = hv.build(tmp_path / "vault")
    try:
        yield built
    finally:
        hv.dismantle_deep_folders(built.root)


@pytest.fixture
def daemon(tmp_path: Path, vault: hv.HostileVault) -> Iterator[DaemonProcess]:
    process = DaemonProcess(vault.root, tmp_path / "data")
    process.output = tmp_path / "daemon.log"
    try:
        yield process
    finally:
        process.stop()


def _files(client: Client) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in client.status(files=True)["coverage"]["files"]}


def _outcome(case: hv.Case, files: dict[str, dict[str, Any]]) -> str:
    """Check one case against the index; returns the outcome as reported."""
    for path in case.paths:
        entry = files.get(path)
        if case.expect == hv.ABSENT:
            assert entry is None, (case.name, entry)
            continue
        assert entry is not None, f"{case.name}: {path!r} is neither indexed nor reported"
        assert entry["status"] == case.expect, (case.name, entry)
        if case.reason:
            assert case.reason.lower() in entry["reason"].lower(), (case.name, entry)
        elif case.expect == hv.INDEXED:
            assert entry["reason"] == "", (case.name, entry)
    entry = files.get(case.paths[0])
    return "not in the index" if entry is None else (
        f"{entry['status']}" + (f": {entry['reason'][:70]}" if entry["reason"] else ""))


def _refused(client: Client, method: str, path: str, body: dict[str, Any]) -> int:
    try:
        client.call(method, path, body)
    except VaultmemError as exc:
        assert exc.message, "an error without a message"
        return type(exc).http_status
    return 200


def _check_memory_refusals(client: Client, cases: list[hv.Case]) -> int:
    attempts = 0
    for case in cases:
        if case.touch_ref is None:
            continue
        assert _refused(client, "POST", "/v1/touch", {"path": case.touch_ref}) == \
            case.touch_status, case.name
        assert _refused(client, "POST", "/v1/observe", {"ids": [case.touch_ref]}) == \
            case.touch_status, case.name
        attempts += 2
    return attempts


def _wait_listed(client: Client, paths: list[str]) -> None:
    """Until the watcher has indexed or reported every one of `paths`."""
    try:
        wait_until(lambda: not set(paths) - set(_files(client)), SETTLE_S, step=0.2)
    except TimeoutError:
        missing = set(paths) - set(_files(client))
        raise AssertionError(f"never indexed nor reported: {missing}") from None


def _wait_flushed(daemon: DaemonProcess) -> None:
    wait_until(lambda: daemon.status()["daemon"]["pending_usage_writes"] == 0, 60)


def _lifecycle(slow: Client, daemon: DaemonProcess) -> None:
    """Every job that may write notes, applied for real."""
    slow.call("POST", "/v1/sweep", {"dry_run": False})
    slow.call("POST", "/v1/gc", {"apply": True})
    slow.call("POST", "/v1/reindex", {})
    _wait_flushed(daemon)


def _serves(client: Client, vault: hv.HostileVault, uses: int) -> str:
    """Health, search, a touch of a normal memory and a save; returns the saved note's path."""
    assert client.call("GET", "/v1/health")["status"] == "ok"
    hits = client.call("POST", "/v1/search", {"query": "heron fishes marsh"})["results"]
    assert "normal/plain.md" in [h["path"] for h in hits]
    view = client.call("POST", "/v1/touch", {"id": vault.normal_memory_id})
    assert view["use_count"] == uses
    saved = client.call("POST", "/v1/memories", {
        "content": f"The hostile vault test saved this note, round {uses}: otters juggle pebbles.",
        "title": f"Otters juggle pebbles {uses}"})
    assert saved["created"], saved
    return str(saved["memory"]["path"])


def _table(outcomes: dict[hv.Case, str]) -> str:
    lines = ["| case | files | outcome |", "|---|---|---|"]
    for case, outcome in outcomes.items():
        where = "watcher" if case.watched else "start-up"
        name = case.name.replace("|", "\\|")
        lines.append(f"| {name} ({where}) | {len(case.paths)} | {outcome} |")
    return "\n".join(lines)


class Churn:
    """Rewrites a few notes over and over (each time with a new last word) while the daemon
    indexes: notes that change between the scan and the read."""

    def __init__(self, root: Path, notes: int = 5) -> None:
        self.paths = [f"churn/churn {i}.md" for i in range(notes)]
        self.root = root
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        for path in self.paths:
            self._write(path)

    def _write(self, path: str) -> None:
        full = self.root / path
        full.parent.mkdir(exist_ok=True)
        full.write_text(f"# Churn\n\n{'filler words ' * self.rounds}{self.word(path)}\n",
                        encoding="utf-8")

    def word(self, path: str) -> str:
        return f"churnword{path[-4]}x{self.rounds}"

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.rounds += 1
            for path in self.paths:
                self._write(path)

    def __enter__(self) -> Churn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def settled(self, client: Client) -> bool:
        """Every churned note is indexed with its final word: found by it, among the churned
        notes, with the word in its snippet. (Not "in the top 3 of the whole vault": a query
        like `churnword3x688` ranks the hostile vault's `Crowd 688` notes by name above the
        note that holds the word, and the check then waited in vain on an index that had
        settled, the "index did not settle" seen once.)"""
        folder = str(PurePosixPath(self.paths[0]).parent)
        for path in self.paths:
            word = self.word(path)
            hits = client.call("POST", "/v1/search", {"query": word, "top_k": 50,
                                                      "folder": folder})["results"]
            if not any(h["path"] == path and word in h["snippet"] for h in hits):
                return False
        return True


class Phases:
    """Wall time of each phase, for the report."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._last = time.monotonic()

    def done(self, name: str) -> None:
        now = time.monotonic()
        self.times[name] = now - self._last
        self._last = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.times.items())


@pytest.mark.timeout(LEVEL.pick(120, 3600))
def test_hostile_vault_is_indexed_or_reported_and_never_rewritten(
    vault: hv.HostileVault, daemon: DaemonProcess
) -> None:
    before = hv.snapshot(vault.root, vault.outside)
    phases = Phases()
    with Watch(daemon) as watch:
        client = daemon.start(timeout=SLOW_S)
        slow = Client(client.base_url, client.token, timeout=SLOW_S)
        assert daemon.status()["daemon"]["indexing"]["error"] is None
        phases.done("start-up indexing")

        files = _files(client)
        outcomes = {case: _outcome(case, files) for case in vault.cases}
        _nothing_leaked(client, vault)
        touches = _check_memory_refusals(client, vault.cases)
        saved = {_serves(client, vault, uses=2)}
        _lifecycle(slow, daemon)
        phases.done("checks, touches, sweep, gc, flush")

        live = hv.add_while_running(vault)
        live_before = hv.snapshot(vault.root / "live", vault.outside)
        by_watcher = [c for c in live if not c.folder_link]
        _wait_listed(client, [p for c in by_watcher if c.expect != hv.ABSENT for p in c.paths])
        files = _files(client)
        outcomes.update({case: _outcome(case, files) for case in by_watcher})
        touches += _check_memory_refusals(client, live)
        phases.done("hostile files added while running")

        with Churn(vault.root) as churn:
            slow.call("POST", "/v1/reindex", {"full": LEVEL.long})
        wait_until(lambda: churn.settled(client), SETTLE_S, step=0.2)
        files = _files(client)
        for case in vault.cases:  # the full scan agrees with the watcher
            outcome = _outcome(case, files)
            if case.folder_link and case.watched:
                outcomes[case] = f"reported by the next full scan: {outcome}"
        saved.add(_serves(client, vault, uses=3))
        _lifecycle(slow, daemon)
        cli_status = CliRunner().invoke(cli, ["status", "--json"], env=daemon.env)
        assert cli_status.exit_code == 0, cli_status.output
        socket_coverage = client.status()["coverage"]
        phases.done(f"reindex with {churn.rounds} rounds of churn, sweep, gc, flush")
    assert daemon.stop() == 0

    _nothing_rewritten(vault, before, live_before, saved)
    cli_coverage = json.loads(cli_status.output)["coverage"]
    assert cli_coverage == socket_coverage
    assert watch.errors == [], watch.errors[:5]
    assert watch.requests > 10
    assert watch.max_rss < RSS_LIMIT_MB * 1024 * 1024, watch.max_rss
    hostile = sum(len(c.paths) for c in vault.cases)
    print(f"\n{hostile} hostile files in {len(vault.cases)} cases; {touches} refused touches/"
          f"observes; {watch.requests} probe requests during the run (slowest "
          f"{watch.slowest:.2f} s); daemon RSS max {watch.max_rss / 2**20:.0f} MiB\n"
          f"{phases}\n{_table(outcomes)}")


def _nothing_leaked(client: Client, vault: hv.HostileVault) -> None:
    assert not vault.marker.exists(), "a YAML tag executed code"
    hits = client.call("POST", "/v1/search", {"query": "zanzibarquux"})["results"]
    leaked = [h for h in hits if "zanzibarquux" in h["snippet"].lower() or "outside" in h["path"]]
    assert leaked == [], "content outside the vault was indexed"


def _nothing_rewritten(
    vault: hv.HostileVault, before: hv.Snapshot, live_before: hv.Snapshot, saved: set[str]
) -> None:
    after = hv.snapshot(vault.root, vault.outside)
    memory = vault.root / "normal/memory.md"
    changed = {p for p in before if before[p] != after.get(p)}
    assert changed == {os.fsencode(memory)}, sorted(changed)  # the touched normal memory
    assert "stm_use_count: 3" in memory.read_text(encoding="utf-8")
    assert {p for p in live_before if live_before[p] != after.get(p)} == set()
    new = {os.fsdecode(p) for p in set(after) - set(before) - set(live_before)}
    churned = {str(vault.root / "churn" / f"churn {i}.md") for i in range(5)}
    assert new == {str(vault.root / s) for s in saved} | churned


@pytest.mark.timeout(LEVEL.pick(60, 120))
def test_notes_that_change_between_the_scan_and_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deleted, swapped for a FIFO or a folder, or rewritten after the scan listed them: the
    sync neither hangs nor fails, and indexes what it actually read."""
    root = tmp_path / "vault"
    root.mkdir()
    for name in ("gone", "fifo", "folder", "changed", "kept"):
        (root / f"{name}.md").write_text(f"# {name}\n\nold text\n", encoding="utf-8")
    new_text = b"# changed\n\nnew text written after the scan\n"
    real_scan = scan_vault

    def scan_then_change(*args: Any, **kwargs: Any) -> Any:
        result = real_scan(*args, **kwargs)
        (root / "gone.md").unlink()
        (root / "fifo.md").unlink()
        os.mkfifo(root / "fifo.md")
        (root / "folder.md").unlink()
        (root / "folder.md").mkdir()
        (root / "changed.md").write_bytes(new_text)
        return result

    monkeypatch.setattr(indexer_module, "scan_vault", scan_then_change)
    app = build_app(load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": root, "data_dir": tmp_path / "data", "embedding_model": "fake"}))
    worker = threading.Thread(target=app.sync.reindex, daemon=True)
    try:
        worker.start()
        worker.join(timeout=LEVEL.pick(30, 60))
        assert not worker.is_alive(), "the sync hangs"
        records = app.catalog.records()
    finally:
        if worker.is_alive():  # release a reader blocked on the FIFO
            os.close(os.open(root / "fifo.md", os.O_WRONLY | os.O_NONBLOCK))
        app.close()
    assert "gone.md" not in records
    assert (records["fifo.md"].status, records["folder.md"].status) == ("failed", "failed")
    assert "regular file" in records["fifo.md"].reason
    assert "folder" in records["folder.md"].reason
    changed = records["changed.md"]
    assert (changed.status, changed.size) == ("indexed", len(new_text))
    assert changed.file_hash == hashlib.sha256(new_text).hexdigest()
    assert records["kept.md"].status == "indexed"


@pytest.mark.timeout(LEVEL.pick(60, 120))
def test_deeply_nested_yaml_is_refused_without_the_slow_loader(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of open brackets cost the pure-Python YAML scanner seconds per note."""
    monkeypatch.setattr(yamlsafe, "ObsidianPyLoader", None)  # any use of it fails
    with pytest.raises(FrontmatterError, match="deeper than"):
        yamlsafe.load_yaml("k: " + "[" * 100_000 + "]" * 100_000)


@pytest.mark.timeout(LEVEL.pick(60, 120))
def test_watcher_starts_on_a_vault_nested_past_the_recursion_limit(tmp_path: Path) -> None:
    """watchdog walks folders recursively; 1,200 levels exceed Python's default limit."""
    root = tmp_path / "vault"
    root.mkdir()
    folder = root
    for _ in range(1200):
        folder = folder / "d"
        folder.mkdir()
    batches: list[set[str]] = []
    watcher = VaultWatcher(root, IgnoreRules.from_vault(root), batches.append, debounce_s=0.05)
    try:
        watcher.start()
        (folder / "bottom.md").write_text("# bottom\n", encoding="utf-8")
        wait_until(lambda: any("d/" * 1200 + "bottom.md" in batch for batch in batches), 30)
    finally:
        watcher.stop()
        hv.dismantle_deep_folders(root)
