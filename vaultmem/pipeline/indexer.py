"""Keep the derived index in step with the vault: scan, plan (pure), then apply in batches.

Unchanged notes are recognised by (mtime, size) and confirmed by content hash; unchanged bodies
are never re-embedded, and moves keep their vectors. An edited note's chunks whose embedding
input (note title, heading, text) is unchanged keep their stored vectors: only new or changed
chunks are embedded. A frontmatter-only change (a flush of
`stm_*` state, a new tag) is a catalog write only: the chunk store is written only when the
names its chunks carry for the full-text index change. Embedding work is batched across notes
and each batch is one chunk-store write. A batch sync (the watcher's) reads only its own paths'
catalog rows.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from vaultmem.core.planning import Fingerprint, SyncPlan, plan_sync
from vaultmem.errors import InvalidInput, NoteError, NotFound
from vaultmem.index.base import Embedder, NoteRecord, searchable_title
from vaultmem.index.catalog import Catalog
from vaultmem.index.upkeep import Occasion
from vaultmem.pipeline.index_ports import Progress, StoreHandle, SyncReport
from vaultmem.pipeline.note_batches import LARGE_NOTE_BYTES, NoteBatches, Parsed, order, read_held
from vaultmem.pipeline.note_records import FAILED, SKIPPED, note_record, placeholder
from vaultmem.pipeline.progress import BUILDING_KINDS, CHANGES, REBUILD, SCAN, IndexProgress, Run
from vaultmem.pipeline.slices import Between, SlicedEmbedding, bulk_work
from vaultmem.pipeline.words_first import WordsFirst, words_only
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import Note, RawNote, read_listed_note, read_note, read_raw_note
from vaultmem.vault.scan import FileStat, scan_one, scan_vault


@dataclass(frozen=True)
class IndexerOptions:
    chunk_max_chars: int
    chunk_min_chars: int
    batch_chunks: int = 256  # not a setting: chunks embedded per index write

    @property
    def chunking(self) -> str:
        """The chunk sizes, as the catalog records them: stored chunks cut otherwise are
        rebuilt."""
        return f"{self.chunk_max_chars}/{self.chunk_min_chars}"


class Indexer:
    def __init__(
        self,
        root: Path,
        rules: IgnoreRules,
        catalog: Catalog,
        store: StoreHandle,
        embedder: Embedder,
        options: IndexerOptions,
    ) -> None:
        self.root = root
        self.rules = rules
        self.catalog = catalog
        self._store = store
        self.embedder = embedder
        self.options = options
        self.progress = IndexProgress()
        self._identity_checked = False
        self._slices = SlicedEmbedding(embedder, self.progress)
        self._batches = NoteBatches(root, store, self._slices,
                                    (options.chunk_max_chars, options.chunk_min_chars),
                                    options.batch_chunks)
        self._words = WordsFirst(store, catalog,
                                 (options.chunk_max_chars, options.chunk_min_chars),
                                 lambda: embedder.dim, self._slices.check_stopping)

    # public -------------------------------------------------------------------------------

    def sync(
        self, paths: Collection[str] | None = None, progress: Progress | None = None,
        written: Mapping[str, Note] | None = None, between: Between | None = None,
        *, kind: str | None = None,
    ) -> SyncReport:
        """Bring the index in line with the vault: all of it, or just `paths` (watcher).
        `written`: notes vaultmem itself just wrote, parsed; one whose file still has the
        written mtime and size is taken as it is instead of being read again. `between`:
        called between embedding slices (see the module's docstring)."""
        run = self.progress.begin(kind or (SCAN if paths is None else CHANGES))
        try:
            report = self._sync(paths, progress, written or {}, between, run)
            if self.progress.outermost(run) and _wrote_text(report):
                # rows whose text searches leave out while many wait (lance.py): not after
                # this sync's end (an in-process search follows it at once)
                self._store().upkeep(Occasion.SYNCED)
            return report
        finally:
            self.progress.end(run)

    def _sync(
        self, paths: Collection[str] | None, progress: Progress | None,
        written: Mapping[str, Note], between: Between | None, run: Run,
    ) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport(rebuilt_reason=self._check_identity(full=paths is None))
        known = self.catalog.records() if paths is None else self.catalog.records_for(paths)
        stats, skipped = self._stat(paths)
        parsed: Parsed = {path: note for path, note in written.items()
                  if path in stats and (stats[path].mtime_ns, stats[path].size)
                  == (note.mtime_ns, note.size)}
        failed: dict[str, str] = {}
        # the first index or a rebuild: notes are read, not parsed, until the words pass
        disk = self._disk_fingerprints(stats, known, parsed, failed,
                                       raw=paths is None and not known)
        index = {
            path: Fingerprint(rec.body_hash, rec.file_hash)
            for path, rec in known.items()
            if rec.status != SKIPPED
        }
        plan = plan_sync(disk, index)
        self._apply_metadata(plan, parsed, known, report)
        self._apply_failures(failed, known)
        self._record_skipped(skipped, known, report)
        self._refresh_stat_only(stats, known, plan, failed)
        with bulk_work(self.embedder):  # its working memory kept from slice to slice
            self._apply_embeds(plan, parsed, known, report, progress, between, run)
        report.failed = len(failed)
        report.failures = sorted(failed.items())
        report.seconds = time.perf_counter() - started
        return report

    def stop(self) -> None:
        """From any thread: a running sync, and every later one, ends with `Stopping` before
        its next embedding slice (model call), leaving the notes it has not written unrecorded
        (the next start indexes them); what it wrote, a whole batch at a time, stays."""
        self._slices.stop()

    def rebuild(
        self, progress: Progress | None = None, between: Between | None = None
    ) -> SyncReport:
        """Drop everything derived and index the whole vault again."""
        self._clear_all()
        report = self.sync(progress=progress, between=between, kind=REBUILD)
        report.rebuilt_reason = report.rebuilt_reason or "full rebuild requested"
        return report

    # identity -----------------------------------------------------------------------------

    def _check_identity(self, *, full: bool) -> str | None:
        """On the first sync and on every full one. A batch sync after that trusts the check:
        only a rebuild (which redoes it) changes the identity within this process."""
        if self._identity_checked and not full:
            return None
        reason = self._ensure_identity()
        self._identity_checked = True
        return reason

    def _ensure_identity(self) -> str | None:
        reason = self._store.identity_problem()
        if reason is None and not self._store.exists() and self.catalog.chunk_total() > 0:
            reason = "the chunk index was missing"
        if self.catalog.matches(self.embedder.name) and reason is None:
            reason = self._chunking_problem()
            if reason is None:
                return None
        previous = self.catalog.identity()
        self._clear_all()
        if reason:
            return str(reason)
        if previous is None:
            return None  # first run: nothing to rebuild
        return f"index identity changed from {previous} to {self.embedder.name!r}"

    def _chunking_problem(self) -> str | None:
        """Why the stored chunks must be cut again: the chunk sizes changed since. A catalog
        from before they were recorded takes today's (its chunks were cut with the defaults
        of then, which are today's unless a setting changed them)."""
        recorded, chunking = self.catalog.chunking(), self.options.chunking
        if recorded is None:
            self.catalog.record_chunking(chunking)
            return None
        if recorded == chunking:
            return None
        return f"chunk sizes changed from {recorded} to {chunking} characters"

    def _clear_all(self) -> None:
        self._store().clear()
        self.catalog.reset(self.embedder.name, self.options.chunking)

    # snapshot -----------------------------------------------------------------------------

    def _stat(
        self, paths: Collection[str] | None
    ) -> tuple[dict[str, FileStat], list[tuple[str, str]]]:
        if paths is None:
            scan = scan_vault(self.root, self.rules)
            return scan.files, scan.skipped
        files: dict[str, FileStat] = {}
        skipped: list[tuple[str, str]] = []
        for path in sorted(set(paths)):
            one = scan_one(self.root, path, self.rules)
            files.update(one.files)
            skipped.extend(one.skipped)
        return files, skipped

    def _disk_fingerprints(
        self,
        stats: dict[str, FileStat],
        known: dict[str, NoteRecord],
        parsed: Parsed,
        failed: dict[str, str],
        *,
        raw: bool = False,
    ) -> dict[str, Fingerprint]:
        """`raw`: nothing is indexed (a first index, a rebuild): every note is kept as its
        bytes (parsed when its words are written), not fingerprinted (all are new)."""
        disk: dict[str, Fingerprint] = {}
        real_root = os.path.realpath(self.root)  # each listed note is checked to be inside
        for path, st in stats.items():
            rec = known.get(path)
            if (rec and rec.status != SKIPPED and not words_only(rec)
                    and (rec.mtime_ns, rec.size) == (st.mtime_ns, st.size)):
                disk[path] = Fingerprint(rec.body_hash, rec.file_hash)
                continue
            if isinstance(written := parsed.get(path), Note):
                disk[path] = Fingerprint(written.body_hash, written.file_hash)
                continue
            try:
                note: Note | RawNote
                if raw:  # nothing indexed: every note is new, whatever its fingerprint
                    note = read_listed_note(self.root, path, real_root)
                    note.check()
                    disk[path] = Fingerprint("", "")
                elif st.size > LARGE_NOTE_BYTES:
                    note = read_raw_note(self.root, path)
                    disk[path] = Fingerprint(*note.fingerprint())
                else:
                    note = read_note(self.root, path)
                    disk[path] = Fingerprint(note.body_hash, note.file_hash)
            except NotFound:
                continue  # deleted since the scan: gone from the index like any deleted note
            except (NoteError, InvalidInput) as exc:  # InvalidInput: e.g. a path leaving the vault
                failed[path] = exc.message
                continue
            except OSError as exc:
                failed[path] = f"cannot read: {exc.strerror or exc}"
                continue
            parsed[path] = note
        return disk

    # apply --------------------------------------------------------------------------------

    def _apply_embeds(
        self, plan: SyncPlan, parsed: Parsed, known: dict[str, NoteRecord],
        report: SyncReport, progress: Progress | None, between: Between | None, run: Run,
    ) -> None:
        building = run.kind in BUILDING_KINDS
        paths = order([*plan.adds, *plan.changes], parsed, building)
        total, done = len(paths), 0
        self.progress.planned(run, total)
        if building:  # every new note searchable by its words before any vector
            adds = set(plan.adds)
            # waiting changes go in between the words writes, but not to the edited notes,
            # written after with their vectors: all of `paths` is still to write
            words_between = (lambda _: between(frozenset(paths))) if between else None
            if self._words.write([p for p in paths if p in adds], parsed, words_between):
                self._store().upkeep(Occasion.INDEXED)  # their words in the full-text index
            self.progress.words_written(run)
        if progress:
            progress(0, total)
        # the title each edited note's stored chunks were embedded under (not a note whose
        # chunks have no vectors yet: words first)
        before = {path: known[path].title for path in plan.changes
                  if path in known and known[path].chunk_count and not words_only(known[path])}
        for batch, embedded in self._batches.batches(paths, parsed, before, between, run):
            self._store().apply(upserts=batch)
            self.catalog.apply(record for record, _ in batch)
            done += len(batch)
            self.progress.written(run, len(batch))
            report.chunks_embedded += embedded
            if progress:
                progress(done, total)
        report.added, report.changed = len(plan.adds), len(plan.changes)

    def _apply_metadata(
        self, plan: SyncPlan, parsed: Parsed, known: dict[str, NoteRecord],
        report: SyncReport,
    ) -> None:
        moved_to = {new: old for old, new in plan.moves}
        moves = [(old, note_record(self._note(new, parsed), known[old].chunk_count))
                 for old, new in plan.moves]
        metas = [
            note_record(self._note(path, parsed), known[moved_to.get(path, path)].chunk_count)
            for path in plan.meta_changes
        ]
        metas = [m for m in metas if m.path not in moved_to]  # the move carries the new record
        # the chunks carry the note's names, nothing else of its frontmatter
        retitles = [m for m in metas if searchable_title(m) != searchable_title(known[m.path])]
        if moves or retitles or plan.deletes:
            self._store().apply(retitles=retitles, moves=moves, deletes=plan.deletes)
        if moves or metas or plan.deletes:
            self.catalog.apply(
                [*metas, *(record for _, record in moves)],
                deletes=[*plan.deletes, *(old for old, _ in moves)],
            )
        report.meta_changed = len(metas)
        report.moved = len(moves)
        report.moves = list(plan.moves)
        report.deleted = len(plan.deletes)

    def _apply_failures(self, failed: dict[str, str], known: dict[str, NoteRecord]) -> None:
        if not failed:
            return
        was_indexed = [p for p in failed if p in known and known[p].chunk_count]
        if was_indexed:
            self._store().apply(deletes=was_indexed)
        self.catalog.apply(
            placeholder(path, FAILED, reason, self.root) for path, reason in failed.items()
        )

    def _record_skipped(
        self,
        skipped: list[tuple[str, str]],
        known: dict[str, NoteRecord],
        report: SyncReport,
    ) -> None:
        """`known` holds the rows of the synced paths only (all of them on a full sync)."""
        now_skipped = dict(skipped)
        stale = [p for p, rec in known.items() if rec.status == SKIPPED and p not in now_skipped]
        was_indexed = [p for p in now_skipped if p in known and known[p].chunk_count]
        if was_indexed:
            self._store().apply(deletes=was_indexed)
        if skipped or stale:
            self.catalog.apply(
                (placeholder(p, SKIPPED, reason, self.root) for p, reason in skipped),
                deletes=stale,
            )
        report.skipped = len(skipped)

    def _refresh_stat_only(
        self, stats: dict[str, FileStat], known: dict[str, NoteRecord], plan: SyncPlan,
        failed: dict[str, str],
    ) -> None:
        """A note whose mtime changed but whose bytes did not: remember the new stat."""
        handled = {*plan.adds, *plan.changes, *plan.meta_changes, *(n for _, n in plan.moves)}
        updates = []
        for path, st in stats.items():
            rec = known.get(path)
            if rec is None or path in handled or path in failed or rec.status == SKIPPED:
                continue
            if (rec.mtime_ns, rec.size) != (st.mtime_ns, st.size):
                updates.append(replace(rec, mtime_ns=st.mtime_ns, size=st.size))
        if updates:
            self.catalog.apply(updates)

    def _note(self, path: str, parsed: Parsed) -> Note:
        note = parsed[path] = read_held(self.root, path, parsed.get(path))
        return note


def _wrote_text(report: SyncReport) -> bool:
    """Whether the sync wrote chunks with text (a delete writes none)."""
    return bool(report.added or report.changed or report.moved or report.meta_changed)
