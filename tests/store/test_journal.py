"""Journalled usage writes: durable and visible at once, coalesced into few guarded writes."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import REFERENCE, copy_vault
from tests.conftest import SAMPLE_VAULT
from vaultmem.api.wire import to_wire
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.store.journal import UsageJournal
from vaultmem.store.memory_store import MemoryStore
from vaultmem.vault.writes import sha256_bytes

MEMORY_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
MEMORY = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"

pytestmark = pytest.mark.timeout(120)


def _app(tmp_path: Path) -> App:
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": tmp_path / "vault", "data_dir": tmp_path / "data", "embedding_model": "fake"})
    return build_app(settings, daemon=True)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(SAMPLE_VAULT, tmp_path / "vault")


@pytest.fixture
def app(tmp_path: Path, vault: Path) -> Iterator[App]:
    app = _app(tmp_path)
    journal = app.journal
    app.sync.reindex()
    yield app
    app.close()
    journal.close()


def _store(app: App) -> MemoryStore:
    store = app.store
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
    view = app.uses.touch(MEMORY_ID, REFERENCE)
    assert view.state.use_count == 7
    assert (vault / MEMORY).read_bytes() == before  # not written yet
    assert app.views.get(MEMORY_ID, REFERENCE).state.use_count == 7  # but visible
    report = _store(app).flush()
    assert report.written == [MEMORY]
    text = (vault / MEMORY).read_text(encoding="utf-8")
    assert "stm_use_count: 7" in text
    assert _without_stm(text) == _without_stm(before.decode("utf-8"))
    assert _pending(app) == 0


def test_listing_memories_shows_pending_state_from_one_journal_read(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    app.uses.touch(MEMORY_ID, REFERENCE)
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
    from vaultmem.store import memory_store

    writes: list[str] = []
    real = memory_store.edit_memory_note
    monkeypatch.setattr(memory_store, "edit_memory_note",
                        lambda root, path, *a: writes.append(path) or real(root, path, *a))
    for _ in range(50):
        app.uses.touch(MEMORY_ID, REFERENCE)
    _store(app).flush()
    assert len(writes) == 1
    assert "stm_use_count: 56" in (vault / MEMORY).read_text(encoding="utf-8")


def test_a_touch_reads_the_note_twice_writes_it_once_per_flush_and_never_lancedb(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Touches over the Api, then the daemon's flush (written into the note, recorded in the
    catalog): the first touch parses the note (later ones find it parsed), the flush's guarded
    write re-reads it once to check nobody changed it, and the catalog takes the note as
    written. Two reads, one write, no LanceDB write."""
    from vaultmem.vault import memories, notes

    reads: Counter[str] = Counter()
    writes: Counter[str] = Counter()
    parse, guarded = notes._read_regular, memories.guarded_write

    def counted_parse(absolute: Path, rel: str) -> object:
        reads.update([rel])
        return parse(absolute, rel)

    def counted_write(path: Path, data: bytes, expected: str) -> object:
        rel = path.relative_to(app.root).as_posix()
        reads.update([rel])  # the guard reads the file to hash it
        writes.update([rel])
        return guarded(path, data, expected)

    monkeypatch.setattr(notes, "_read_regular", counted_parse)
    monkeypatch.setattr(memories, "guarded_write", counted_write)
    index = app.index()
    lance_writes: list[str] = []
    for name in ("apply", "clear", "optimize"):
        real = getattr(index, name)
        monkeypatch.setattr(index, name, lambda *a, _n=name, _r=real, **k: (
            lance_writes.append(_n), _r(*a, **k))[1])
    api = app.api(clock=lambda: REFERENCE)
    before = app.catalog.records_for([MEMORY])[MEMORY]
    for _ in range(20):
        api.call("touch", {"id": MEMORY_ID})
    assert writes == Counter() and reads == Counter({MEMORY: 1})
    assert app.sync.flush_usage().written == [MEMORY]
    assert reads == Counter({MEMORY: 2}) and writes == Counter({MEMORY: 1})
    assert lance_writes == []
    after = app.catalog.records_for([MEMORY])[MEMORY]
    assert after.file_hash != before.file_hash  # the catalog has the note as written
    assert after.file_hash == sha256_bytes((app.root / MEMORY).read_bytes())
    assert (after.mtime_ns, after.size) == (lambda st: (st.st_mtime_ns, st.st_size))(
        (app.root / MEMORY).stat())
    assert app.sync.sync_paths([MEMORY]).touched == 0  # the watcher's echo: nothing to do
    assert app.views.get(MEMORY_ID, REFERENCE).state.use_count == 26
    assert reads == Counter({MEMORY: 2})  # and neither needed the note read again


def test_the_watchers_echo_during_a_flush_reads_no_note(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The watcher may sync a flushed note while the flush is still writing others: the note
    is known as written from the moment it is, so that sync reads nothing either."""
    from vaultmem.vault import notes

    app.uses.touch(MEMORY_ID, REFERENCE)
    reads: Counter[str] = Counter()
    parse = notes._read_regular

    def counted_parse(absolute: Path, rel: str) -> object:
        reads.update([rel])
        return parse(absolute, rel)

    echoes = []
    _between_write_and_record(app, monkeypatch,
                              lambda: echoes.append(app.sync.sync_paths([MEMORY])))
    monkeypatch.setattr(notes, "_read_regular", counted_parse)
    assert app.sync.flush_usage().written == [MEMORY]
    assert reads == Counter() and [e.meta_changed for e in echoes] == [1]
    assert app.catalog.records_for([MEMORY])[MEMORY].file_hash == sha256_bytes(
        (app.root / MEMORY).read_bytes())


def test_a_note_edited_after_the_flush_is_read_again(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The catalog takes a flushed note as written only while the file is as written."""
    app.uses.touch(MEMORY_ID, REFERENCE)
    path = app.root / MEMORY

    def user_edit() -> None:
        path.write_text(path.read_text(encoding="utf-8") + "\nA line the user added.\n",
                        encoding="utf-8")

    _between_write_and_record(app, monkeypatch, user_edit)
    assert app.sync.flush_usage().written == [MEMORY]
    record = app.catalog.records_for([MEMORY])[MEMORY]
    assert record.file_hash == sha256_bytes(path.read_bytes())


def _between_write_and_record(
    app: App, monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]
) -> None:
    """Run `action` in the flush, after each note is written and before the catalog records
    it (where the watcher's echo or a user's edit may land)."""
    store = _store(app)
    flush = store.flush

    def flush_with_action(on_written: Callable[[Any], None] | None = None) -> Any:
        def written(note: Any) -> None:
            if on_written is not None:
                on_written(note)
            action()
        return flush(on_written=written)

    monkeypatch.setattr(store, "flush", flush_with_action)


def test_concurrent_touches_lose_no_increment(app: App, vault: Path) -> None:
    before = (vault / MEMORY).read_text(encoding="utf-8")

    def client() -> None:
        for _ in range(200):
            app.uses.touch(MEMORY_ID, REFERENCE)

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
    app = _app(tmp_path)
    journal = app.journal
    app.sync.reindex()
    for _ in range(3):
        app.uses.touch(MEMORY_ID, REFERENCE)
    # no flush, no close: as after kill -9; a new process opens the same journal
    app2 = _app(tmp_path)
    journal2 = app2.journal
    assert app2.views.get(MEMORY_ID, REFERENCE).state.use_count == 9
    _store(app2).flush()
    assert "stm_use_count: 9" in (vault / MEMORY).read_text(encoding="utf-8")
    for a, j in ((app, journal), (app2, journal2)):
        a.close()
        j.close()


def test_user_edit_while_a_write_is_pending_wins(app: App, vault: Path) -> None:
    app.uses.touch(MEMORY_ID, REFERENCE, boost=True)
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
    from vaultmem.errors import ConcurrentEdit
    from vaultmem.store import memory_store

    app.uses.touch(MEMORY_ID, REFERENCE)

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
    app.uses.touch(forget_id, REFERENCE)  # pending use_count 2
    to_wire(app.lifecycle.gc(REFERENCE.replace(year=2027), apply=True))
    archived = vault / "memories/archive/2026-09-20 pihole-container-restart-after-update.md"
    text = archived.read_text(encoding="utf-8")
    assert "stm_status: archived" in text and "stm_use_count: 2" in text
    assert _pending(app) == 0


def test_pinning_keeps_a_memory_from_being_forgotten(app: App, vault: Path) -> None:

    api = app.api(clock=lambda: REFERENCE)
    pihole = "d8768a8d-2adb-41e7-98f9-0fbdb7770399"  # would be forgotten at the reference time
    view = api.call("pin", {"id": pihole, "pinned": True})
    assert view["pinned"] is True and view["decision"] == "keep"
    assert view["use_count"] == 1  # pinning is not a use
    _store(app).flush()
    result = to_wire(app.lifecycle.gc(REFERENCE, apply=True))
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
