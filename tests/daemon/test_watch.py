"""VaultWatcher against real files: which paths arrive, in which batches, and clean shutdown."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vaultmem.daemon.watch import VaultWatcher
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.writes import TEMP_PREFIX, TEMP_SUFFIX

DEBOUNCE = 0.05
WAIT = 10.0  # generous upper bound for events to arrive on a loaded machine


class Collector:
    """Records every batch and rescan; tests wait on it instead of sleeping."""

    def __init__(self) -> None:
        self.batches: list[set[str]] = []
        self.rescans = 0
        self._cond = threading.Condition()
        self.before: Callable[[set[str]], None] = lambda batch: None

    def on_batch(self, batch: set[str]) -> None:
        self.before(batch)
        with self._cond:
            self.batches.append(set(batch))
            self._cond.notify_all()

    def on_rescan(self) -> None:
        with self._cond:
            self.rescans += 1
            self._cond.notify_all()

    def seen(self) -> set[str]:
        with self._cond:
            return set().union(*self.batches)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> None:
        with self._cond:
            assert self._cond.wait_for(predicate, timeout), f"timed out; batches={self.batches}"

    def wait_seen(self, *paths: str) -> None:
        self.wait_for(lambda: set(paths) <= set().union(*self.batches))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture
def collector() -> Collector:
    return Collector()


@pytest.fixture
def make_watcher(
    vault: Path, collector: Collector
) -> Iterator[Callable[..., VaultWatcher]]:
    started: list[VaultWatcher] = []

    def make(
        *, debounce_s: float = DEBOUNCE, max_batch: int = 500, max_wait_s: float = 2.0
    ) -> VaultWatcher:
        watcher = VaultWatcher(
            vault, IgnoreRules.from_vault(vault), collector.on_batch,
            on_rescan=collector.on_rescan, debounce_s=debounce_s, max_batch=max_batch,
            max_wait_s=max_wait_s,
        )
        watcher.start()
        started.append(watcher)
        return watcher

    yield make
    for watcher in started:
        watcher.stop()


def write(path: Path, text: str = "hello\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.timeout(30)
def test_create_modify_delete_each_deliver_the_note(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "old.md")
    make_watcher()
    write(vault / "Folder" / "New.MD")
    collector.wait_seen("Folder/New.MD")
    batches = len(collector.batches)
    with (vault / "old.md").open("a", encoding="utf-8") as handle:
        handle.write("more\n")
    collector.wait_for(lambda: any("old.md" in b for b in collector.batches[batches:]))
    batches = len(collector.batches)
    (vault / "Folder" / "New.MD").unlink()
    collector.wait_for(lambda: any("Folder/New.MD" in b for b in collector.batches[batches:]))
    assert collector.rescans == 0


@pytest.mark.timeout(30)
def test_delete_then_create_delivers_the_note_once(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "n.md", "one\n")
    make_watcher(debounce_s=0.2)
    (vault / "n.md").unlink()
    write(vault / "n.md", "two\n")
    collector.wait_seen("n.md")
    assert collector.batches == [{"n.md"}]


@pytest.mark.timeout(30)
def test_deleting_a_folder_asks_for_a_rescan(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "Old" / "sub" / "a.md")
    make_watcher()
    shutil.rmtree(vault / "Old")
    collector.wait_for(lambda: collector.rescans == 1)


@pytest.mark.timeout(30)
def test_ignored_paths_are_never_delivered(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Archive/"]}))
    (vault / ".trash").mkdir()
    make_watcher()
    write(vault / ".obsidian" / "x.md")
    write(vault / ".trash" / "gone.md")
    write(vault / "Archive" / "old.md")
    write(vault / f"{TEMP_PREFIX}abc{TEMP_SUFFIX}")
    write(vault / "picture.png")
    write(vault / "sentinel.md")  # events arrive in order: the others came before this
    collector.wait_seen("sentinel.md")
    assert collector.seen() == {"sentinel.md"}


@pytest.mark.timeout(30)
def test_reading_or_touching_a_note_delivers_nothing(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "read.md")
    make_watcher()
    assert (vault / "read.md").read_text(encoding="utf-8") == "hello\n"  # as the indexer does
    os.chmod(vault / "read.md", 0o600)
    write(vault / "sentinel.md")
    collector.wait_seen("sentinel.md")
    assert collector.seen() == {"sentinel.md"}


@pytest.mark.timeout(30)
def test_atomic_save_through_a_temp_file_delivers_the_note(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "note.md", "old\n")
    make_watcher()
    for temp_name in (f"{TEMP_PREFIX}0123{TEMP_SUFFIX}", ".note.md.swp", "note.md~"):
        write(vault / temp_name, "new\n")
        os.replace(vault / temp_name, vault / "note.md")
    collector.wait_seen("note.md")
    assert collector.seen() == {"note.md"}


@pytest.mark.timeout(30)
def test_rename_delivers_both_paths(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "a.md")
    make_watcher()
    (vault / "a.md").rename(vault / "b.md")
    collector.wait_seen("a.md", "b.md")


@pytest.mark.timeout(30)
def test_folder_rename_delivers_old_and_new_note_paths(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "Projects" / "x.md")
    write(vault / "Projects" / "deep" / "y.md")
    write(vault / "Projects" / "deep" / "image.png")
    make_watcher()
    (vault / "Projects").rename(vault / "Work")
    expected = {"Projects/x.md", "Projects/deep/y.md", "Work/x.md", "Work/deep/y.md"}
    collector.wait_seen(*expected)
    assert collector.seen() == expected


@pytest.mark.timeout(30)
def test_folder_moved_to_trash_delivers_old_paths_only(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    write(vault / "Drafts" / "d.md")
    (vault / ".trash").mkdir()
    make_watcher()
    (vault / "Drafts").rename(vault / ".trash" / "Drafts")
    write(vault / "sentinel.md")
    collector.wait_seen("Drafts/d.md", "sentinel.md")
    assert collector.seen() == {"Drafts/d.md", "sentinel.md"}


@pytest.mark.timeout(30)
def test_folder_that_leaves_the_vault_asks_for_a_rescan(
    tmp_path: Path, vault: Path, collector: Collector,
    make_watcher: Callable[..., VaultWatcher],
) -> None:
    write(vault / "Gone" / "n.md")
    make_watcher()
    (vault / "Gone").rename(tmp_path / "outside")
    collector.wait_for(lambda: collector.rescans == 1)


@pytest.mark.timeout(30)
def test_kernel_overflow_reported_by_watchdog_asks_for_a_rescan(
    collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    make_watcher()
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost"
    )
    collector.wait_for(lambda: collector.rescans == 1)


@pytest.mark.timeout(60)
def test_a_thousand_new_notes_arrive_complete_in_bounded_batches(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    make_watcher(max_batch=100, max_wait_s=1.0)
    names = {f"bulk/n{i:04}.md" for i in range(1000)}
    (vault / "bulk").mkdir()
    for name in sorted(names):
        (vault / name).write_text("x\n", encoding="utf-8")
    collector.wait_seen(*names)
    assert collector.seen() == names
    assert len(collector.batches) >= 10
    assert max(len(batch) for batch in collector.batches) <= 100


@pytest.mark.timeout(30)
def test_events_during_a_slow_batch_are_kept_for_the_next_one(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    in_batch, release = threading.Event(), threading.Event()

    def slow(batch: set[str]) -> None:
        if "first.md" in batch:
            in_batch.set()
            assert release.wait(WAIT)

    collector.before = slow
    watcher = make_watcher()
    write(vault / "first.md")
    assert in_batch.wait(WAIT)
    write(vault / "second.md")
    write(vault / "third.md")
    assert watcher.busy()
    deadline = time.monotonic() + WAIT
    while watcher.pending() < 2:  # the observer thread queues them while the worker is stuck
        assert time.monotonic() < deadline
        time.sleep(0.01)
    release.set()
    collector.wait_seen("first.md", "second.md", "third.md")
    assert collector.batches[0] == {"first.md"}


@pytest.mark.timeout(30)
def test_a_failing_batch_does_not_stop_later_ones(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(batch: set[str]) -> None:
        if "bad.md" in batch:
            raise RuntimeError("consumer broke")

    collector.before = explode
    make_watcher()
    write(vault / "bad.md")
    deadline = time.monotonic() + WAIT
    while "consumer broke" not in caplog.text:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    write(vault / "good.md")
    collector.wait_seen("good.md")
    assert "bad.md" not in collector.seen()


@pytest.mark.timeout(30)
def test_busy_and_pending_follow_the_queue(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    watcher = make_watcher(debounce_s=0.2)
    assert not watcher.busy(quiet_s=60.0) and watcher.pending() == 0
    write(vault / "n.md")
    collector.wait_seen("n.md")
    assert watcher.pending() == 0
    assert watcher.busy(quiet_s=60.0)
    assert not watcher.busy(quiet_s=0.0)


@pytest.mark.timeout(30)
def test_idle_watcher_uses_no_cpu(make_watcher: Callable[..., VaultWatcher]) -> None:
    make_watcher()
    before = time.process_time()
    time.sleep(1.0)
    assert time.process_time() - before < 0.05


@pytest.mark.timeout(30)
def test_stop_leaves_no_threads_and_is_idempotent(vault: Path, collector: Collector) -> None:
    before = set(threading.enumerate())
    with VaultWatcher(vault, IgnoreRules(), collector.on_batch, debounce_s=DEBOUNCE) as watcher:
        write(vault / "n.md")
        collector.wait_seen("n.md")
        assert set(threading.enumerate()) - before
    watcher.stop()
    assert set(threading.enumerate()) == before


@pytest.mark.timeout(30)
def test_a_missing_vault_fails_to_start_without_leaking_threads(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    watcher = VaultWatcher(tmp_path / "absent", IgnoreRules(), lambda batch: None,
                           debounce_s=DEBOUNCE)
    with pytest.raises(OSError):
        watcher.start()
    assert set(threading.enumerate()) == before


@pytest.mark.timeout(30)
def test_a_continuous_stream_is_delivered_before_it_ends(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    make_watcher(debounce_s=0.3, max_wait_s=0.3)
    stream_end = time.monotonic() + 2.0
    i = 0
    while time.monotonic() < stream_end:  # never quiet for debounce_s
        write(vault / f"s{i}.md")
        i += 1
        time.sleep(0.02)
        if collector.batches:
            break
    assert collector.batches, "nothing was delivered while events kept coming"


@pytest.mark.timeout(30)
def test_a_slow_batch_takes_the_next_due_changes_itself(
    vault: Path, collector: Collector, make_watcher: Callable[..., VaultWatcher]
) -> None:
    """While the worker is inside a long batch, the batch can take the changes that came since
    (once their burst is due), leaving out the paths it names; the rest come as usual."""
    in_batch, release = threading.Event(), threading.Event()
    taken: list[set[str]] = []

    def slow(batch: set[str]) -> None:
        if "first.md" in batch:
            in_batch.set()
            deadline = time.monotonic() + WAIT
            while not taken or not taken[-1]:
                assert time.monotonic() < deadline
                taken.append(watcher.take_due(frozenset({"first.md"})))
                time.sleep(0.01)
            assert release.wait(WAIT)

    collector.before = slow
    watcher = make_watcher()
    write(vault / "first.md")
    assert in_batch.wait(WAIT)
    write(vault / "second.md")
    write(vault / "first.md", "edited again\n")
    deadline = time.monotonic() + WAIT
    while not taken or not taken[-1]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert taken[-1] == {"second.md"}
    assert all(t == set() for t in taken[:-1])  # nothing before the burst was due
    assert watcher.pending() == 1  # first.md, left for after the batch
    release.set()
    collector.wait_for(lambda: len(collector.batches) >= 2)
    assert collector.batches[1] == {"first.md"}
    assert "second.md" not in collector.seen()
