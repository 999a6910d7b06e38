"""What a search waits on during a first index: `python -m bench.index_wait [--notes 3000]`.

A real daemon (the real English model, the daemon's defaults) runs in this process on a vault
built as `bench/bigvault.py` builds it; from its start, a search thread asks for random notes'
titles (three a second) for `--seconds`, and each search is timed by step:

- open: waiting for the index to open (the first searches);
- embed: waiting for the query's vector (after the full-text search, which runs beside it);
- lock: waiting for the chunk index's lock (LanceIndex._lock) in the vector and text searches;
- fts: LanceDB's full-text query itself (its event loop);
- vectors: the in-memory matrix's vector search (the lock's wait aside);
- catalog: the catalog's reads (its lock included);
- context: the QueryContext of the candidates (their names, word keys, threads);
- rank: fusing and ranking the candidates (core.ranking);
- cpu: the search thread's own CPU time over the whole search (the rest of the wall time it
  waited: on other threads, locks, the GIL);
- rest: everything else.

The indexer's step when a search ended (names pass, words pass, embedding, a chunk write, an
optimise: the innermost of those frames on the start-up thread) is recorded beside it, so the
slowest searches say what they waited behind. The measured daemon's own code runs unchanged:
the timers wrap its methods from outside.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.bigvault import build_vault, in_process_daemon_env
from bench.support import load_average, machine_lines, now_utc, p50, p95
from vaultmem_testing.measure import rss_mb

STEPS = ("open", "embed", "lock", "fts", "vectors", "catalog", "context", "rank", "cpu")
# frames of the start-up thread that name what the indexer is doing, innermost wins
INDEXER_STEPS = (
    ("_names_batches", "names pass"), ("WordsFirst._batches", "words pass: parse/chunk"),
    ("WordsFirst._write", "words pass: write"), ("NoteBatches.batches", "embedding"),
    ("SlicedEmbedding.embed", "embedding"), ("_new_chunk_rows", "write: rows"),
    ("_write_chunks", "write: lance delete+add"), ("_carried_chunks", "write: carried"),
    ("Catalog.apply", "write: catalog"), ("optimize", "optimise"),
    ("ensure_fts_index", "fts index"), ("_disk_fingerprints", "scan/read"),
    ("scan_vault", "scan/read"),
)

_local = threading.local()


class Record:
    def __init__(self) -> None:
        self.steps: dict[str, float] = defaultdict(float)
        self.samples: Counter[str] = Counter()  # --sample: where the search thread was
        self.total = 0.0
        self.indexer = "-"
        self.state = "-"
        self.at = 0.0  # seconds from the daemon's start to the search's end


def _current() -> Record | None:
    return getattr(_local, "record", None)


@contextmanager
def _timed(step: str) -> Iterator[None]:
    record = _current()
    if record is None or getattr(_local, "inside", None) is not None:
        yield
        return
    _local.inside = step
    started = time.perf_counter()
    try:
        yield
    finally:
        record.steps[step] += time.perf_counter() - started
        _local.inside = None


def _wrap(owner: Any, name: str, step: str) -> None:
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        with _timed(step):
            return original(*args, **kwargs)

    setattr(owner, name, timed)


class _TimedLock:
    """An RLock whose acquisitions by a measured search count as `lock` time."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        record, started = _current(), time.perf_counter()
        got = self._inner.acquire(blocking, timeout)
        if record is not None:
            record.steps["lock"] += time.perf_counter() - started
        return bool(got)

    def release(self) -> None:
        self._inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class _TimedFuture:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def result(self, timeout: float | None = None) -> Any:
        with _timed("embed"):
            return self._inner.result(timeout)


def instrument() -> None:
    """Wrap the daemon's classes (before any is made)."""
    from vaultmem import app as app_module
    from vaultmem.engine import search as search_module
    from vaultmem.engine import search_context
    from vaultmem.index import catalog as catalog_module
    from vaultmem.index import full_text, inference
    from vaultmem.index import lance as lance_module
    from vaultmem.index import vectors as vectors_module

    _wrap(app_module.LazyIndex, "__call__", "open")
    _wrap(vectors_module.VectorMatrix, "search", "vectors")
    _wrap(search_context.QueryContexts, "__call__", "context")
    _wrap(search_module, "rank_notes", "rank")
    for name in ("note_names_for", "note_languages_for", "paths_in_folder", "records_for",
                 "languages", "paths_for_note_id"):
        _wrap(catalog_module.Catalog, name, "catalog")
    original_init = lance_module.LanceIndex.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self._lock = _TimedLock(self._lock)

    lance_module.LanceIndex.__init__ = init  # type: ignore[method-assign]

    class _Loop:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def run(self, *args: Any) -> Any:
            record, started = _current(), time.perf_counter()
            try:
                return self._inner.run(*args)
            finally:
                if record is not None:
                    record.steps["fts"] += time.perf_counter() - started

    full_text.LOOP = _Loop(full_text.LOOP)  # type: ignore[attr-defined,assignment]

    class _Inference:
        QUERY = inference.QUERY

        @staticmethod
        def shared() -> Any:
            real = inference.shared()

            class _Shared:
                def submit(self, *args: Any) -> _TimedFuture:
                    return _TimedFuture(real.submit(*args))

            return _Shared()

    search_module.inference = _Inference  # type: ignore[attr-defined,assignment]


class Sampler:
    """Every `every` seconds, where the searching thread is (the innermost frame of vaultmem's
    and the frame it called last), counted on the running search's Record."""

    def __init__(self, thread: threading.Thread, every: float = 0.002) -> None:
        self._thread, self._every = thread, every
        self.record: Record | None = None
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._run, name="bench-sampler", daemon=True)
        self._sampler.start()

    def stop(self) -> None:
        self._stop.set()
        self._sampler.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            record = self.record
            frame = sys._current_frames().get(self._thread.ident or 0)
            if record is None or frame is None:
                continue
            innermost = frame.f_code.co_qualname
            own = frame
            while own is not None and "vaultmem" not in own.f_code.co_filename:
                own = own.f_back
            where = (f"{own.f_code.co_qualname}:{own.f_lineno}" if own is not None else "-")
            record.samples[f"{where} > {innermost}" if own is not frame else where] += 1


def indexer_step(thread: threading.Thread | None) -> str:
    if thread is None or thread.ident is None:
        return "-"
    frame = sys._current_frames().get(thread.ident)
    names = []
    while frame is not None:
        names.append(f"{frame.f_code.co_qualname}")
        frame = frame.f_back
    for name in names:  # innermost first
        for marker, step in INDEXER_STEPS:
            if marker in name:
                return step
    return names[0] if names else "-"


def run(notes: int, seconds: float, per_second: float, seed: int, trace: bool = False,
        sample: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-indexwait-") as tmp:
        root = Path(tmp)
        vault = root / "vault"
        paths = build_vault(vault, notes, seed=seed)
        titles = [Path(p).stem.replace("-", " ").replace("_", " ") for p in paths]
        rng = random.Random(seed)
        in_process_daemon_env(root, vault)
        instrument()
        from vaultmem.app import build_app, daemon_params
        from vaultmem.config import load_settings
        from vaultmem.daemon.run import Daemon

        print(f"vaultmem search-during-index benchmark, {now_utc():%Y-%m-%d %H:%M} UTC")
        print(*machine_lines(), sep="\n")
        print(f"{len(paths):,} notes; {seconds:g} s of searches, {per_second:g} a second",
              flush=True)
        settings = load_settings()
        parts = build_app(settings, daemon=True).daemon_parts()
        daemon = Daemon(daemon_params(settings), parts)
        started = time.perf_counter()
        daemon.start()
        records: list[Record] = []
        rss: list[float] = []
        sampler = Sampler(threading.current_thread()) if sample else None
        try:
            startup = next((t for t in threading.enumerate() if t.name == "vaultmem-startup"),
                           None)
            while time.perf_counter() - started < seconds:
                asked, cpu = time.perf_counter(), time.thread_time()
                record = Record()
                _local.record = record
                if sampler is not None:
                    sampler.record = record
                try:
                    daemon.api.call("search", {"query": rng.choice(titles), "top_k": 20})
                finally:
                    _local.record = None
                    if sampler is not None:
                        sampler.record = None
                record.total = time.perf_counter() - asked
                record.steps["cpu"] = time.thread_time() - cpu
                record.at = time.perf_counter() - started
                record.indexer = indexer_step(startup)
                record.state = parts.sync.state().state
                records.append(record)
                rss.append(rss_mb(os.getpid()))
                time.sleep(max(0.0, 1.0 / per_second - record.total))
        finally:
            if sampler is not None:
                sampler.stop()
            daemon.stop()
        report(records, rss, trace)


def report(records: list[Record], rss: list[float], trace: bool = False) -> None:
    if trace:
        for r in records:
            steps = " ".join(f"{step} {r.steps.get(step, 0.0) * 1000:.0f}" for step in STEPS)
            print(f"  {r.at:6.1f} s {r.total * 1000:6.0f} ms: {steps}; {r.indexer}")
    during = [r for r in records if r.state != "ready"]
    totals = [r.total * 1000 for r in during]
    print(f"searches during the index: {len(during)} of {len(records)}; "
          f"p50 {p50(totals):.0f} ms, p95 {p95(totals):.0f} ms, max {max(totals, default=0):.0f}"
          f" ms; RSS max {max(rss, default=0):.0f} MB; load average {load_average()}")
    for label, chosen in (("all", during), ("slowest 10 %", _slowest(during))):
        if not chosen:
            continue
        parts = ", ".join(f"{step} {_mean(chosen, step):.0f}" for step in STEPS)
        rest = sum(r.total for r in chosen) / len(chosen) * 1000 - sum(
            _mean(chosen, step) for step in STEPS if step != "cpu")
        print(f"  {label} ({len(chosen)}): mean ms {parts}, rest {rest:.0f}")
    samples: Counter[str] = Counter()
    for r in _slowest(during):
        samples.update(r.samples)
    if samples:
        total = sum(samples.values())
        print("  where the slowest 10 % were (samples):")
        for where, n in samples.most_common(30):
            print(f"    {n * 100 / total:5.1f} %  {where}")
    behind = Counter(r.indexer for r in _slowest(during))
    print("  the indexer's step at the end of the slowest 10 %: "
          + ", ".join(f"{step} {n}" for step, n in behind.most_common()))
    steps: dict[str, list[float]] = defaultdict(list)
    for r in during:
        steps[r.indexer].append(r.total * 1000)
    for step, values in sorted(steps.items(), key=lambda kv: -len(kv[1])):
        print(f"    during {step}: {len(values)} searches, p50 {p50(values):.0f} ms, "
              f"p95 {p95(values):.0f} ms")


def _slowest(records: list[Record]) -> list[Record]:
    ranked = sorted(records, key=lambda r: -r.total)
    return ranked[:max(1, len(ranked) // 10)] if ranked else []


def _mean(records: list[Record], step: str) -> float:
    return sum(r.steps.get(step, 0.0) for r in records) / len(records) * 1000


def main(argv: list[str] | None = None, entry: Callable[..., None] = run) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--per-second", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--trace", action="store_true", help="a line for every search")
    parser.add_argument("--sample", action="store_true",
                        help="sample where the searching thread is (the slowest searches')")
    args = parser.parse_args(argv)
    entry(args.notes, args.seconds, args.per_second, args.seed, args.trace, args.sample)


if __name__ == "__main__":
    main()
