"""Journalled usage writes: durable and visible at once, coalesced into few guarded writes."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, copy_vault
from tests.conftest import SAMPLE_VAULT
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.engine.journal import UsageJournal
from vaultmem.engine.memory_store import MemoryStore

MEMORY_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
MEMORY = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"

pytestmark = pytest.mark.timeout(120)


def _app(tmp_path: Path, journal: UsageJournal) -> App:
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": tmp_path / "vault", "data_dir": tmp_path / "data", "embedding_model": "fake"})
    return build_app(settings, journal=journal)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(SAMPLE_VAULT, tmp_path / "vault")


@pytest.fixture
def app(tmp_path: Path, vault: Path) -> Iterator[App]:
    journal = UsageJournal(tmp_path / "data" / "usage.sqlite3")
    app = _app(tmp_path, journal)
    app.engine.reindex()
    yield app
    app.close()
    journal.close()


def _store(app: App) -> MemoryStore:
    store = app.engine.memories
    assert store.journal is not None
    return store


def _pending(app: App) -> int:
    journal = _store(app).journal
    assert journal is not None
    return len(journal)


def _without_stm(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("stm_")]


def test_touch_is_visible_at_once_and_written_on_flush(app: App, vault: Path) -> None:
    before = (vault / MEMORY).read_bytes()
    view = app.engine.touch(MEMORY_ID, REFERENCE)
    assert view["use_count"] == 7
    assert (vault / MEMORY).read_bytes() == before  # not written yet
    assert app.engine.get(MEMORY_ID, REFERENCE)["use_count"] == 7  # but visible
    report = _store(app).flush()
    assert report.written == [MEMORY]
    text = (vault / MEMORY).read_text(encoding="utf-8")
    assert "stm_use_count: 7" in text
    assert _without_stm(text) == _without_stm(before.decode("utf-8"))
    assert _pending(app) == 0


def test_listing_memories_shows_pending_state_from_one_journal_read(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    app.engine.touch(MEMORY_ID, REFERENCE)
    store = _store(app)
    reads: list[str] = []
    for name in ("get", "all"):
        original = getattr(store.journal, name)
        monkeypatch.setattr(store.journal, name,
                            lambda *a, _o=original, _n=name: reads.append(_n) or _o(*a))
    listed = {m.state.id: m for m in store.iter_memories()}
    assert listed[MEMORY_ID].state.use_count == 7  # the pending touch, not the note's 6
    assert len(listed) > 1 and reads == ["all"]  # not one query per memory (slow under load)


def test_many_touches_coalesce_into_one_write(app: App, vault: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.engine import memory_store

    writes: list[str] = []
    real = memory_store.edit_memory_note
    monkeypatch.setattr(memory_store, "edit_memory_note",
                        lambda root, path, *a: writes.append(path) or real(root, path, *a))
    for _ in range(50):
        app.engine.touch(MEMORY_ID, REFERENCE)
    _store(app).flush()
    assert len(writes) == 1
    assert "stm_use_count: 56" in (vault / MEMORY).read_text(encoding="utf-8")


def test_touches_over_the_api_read_the_note_twice_and_write_it_once(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first touch parses the note (later ones find it parsed), the flush reads it afresh
    and writes it once, guarded; nothing else reads or writes it."""
    from vaultmem.api.ops import Api
    from vaultmem.vault import notes, writes

    reads: Counter[str] = Counter()
    written: Counter[str] = Counter()
    read, replace = notes._read_regular, writes._replace
    monkeypatch.setattr(notes, "_read_regular",
                        lambda absolute, rel: reads.update([rel]) or read(absolute, rel))
    monkeypatch.setattr(writes, "_replace", lambda path, data, check: written.update(
        [path.relative_to(app.root).as_posix()]) or replace(path, data, check))
    api = Api(engine=app.engine, lifecycle=app.lifecycle, clock=lambda: REFERENCE)
    for _ in range(20):
        api.call("touch", {"id": MEMORY_ID})
    assert written == Counter() and reads == Counter({MEMORY: 1})
    assert _store(app).flush().written == [MEMORY]
    assert reads == Counter({MEMORY: 2}) and written == Counter({MEMORY: 1})
    assert app.engine.get(MEMORY_ID, REFERENCE)["use_count"] == 26


def test_concurrent_touches_lose_no_increment(app: App, vault: Path) -> None:
    before = (vault / MEMORY).read_text(encoding="utf-8")

    def client() -> None:
        for _ in range(200):
            app.engine.touch(MEMORY_ID, REFERENCE)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _store(app).flush()
    after = (vault / MEMORY).read_text(encoding="utf-8")
    assert "stm_use_count: 1606" in after
    assert _without_stm(after) == _without_stm(before)


def test_pending_touches_survive_a_restart(tmp_path: Path, vault: Path) -> None:
    journal = UsageJournal(tmp_path / "data" / "usage.sqlite3")
    app = _app(tmp_path, journal)
    app.engine.reindex()
    for _ in range(3):
        app.engine.touch(MEMORY_ID, REFERENCE)
    # no flush, no close: as after kill -9; a new process opens the same journal
    journal2 = UsageJournal(tmp_path / "data" / "usage.sqlite3")
    app2 = _app(tmp_path, journal2)
    assert app2.engine.get(MEMORY_ID, REFERENCE)["use_count"] == 9
    _store(app2).flush()
    assert "stm_use_count: 9" in (vault / MEMORY).read_text(encoding="utf-8")
    for a, j in ((app, journal), (app2, journal2)):
        a.close()
        j.close()


def test_user_edit_while_a_write_is_pending_wins(app: App, vault: Path) -> None:
    app.engine.touch(MEMORY_ID, REFERENCE, boost=True)
    path = vault / MEMORY
    edited = path.read_text(encoding="utf-8").replace(
        "tags:", "# my own comment\ntags:", 1) + "\nA line the user added.\n"
    path.write_text(edited, encoding="utf-8")
    _store(app).flush()
    final = path.read_text(encoding="utf-8")
    assert "# my own comment" in final and final.endswith("A line the user added.\n")
    assert "stm_use_count: 7" in final and "stm_strength: 1.1" in final
    assert _without_stm(final) == _without_stm(edited)


def test_a_concurrent_edit_during_flush_keeps_the_write_pending(
    app: App, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.engine import memory_store
    from vaultmem.errors import ConcurrentEdit

    app.engine.touch(MEMORY_ID, REFERENCE)

    def refuse(*args: object, **kwargs: object) -> str:
        raise ConcurrentEdit("the note changed")

    monkeypatch.setattr(memory_store, "edit_memory_note", refuse)
    report = _store(app).flush()
    assert report.retry and not report.written
    assert _pending(app) == 1
    monkeypatch.undo()
    assert _store(app).flush().written == [MEMORY]


def test_archive_after_pending_touches_keeps_them(app: App, vault: Path) -> None:
    forget_id = "d8768a8d-2adb-41e7-98f9-0fbdb7770399"
    app.engine.touch(forget_id, REFERENCE)  # pending use_count 2
    app.lifecycle.gc(REFERENCE.replace(year=2027), apply=True)
    archived = vault / "memories/archive/2026-09-20 pihole-container-restart-after-update.md"
    text = archived.read_text(encoding="utf-8")
    assert "stm_status: archived" in text and "stm_use_count: 2" in text
    assert _pending(app) == 0


def test_pinning_keeps_a_memory_from_being_forgotten(app: App, vault: Path) -> None:
    from vaultmem.api.ops import Api

    api = Api(engine=app.engine, lifecycle=app.lifecycle, clock=lambda: REFERENCE)
    pihole = "d8768a8d-2adb-41e7-98f9-0fbdb7770399"  # would be forgotten at the reference time
    view = api.call("pin", {"id": pihole, "pinned": True})
    assert view["pinned"] is True and view["decision"] == "keep"
    assert view["use_count"] == 1  # pinning is not a use
    _store(app).flush()
    result = app.lifecycle.gc(REFERENCE, apply=True)
    assert pihole not in {item["id"] for item in result["archived"]}
    note = vault / "memories/2026-09-20 pihole-container-restart-after-update.md"
    assert "stm_pinned: true" in note.read_text(encoding="utf-8")
    unpinned = api.call("pin", {"id": pihole, "pinned": False})
    assert unpinned["pinned"] is False and unpinned["decision"] == "forget"


def test_the_journal_keeps_each_devices_highest_own_count(tmp_path: Path) -> None:
    journal = UsageJournal(tmp_path / "usage.sqlite3")
    try:
        assert journal.known("m1", "laptop") == 0
        journal.put("m1", "a.md", {"stm_id": "m1"}, credit=("laptop", 3))
        journal.note_credit("m1", "laptop", 2)  # never lowered
        assert journal.known("m1", "laptop") == 3 and journal.known("m1", "desk") == 0
        assert len(journal) == 1  # the credit is no pending write
    finally:
        journal.close()
