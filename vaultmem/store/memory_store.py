"""Memory notes on disk: find them, read their state, change it under the store's own lock.

The note's frontmatter is the source of truth. Every change of a memory's state goes through
the store, which reads the note once, applies a pure function and records the result, all under
its own lock (so no increment is lost and no write lands mid-move):

* `update` / `update_each`: a use, a pin, feedback. Written to the note at once
  (`StoreMode.IN_PROCESS`); in the daemon (`StoreMode.DAEMON`) recorded in the usage
  journal (durable at once, laid over the note on every read) and written by `flush`, many
  uses in one write. Either way the journal keeps this device's use counts (core.device_sync).
* `rewrite`: changes that must be in the note now (archive, promote, restore, merge,
  reconcile), with the sections vaultmem keeps in a memory note (Related, conflicting copies).
* `move_into`: a note into a folder, never overwriting.

The bytes are written by `vault.memories.edit_memory_note`: one guarded write that splices the
`stm_*` lines (and sections) into the text the store read, refused when the note changed since.
The notes are read and listed as their files hold them by `store.memory_files.MemoryFiles`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath

from vaultmem.core.device_sync import canonical_order, credit_uses, own_count, rebase
from vaultmem.core.memory import MemoryState, state_from_fields, state_to_fields
from vaultmem.errors import InvalidInput, NoteError, NotFound, VaultmemError
from vaultmem.index.catalog import Catalog
from vaultmem.store.journal import FlushReport, Pending, UsageJournal
from vaultmem.store.memory_files import MemoryFiles
from vaultmem.store.memory_notes import (
    UNLOADABLE,
    UNPARSED_REASON,
    MemoryNote,
    Rewrite,
    check_writable,
    looks_like_path,
    memory_state,
    read_memory,
    stm_updates,
    try_read_memory,
    unparsed_memory,
)
from vaultmem.store.mode import StoreMode
from vaultmem.store.snapshot import Snapshot
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.memories import NoteEdit, edit_memory_note, move_note, rename_note
from vaultmem.vault.memory_text import write_memory_text
from vaultmem.vault.notes import Note
from vaultmem.vault.paths import resolve_in_vault

Change = Callable[[MemoryNote], MemoryState | None]  # None: leave the memory as it is
Plan = Callable[[list[MemoryNote]], Sequence[Rewrite]]


class MemoryStore:
    def __init__(
        self, root: Path, rules: IgnoreRules, catalog: Catalog, journal: UsageJournal, *,
        mode: StoreMode = StoreMode.IN_PROCESS, device: str = "", archive_folder: str = "",
    ) -> None:
        self.root = root
        self.rules = rules
        self.catalog = catalog
        self.device = device  # the uses this store records are credited to it (core.device_sync)
        self.archive_folder = archive_folder
        # this device's use counts (durable, core.device_sync) and, in the daemon, the uses not
        # yet written to their notes
        self.journal = journal
        self.mode = mode
        # in the daemon: uses journalled (written by `flush`), memories listed from the catalog
        self._daemon = mode is StoreMode.DAEMON
        self._lock = threading.RLock()
        self._files = MemoryFiles(root, daemon=self._daemon)
        self._recording = threading.local()  # the events `recording` collects, per thread

    # finding ------------------------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        """A memory id, or a vault-relative / absolute note path → vault-relative path."""
        ref = ref.strip()
        if not ref:
            raise InvalidInput("give a memory id or a note path")
        paths = [p for p in self.catalog.paths_for_note_id(ref) if (self.root / p).is_file()]
        if paths:
            return self.canonical(paths)
        if looks_like_path(ref):
            path, _ = resolve_in_vault(self.root, ref)
            return path
        for memory in self.iter_memories():
            if memory.state.id == ref:
                return memory.path
        raise unparsed_memory(self.root, self._maybe_unparsed(), ref) or NotFound(
            f"no memory with id {ref!r} in this vault")

    def _maybe_unparsed(self) -> list[str]:
        """Notes whose frontmatter may not parse: so the catalog says; in-process, also the
        notes it has not seen as they are now."""
        snapshot = self.snapshot()
        records = snapshot.records
        unparsed = [path for path, record in records.items()
                    if record.reason.startswith(UNPARSED_REASON)]
        if not self._daemon:
            unparsed += [path for path, st in snapshot.scan.files.items()
                         if (record := records.get(path)) is None
                         or (record.mtime_ns, record.size) != (st.mtime_ns, st.size)]
        return unparsed

    def canonical(self, paths: list[str]) -> str:
        """Of several notes carrying one id, the memory itself (never a sync conflict copy
        while the original exists; see core.device_sync.canonical_order)."""
        return canonical_order(paths, self.archive_folder)[0]

    # reading: the note's state, with the uses pending here laid over it --------------------

    def load(self, ref: str) -> MemoryNote:
        path = self.resolve(ref)
        memory = self._files.read(path) or read_memory(self.root, path)  # not a memory: it says why
        return self._overlaid(memory, self._pending(memory.state.id))

    def try_load(self, path: str) -> MemoryNote | None:
        memory = self._files.read(path)
        return None if memory is None else self._overlaid(memory, self._pending(memory.state.id))

    def snapshot(self) -> Snapshot:
        """For one call that reads the whole catalog, the vault or every memory: each is read
        once, when first asked for; pass it to every listing the call makes."""
        return Snapshot(self.catalog, self.root, self.rules)

    def follow(self, snapshot: Snapshot, paths: Iterable[str]) -> None:
        """Bring `snapshot` up to date with what this call wrote or moved at `paths` (read
        again: just these rows and notes)."""
        changed = snapshot.follow(paths)
        if snapshot.memory_files is None:
            return
        kept = [m for m in snapshot.memory_files if m.path not in changed]
        found = [m for m in map(self._files.read, changed) if m is not None]
        snapshot.memory_files = sorted([*kept, *found], key=lambda m: m.path)

    def iter_memories(self, snapshot: Snapshot | None = None) -> Iterator[MemoryNote]:
        """Every memory in the vault once: of notes sharing an id (sync conflict copies) only
        the canonical one; `iter_all_memories` and `duplicates` show the copies."""
        groups: dict[str, list[MemoryNote]] = {}
        for memory in self.iter_all_memories(snapshot):
            groups.setdefault(memory.state.id, []).append(memory)
        chosen = []
        for group in groups.values():
            first = self.canonical([m.path for m in group]) if len(group) > 1 else group[0].path
            chosen.append(next(m for m in group if m.path == first))
        yield from sorted(chosen, key=lambda m: m.path)

    def iter_all_memories(self, snapshot: Snapshot | None = None) -> Iterator[MemoryNote]:
        """Every memory note in the vault, copies sharing an id included. In the daemon the
        watcher keeps the catalog current: listed from it, with the pending states read in one
        query up front (one per memory would queue behind every touch under load)."""
        files = self._files.listed(snapshot or self.snapshot())
        if not self._daemon:
            yield from files
            return
        pending = {entry.memory_id: entry for entry in self.journal.all()}
        for memory in files:
            yield self._overlaid(memory, pending.get(memory.state.id))

    def duplicates(self, snapshot: Snapshot | None = None) -> dict[str, list[MemoryNote]]:
        """{memory id: its notes as their files hold them, canonical first} for every id more
        than one note carries (in the daemon, unless the snapshot holds every memory already,
        from the catalog's paths per id: only the notes that share an id are read)."""
        groups: dict[str, list[MemoryNote]] = {}
        snapshot = snapshot or self.snapshot()
        if snapshot.memory_files is not None or not self._daemon:
            for memory in self._files.listed(snapshot):
                groups.setdefault(memory.state.id, []).append(memory)
        else:
            for memory_id, paths in self.catalog.duplicate_ids().items():
                loaded = [m for m in map(self._files.read, paths) if m is not None]
                groups[memory_id] = [m for m in loaded if m.state.id == memory_id]
        result = {}
        for memory_id, group in sorted(groups.items()):
            if len(group) > 1:
                order = canonical_order([m.path for m in group], self.archive_folder)
                result[memory_id] = sorted(group, key=lambda m: order.index(m.path))
        return result

    # changing -----------------------------------------------------------------------------

    def update(self, ref: str, change: Change) -> MemoryNote:
        """Load the memory, apply `change` (a pure function of it; it may raise to refuse) and
        record the new state, all under the store's lock. Returns the memory as recorded."""
        return self.update_each([ref], change)[0]

    def update_each(self, refs: Sequence[str], change: Change) -> list[MemoryNote]:
        """`update` for several memories, all or nothing: every one is loaded and changed
        before any is recorded."""
        with self._lock:
            changed = [(memory, change(memory)) for memory in map(self.load, refs)]
            for memory, new in changed:
                if new is not None:
                    check_writable(memory)
            return [memory if new is None else self._record(memory, new)
                    for memory, new in changed]

    def rewrite(self, paths: Sequence[str], plan: Plan, *, strict: bool = False
                ) -> list[MemoryNote]:
        """Write changes to notes now, under the store's lock. `plan` gets the memories at
        `paths` as they are now (read afresh; the uses pending here laid over each memory's
        canonical note, never over a copy; a path that holds no memory is left out, or raises
        why when `strict`) and returns the writes to make, made in order, each guarded
        (ConcurrentEdit when its note changed since it was read). `plan` runs under the lock:
        it may create notes, it must not wait for another thread."""
        with self._lock:
            current, overlaid = self._current(paths, strict=strict)
            return [self._write(change, settles=change.memory.path in overlaid)
                    for change in plan(current)]

    def move_into(self, path: str, folder: str) -> str | None:
        """Move a memory's note into `folder` (where it stays when it is there already; a taken
        name gets a number); None when no note is at `path` any more. Under the store's lock:
        a flush never writes the note between its new name's creation and its old one's
        removal."""
        if PurePosixPath(path).parent == PurePosixPath(folder.strip("/")):
            return path
        with self._lock:
            moved = move_note(self.root, path, folder)
        if moved is not None:
            self._note_event({"move": path, "to": moved})
        return moved

    @contextmanager
    def recording(self) -> Iterator[list[dict[str, str]]]:
        """Collect what this thread's writes and moves do to notes while the block runs: a
        write as `{"write": path, "before": text, "after": text}`, a move as `{"move": path,
        "to": path}` (what `engine.undo` needs to put them back exactly)."""
        events: list[dict[str, str]] = []
        self._recording.events = events
        try:
            yield events
        finally:
            self._recording.events = None

    def _note_event(self, event: dict[str, str]) -> None:
        events = getattr(self._recording, "events", None)
        if events is not None:
            events.append(event)

    def rewrite_text(self, ref: str, change: Callable[[MemoryNote], str]) -> MemoryNote:
        """Replace a memory note's text with `change(memory)` (the memory read afresh, under
        the store's lock), in one guarded write: ConcurrentEdit when the note changed since it
        was read. `change` must keep the stm_* lines (an edit of the memory's own words);
        the uses pending here stay pending and are spliced into the new text by the flush."""
        with self._lock:
            memory = read_memory(self.root, self.resolve(ref))
            check_writable(memory)
            new_text = change(memory)
            if new_text == memory.text:
                return self._overlaid(memory, self._pending(memory.state.id))
            try:
                note, text = write_memory_text(self.root, memory.path, new_text,
                                               memory.note.file_hash)
            finally:
                self._files.forget(memory.path)
            written = MemoryNote(memory.path, note, memory_state(note), text)
            return self._overlaid(written, self._pending(written.state.id))

    def rename_to(self, path: str, name: str) -> str | None:
        """Give a memory's note another file name in its folder (under the store's lock, like
        `move_into`); None when the name is taken or the note is gone."""
        with self._lock:
            renamed = rename_note(self.root, path, name)
        if renamed is not None:
            self._note_event({"move": path, "to": renamed})
        return renamed

    def flush(self, on_written: Callable[[Note], None] | None = None) -> FlushReport:
        """Write every pending state into its note (guarded); failures stay pending.
        `on_written` hears of each note as written, as soon as it is."""
        report = FlushReport(written=[], retry=[])
        for pending in self.journal.all() if self._daemon else ():
            try:
                note = self._flush_one(pending)
            except (NoteError, NotFound, OSError) as exc:  # ConcurrentEdit is a NoteError
                message = exc.message if isinstance(exc, VaultmemError) else str(exc)
                report.retry.append((pending.path, message))
                continue
            if note is not None:
                report.written.append(note.path)
                if on_written is not None:
                    on_written(note)
        return report

    # recording ----------------------------------------------------------------------------

    def _record(self, memory: MemoryNote, new: MemoryState) -> MemoryNote:
        new = self._credited(memory.state, new)
        own = own_count(new, self.device) if self.device else 0
        if self._daemon:
            credit = (self.device, own) if self.device else None
            self.journal.put(new.id, memory.path, state_to_fields(new), credit)
            return replace(memory, state=new)
        written = self._write(Rewrite(memory, new), settles=False)
        if self.device:
            self.journal.note_credit(new.id, self.device, own)
        return written

    def _credited(self, old: MemoryState, new: MemoryState) -> MemoryState:
        """`new` with the uses it adds to `old` credited to this device, continuing from the
        highest count this device ever gave itself for the memory (core.device_sync.credit_uses)."""
        known = self.journal.known(old.id, self.device) if self.device else 0
        return credit_uses(old, new, self.device, known)

    def _write(self, change: Rewrite, *, settles: bool) -> MemoryNote:
        """One guarded write; `settles`: the memory's pending uses are in the state written."""
        memory = change.memory
        written = self._edit(change)
        if written is not None:
            self._note_event({"write": memory.path, "before": memory.text, "after": written[1]})
        if settles and self._daemon and change.state.id == memory.state.id:
            self.journal.clear(memory.state.id)
        note, text = written if written is not None else (memory.note, memory.text)
        return MemoryNote(memory.path, note, memory_state(note), text)

    def _edit(self, change: Rewrite) -> tuple[Note, str] | None:
        memory = change.memory
        check_writable(memory)
        updates = stm_updates(memory_state(memory.note), change.state)  # from the file's own
        edit = NoteEdit(updates, change.related, change.copy_links, change.section)
        try:
            written = edit_memory_note(self.root, memory.path, memory.text,
                                       memory.note.file_hash, edit)
        except (NoteError, OSError):  # ConcurrentEdit is a NoteError: the cache is stale
            self._files.forget(memory.path)
            raise
        if written is not None:  # the next read needs no parse
            note, text = written
            self._files.remember(MemoryNote(memory.path, note, memory_state(note), text))
        return written

    def _flush_one(self, pending: Pending) -> Note | None:
        with self._lock:
            memory = self._holder(pending)
            if memory is None:
                self.journal.clear(pending.memory_id, pending.version)  # memory gone
                return None
            new = rebase(state_from_fields(pending.fields, tags=memory.note.tags), memory.state)
            written = self._edit(Rewrite(memory, new))
            self.journal.clear(pending.memory_id, pending.version)
            return written[0] if written is not None else None

    def _holder(self, pending: Pending) -> MemoryNote | None:
        """The memory as its file holds it, found at its recorded path or by id; None only
        when no note in the vault has its id (the catalog may still show a renamed note at its
        old path, and dropping the pending state then would lose recorded uses)."""
        memory = self._files.read(pending.path)  # as parsed at the touch, if the file is unchanged
        if memory is None or memory.state.id != pending.memory_id:
            try:
                memory = try_read_memory(self.root, self.resolve(pending.memory_id))
            except NotFound:
                memory = None
        if memory is not None and memory.state.id == pending.memory_id:
            return memory
        found = [m.path for m in self._files.scan(self.snapshot())
                 if m.state.id == pending.memory_id]
        return try_read_memory(self.root, self.canonical(found)) if found else None

    # plumbing -----------------------------------------------------------------------------

    def _current(self, paths: Sequence[str], *, strict: bool
                 ) -> tuple[list[MemoryNote], set[str]]:
        found = []
        for path in paths:
            try:
                found.append(read_memory(self.root, path))
            except UNLOADABLE:
                if strict:
                    raise
        by_id: dict[str, list[str]] = {}
        for memory in found:
            by_id.setdefault(memory.state.id, []).append(memory.path)
        firsts = {self.canonical(group) for group in by_id.values()}
        return ([self._overlaid(m, self._pending(m.state.id)) if m.path in firsts else m
                 for m in found], firsts)

    def _pending(self, memory_id: str) -> Pending | None:
        return self.journal.get(memory_id) if self._daemon else None

    def _overlaid(self, memory: MemoryNote, pending: Pending | None) -> MemoryNote:
        if pending is None:
            return memory
        # another device's uses may have reached the note through sync since: keep both
        state = rebase(state_from_fields(pending.fields, tags=memory.note.tags), memory.state)
        return replace(memory, state=state)
