"""A large note never holds other notes' indexing: smallest first within a sync, slices with
waiting changes let in between them, and the counts of the work visible while it runs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

import pytest

from vaultmem.config import Settings
from vaultmem.core.chunking import Chunk, note_chunks
from vaultmem.errors import Stopping
from vaultmem.index import inference
from vaultmem.index.base import Vector
from vaultmem.index.catalog import Catalog
from vaultmem.index.embedders import FakeEmbedder, SentenceTransformerEmbedder
from vaultmem.pipeline import note_batches as batches_module
from vaultmem.pipeline.index_ports import SyncReport
from vaultmem.pipeline.indexer import Indexer
from vaultmem.pipeline.note_batches import LARGE_NOTE_BYTES
from vaultmem.pipeline.progress import IDLE
from vaultmem.pipeline.slices import LARGE_PIECE_CHUNKS, SLICE_CHUNKS
from vaultmem.pipeline.sync_gate import SyncGate
from vaultmem.settings_params import indexer_options
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import Note, RawNote

from .test_indexer import CountingStore, write

pytestmark = pytest.mark.timeout(60)

BIG = "big/Large note.md"
MARK = "zebraword"  # only the large note's chunks hold it
WAIT_S = 20.0
ALL = 100  # permits enough for every piece of a large note here


def big_text(sections: int) -> str:
    body = " ".join(f"{MARK} filler sentence number {n} about nothing much." for n in range(14))
    return "# Large note\n\n" + "\n\n".join(
        f"## Part {n}\n\n{body}" for n in range(sections)) + "\n"


class GatedEmbedder(FakeEmbedder):
    """Embeds the large note's pieces one at a time: each waits until the test allows it."""

    def __init__(self) -> None:
        super().__init__(32)
        self.allowed = threading.Semaphore(0)
        self.big_slices = 0
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        if any(MARK in text for text in texts):
            assert self.allowed.acquire(timeout=WAIT_S), "the test never allowed this slice"
            self.big_slices += 1
        return super().embed(texts)


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[Path, Catalog, Indexer, GatedEmbedder]]:
    vault = tmp_path / "vault"
    for n in range(3):
        write(vault, f"notes/small {n}.md", f"# Small {n}\n\nA short note about topic {n}.\n")
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    embedder = GatedEmbedder()
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog,
                      CountingStore(tmp_path / "lance"), embedder, indexer_options(Settings()))
    indexer.sync()
    yield vault, catalog, indexer, embedder
    catalog.close()


def _chunks_done(indexer: Indexer) -> int:
    """The chunks of the note embedded in slices now that are done (0: no such note)."""
    current = indexer.progress.snapshot().current
    return current.chunks_done if current is not None else 0


def wait(condition: object, what: str) -> None:
    event = threading.Event()
    for _ in range(int(WAIT_S / 0.01)):
        if callable(condition) and condition():
            return
        event.wait(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def test_small_notes_in_the_same_sync_go_before_the_large_one(parts: tuple[
        Path, Catalog, Indexer, GatedEmbedder]) -> None:
    vault, _catalog, indexer, embedder = parts
    write(vault, BIG, big_text(SLICE_CHUNKS * 2 + 5))
    for n in range(3):
        write(vault, f"notes/small {n}.md", f"# Small {n}\n\nEdited note about topic {n}.\n")
    seen_between: list[frozenset[str]] = []
    for _ in range(ALL):
        embedder.allowed.release()
    report = indexer.sync(paths=[BIG, *(f"notes/small {n}.md" for n in range(3))],
                          between=seen_between.append)
    assert (report.added, report.changed) == (1, 3)
    pieces = -(-(SLICE_CHUNKS * 2 + 5) // LARGE_PIECE_CHUNKS)
    assert embedder.big_slices == pieces
    # the small notes were embedded in a call before any of the large note's slices
    first_big = next(i for i, call in enumerate(embedder.calls) if any(MARK in t for t in call))
    smalls = [i for i, call in enumerate(embedder.calls) if any("Edited" in t for t in call)]
    assert smalls and max(smalls) < first_big
    # between the pieces, only the large note was still unwritten
    assert seen_between == [frozenset({BIG})] * (pieces - 1)


def test_a_large_note_is_parsed_only_after_the_small_notes_of_its_sync_are_written(
        parts: tuple[Path, Catalog, Indexer, GatedEmbedder],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its Markdown takes a while to parse (~0.7 ms per KB): the sync fingerprints it from its
    bytes and parses it when its turn comes, after the small notes are in the index."""
    vault, catalog, indexer, embedder = parts
    write(vault, BIG, big_text(SLICE_CHUNKS * 8))
    assert (vault / BIG).stat().st_size > LARGE_NOTE_BYTES
    smalls = [f"notes/small {n}.md" for n in range(3)]
    for n, path in enumerate(smalls):
        write(vault, path, f"# Small {n}\n\nEdited note about topic {n}.\n")
    indexed_at_parse: list[set[str]] = []
    parse = RawNote.parse

    def watched(raw: RawNote) -> Note:
        if raw.path == BIG:
            stored = indexer._store().stored_chunks(smalls)
            indexed_at_parse.append({c.path for c in stored if "Edited" in c.text})
        return parse(raw)

    monkeypatch.setattr(RawNote, "parse", watched)
    for _ in range(ALL):
        embedder.allowed.release()
    report = indexer.sync(paths=[BIG, *smalls])
    assert (report.added, report.changed) == (1, 3)
    assert indexed_at_parse == [set(smalls)]  # parsed once, the small notes already in
    assert catalog.records_for([BIG])[BIG].chunk_count >= SLICE_CHUNKS * 8


def test_an_edit_waiting_while_a_large_note_is_parsed_is_synced_during_the_parse(
        parts: tuple[Path, Catalog, Indexer, GatedEmbedder],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The large note's parse runs apart (vault/parse_apart.py) and the sync lets waiting
    edits in meanwhile; here the parse waits until the edit is in."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 8))
    assert (vault / BIG).stat().st_size > LARGE_NOTE_BYTES
    edit = "notes/new edit.md"
    queued = threading.Event()
    in_during_parse: list[bool] = []

    def parse_apart(
            raw: RawNote, wait: Callable[[], None], **sizes: int) -> tuple[Note, list[Chunk]]:
        assert queued.wait(WAIT_S)
        for _ in range(int(WAIT_S / 0.01)):
            wait()
            if edit in catalog.records_for([edit]):
                break
            threading.Event().wait(0.01)
        in_during_parse.append(edit in catalog.records_for([edit]))
        note = raw.parse()
        return note, note_chunks(note.body, note.title, **sizes)

    monkeypatch.setattr(batches_module, "parse_apart", parse_apart)
    for _ in range(ALL):
        embedder.allowed.release()
    big_done: list[SyncReport] = []
    big = threading.Thread(target=lambda: big_done.append(gate.sync_paths([BIG], {})))
    big.start()
    small_done: list[SyncReport] = []
    try:
        wait(lambda: indexer.progress.snapshot().running, "the large note's sync")
        write(vault, edit, "# New edit\n\nWritten while the large note is parsed.\n")
        small = threading.Thread(target=lambda: small_done.append(gate.sync_paths([edit], {})))
        small.start()
        wait(lambda: gate.queued() == 1, "the edit to wait for the writer")
        queued.set()
        small.join(WAIT_S)
    finally:
        queued.set()
        big.join(WAIT_S)
    assert in_during_parse == [True]
    assert small_done and small_done[0].added == 1
    assert big_done and big_done[0].added == 1


def test_a_stop_during_a_large_notes_parse_ends_the_sync(
        parts: tuple[Path, Catalog, Indexer, GatedEmbedder],
        monkeypatch: pytest.MonkeyPatch) -> None:
    vault, catalog, indexer, _embedder = parts
    write(vault, BIG, big_text(SLICE_CHUNKS * 8))

    def parse_apart(
            raw: RawNote, wait: Callable[[], None], **sizes: int) -> tuple[Note, list[Chunk]]:
        indexer.stop()
        wait()
        raise AssertionError("wait() did not end the sync")

    monkeypatch.setattr(batches_module, "parse_apart", parse_apart)
    with pytest.raises(Stopping):
        indexer.sync(paths=[BIG])
    assert BIG not in catalog.records_for([BIG])


def test_a_waiting_edit_is_synced_between_the_slices_of_a_large_note(parts: tuple[
        Path, Catalog, Indexer, GatedEmbedder]) -> None:
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 3))
    big_done: list[SyncReport] = []
    big = threading.Thread(target=lambda: big_done.append(gate.sync_paths([BIG], {})))
    embedder.allowed.release()  # the first piece only
    big.start()
    try:
        wait(lambda: _chunks_done(indexer), "the first piece")
        snapshot = indexer.progress.snapshot()
        assert snapshot.running and snapshot.kind == "changes"
        assert snapshot.current is not None and snapshot.current.path == BIG
        assert snapshot.current.chunks_done == LARGE_PIECE_CHUNKS
        assert snapshot.current.chunks_total >= SLICE_CHUNKS * 3

        write(vault, "notes/new edit.md", "# New edit\n\nWritten while the large note embeds.\n")
        small_done: list[SyncReport] = []
        small = threading.Thread(
            target=lambda: small_done.append(gate.sync_paths(["notes/new edit.md"], {})))
        small.start()
        wait(lambda: gate.queued() == 1, "the edit to wait for the writer")
        embedder.allowed.release()  # the second piece; the edit goes in after it
        small.join(WAIT_S)
        assert small_done and small_done[0].added == 1
        assert "notes/new edit.md" in catalog.records_for(["notes/new edit.md"])
        assert not big_done and big.is_alive()  # the large note is still being embedded
        assert BIG not in catalog.records_for([BIG])
    finally:
        for _ in range(ALL):
            embedder.allowed.release()
        big.join(WAIT_S)
    assert big_done and big_done[0].added == 1
    assert indexer.progress.snapshot() == IDLE


def test_an_edit_to_the_note_being_embedded_waits_for_it(parts: tuple[
        Path, Catalog, Indexer, GatedEmbedder]) -> None:
    """The running sync holds the older text of its own notes: a newer edit of one of them is
    synced after it, so the newer text wins."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 2))
    embedder.allowed.release()
    big = threading.Thread(target=lambda: gate.sync_paths([BIG], {}))
    big.start()
    again: list[SyncReport] = []
    try:
        wait(lambda: embedder.big_slices == 1, "the first slice")
        write(vault, BIG, "# Large note\n\nNow short.\n")
        second = threading.Thread(target=lambda: again.append(gate.sync_paths([BIG], {})))
        second.start()
        wait(lambda: gate.queued() == 1, "the second sync to wait")
        for _ in range(ALL):
            embedder.allowed.release()
        big.join(WAIT_S)
        second.join(WAIT_S)
    finally:
        for _ in range(ALL):
            embedder.allowed.release()
        big.join(WAIT_S)
    assert again and again[0].changed == 1
    assert catalog.records_for([BIG])[BIG].chunk_count == 1


def test_a_failing_sync_let_in_between_fails_its_caller_only(
        parts: tuple[Path, Catalog, Indexer, GatedEmbedder],
        monkeypatch: pytest.MonkeyPatch) -> None:
    vault, _catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 2))
    real_sync = indexer.sync

    def sync(paths: Collection[str] | None = None, *args: object, **kwargs: object) -> SyncReport:
        if paths is not None and "notes/broken.md" in paths:
            raise RuntimeError("disk on fire")
        return real_sync(paths, *args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(indexer, "sync", sync)
    embedder.allowed.release()
    big_done: list[SyncReport] = []
    big = threading.Thread(target=lambda: big_done.append(gate.sync_paths([BIG], {})))
    big.start()
    errors: list[BaseException] = []

    def broken() -> None:
        try:
            gate.sync_paths(["notes/broken.md"], {})
        except RuntimeError as exc:
            errors.append(exc)
    try:
        wait(lambda: embedder.big_slices == 1, "the first slice")
        other = threading.Thread(target=broken)
        other.start()
        wait(lambda: gate.queued() == 1, "the broken sync to wait")
        for _ in range(ALL):
            embedder.allowed.release()
        other.join(WAIT_S)
    finally:
        for _ in range(ALL):
            embedder.allowed.release()
        big.join(WAIT_S)
    assert [str(e) for e in errors] == ["disk on fire"]
    assert big_done and big_done[0].added == 1


def test_a_sync_takes_changes_from_a_queue_on_its_own_thread(parts: tuple[
        Path, Catalog, Indexer, GatedEmbedder]) -> None:
    """The watcher's thread may be the one embedding the large note: the gate takes its next
    batch from the watcher's queue between slices, not only from other waiting callers."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 2))
    write(vault, "notes/queued.md", "# Queued\n\nWritten while the large note embeds.\n")
    queue = {"notes/queued.md", BIG}
    offered: list[frozenset[str]] = []
    reports: list[tuple[SyncReport, bool]] = []

    def take(unwritten: frozenset[str]) -> tuple[Collection[str], dict[str, object]] | None:
        offered.append(unwritten)
        paths = {p for p in queue if p not in unwritten}
        queue.difference_update(paths)
        return (paths, {}) if paths else None
    gate.let_in(take, lambda report: reports.append(  # type: ignore[arg-type]
        (report, BIG in catalog.records_for([BIG]))))
    for _ in range(ALL):
        embedder.allowed.release()
    big = gate.sync_paths([BIG], {})
    assert big.added == 1
    assert offered and offered[0] == frozenset({BIG})
    assert [(r.added, written) for r, written in reports] == [(1, False)]  # before the big one
    assert queue == {BIG}  # still queued: the running sync had it to write


class _StandInModel:
    """The model behind a real embedder's inference thread: records each model call (the
    texts' kinds); the first call with the large note's text blocks until released."""

    def __init__(self) -> None:
        self.kinds: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: list[str], **options: object) -> Vector:
        if any(MARK in text for text in texts) and not self.started.is_set():
            self.started.set()
            assert self.release.wait(WAIT_S), "the test never released the first piece"
        self.kinds.append(["big" if MARK in t else "save" if "save" in t else "edit"
                           for t in texts])
        return FakeEmbedder(32).embed(texts)


def _queued_texts() -> list[str]:
    return [text for task in list(inference.shared()._queue.queue) if task[3]
            for text in task[3][0]]


@pytest.fixture
def one_inference_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """One inference thread, as the torch runtime has it (an ONNX embedder loaded by an earlier
    test in this process widened the shared one to calls side by side); closed afterwards."""
    monkeypatch.setattr(inference, "_SHARED", [])
    yield
    inference.shared().close()


@pytest.mark.usefixtures("one_inference_thread")
def test_other_embeddings_run_after_the_large_notes_call_in_progress_not_its_other_pieces(
        tmp_path: Path) -> None:
    """Through the real inference thread: an edit let in while a large note is embedded, and
    another thread's embedding (a save's similarity check), run right after the model call in
    progress, before any more of the large note, and that call held a short piece only."""
    vault = tmp_path / "vault"
    write(vault, "notes/small 0.md", "# Small 0\n\nA short note about topic 0.\n")
    model = _StandInModel()
    embedder = SentenceTransformerEmbedder(batch_size=4)  # small batches, as the ONNX runtime's
    embedder._model, embedder._dim = model, 32  # a stand-in: no weights needed
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    indexer = Indexer(vault, IgnoreRules.from_vault(vault), catalog,
                      CountingStore(tmp_path / "lance"), embedder, indexer_options(Settings()))
    indexer.sync()
    model.kinds.clear()
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 3))
    big_done: list[SyncReport] = []
    big = threading.Thread(target=lambda: big_done.append(gate.sync_paths([BIG], {})))
    big.start()
    threads = [big]
    try:
        assert model.started.wait(WAIT_S)
        write(vault, "notes/new edit.md", "# New edit\n\nWritten while the large note embeds.\n")
        small_done: list[SyncReport] = []
        threads.append(threading.Thread(
            target=lambda: small_done.append(gate.sync_paths(["notes/new edit.md"], {}))))
        threads[-1].start()
        wait(lambda: gate.queued() == 1, "the edit to wait for the writer")
        threads.append(threading.Thread(target=embedder.embed, args=(["a save to check"],)))
        threads[-1].start()
        wait(lambda: "a save to check" in _queued_texts(), "the save's embedding to queue")
    finally:
        model.release.set()
        for thread in threads:
            thread.join(WAIT_S)
    catalog.close()
    assert big_done and big_done[0].added == 1
    assert small_done and small_done[0].added == 1
    calls = [kinds[0] for kinds in model.kinds]
    assert len(model.kinds[0]) <= LARGE_PIECE_CHUNKS and calls[0] == "big"
    assert sorted(calls[1:3]) == ["edit", "save"]  # before any more of the large note
    assert set(calls[3:]) == {"big"}


def test_a_stop_ends_a_large_note_between_slices_and_the_next_start_indexes_it(
        tmp_path: Path, parts: tuple[Path, Catalog, Indexer, GatedEmbedder]) -> None:
    """A daemon stopping while a large note is embedded: the sync ends before its next slice,
    the note is neither recorded nor partly written, and a new indexer indexes it whole."""
    vault, catalog, indexer, embedder = parts
    gate = SyncGate(indexer)
    write(vault, BIG, big_text(SLICE_CHUNKS * 6))
    failed: list[BaseException] = []

    def run() -> None:
        try:
            gate.sync_paths([BIG], {})
        except BaseException as exc:
            failed.append(exc)

    embedder.allowed.release()  # the first slice only
    big = threading.Thread(target=run)
    big.start()
    try:
        wait(lambda: _chunks_done(indexer), "the first slice")
        indexer.stop()
    finally:
        for _ in range(ALL):
            embedder.allowed.release()
        big.join(WAIT_S)
    assert not big.is_alive() and len(failed) == 1 and isinstance(failed[0], Stopping)
    assert embedder.big_slices <= 2  # the slice under way when the stop came, at most
    assert BIG not in catalog.records_for([BIG])
    store = indexer._store()
    assert not store.stored_chunks([BIG])
    # the stopped indexer stays stopped: a later sync needing the model ends at once
    with pytest.raises(Stopping):
        indexer.sync(paths=[BIG])
    assert embedder.big_slices <= 2

    restarted = Indexer(vault, IgnoreRules.from_vault(vault), catalog, store, embedder,
                        indexer_options(Settings()))
    report = restarted.sync()
    assert report.added == 1
    record = catalog.records_for([BIG])[BIG]
    stored = store.stored_chunks([BIG])
    assert record.chunk_count == len(stored) >= SLICE_CHUNKS * 6
