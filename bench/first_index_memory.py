"""What a daemon holds during a first index: `python -m bench.first_index_memory [--notes N]`.

A real daemon (the real English model, the daemon's defaults) runs in this process on a vault
built as `bench/bigvault.py` builds it. Every `--every` seconds a line: RSS, its anonymous and
file-backed parts (`/proc/self/smaps_rollup`), glibc's heap (`mallinfo2`: in use, free inside
the arenas, in mmapped blocks), the in-memory vector matrix's rows (live / all / capacity),
and the indexer's step (bench/index_wait.py's), while titles are searched (three a second);
with `--trace`, Python's own allocations (tracemalloc, slow) and, at each
`--snapshot-every`, the lines that hold the most of them.
"""

from __future__ import annotations

import argparse
import ctypes
import random
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.bigvault import build_vault, in_process_daemon_env
from bench.index_wait import indexer_step
from bench.support import load_average, machine_lines, now_utc


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def mallinfo() -> tuple[float, float, float]:
    """glibc's heap in MB: (in use, free in the arenas, in mmapped blocks)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Mallinfo2
    info = libc.mallinfo2()
    return info.uordblks / 1e6, info.fordblks / 1e6, info.hblkhd / 1e6


def smaps() -> dict[str, float]:
    values = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        key, _, rest = line.partition(":")
        values[key] = int(rest.split()[0]) / 1000
    return values


def matrix_rows(parts: Any) -> str:
    index = getattr(parts.index, "_index", None) or getattr(parts.index, "_value", None)
    matrix = getattr(index, "_matrix", None)
    if matrix is None:
        return "-"
    return f"{len(matrix)}/{len(matrix._ids)}/{matrix._vectors.shape[0]}"


def arrow_and_lance(parts: Any) -> str:
    """pyarrow's pool (its backend, MB allocated now) and LanceDB's session caches (MB)."""
    import pyarrow as pa

    pool = pa.default_memory_pool()
    index = getattr(parts.index, "_index", None) or getattr(parts.index, "_value", None)
    session = getattr(index, "_session", None)
    cache = f"{session.size_bytes / 1e6:.0f}" if session is not None else "-"
    return f"arrow {pool.backend_name} {pool.bytes_allocated() / 1e6:.0f}  lance caches {cache}"


def line(started: float, parts: Any, startup: threading.Thread | None) -> str:
    s = smaps()
    used, free, mapped = mallinfo()
    traced = tracemalloc.get_traced_memory()[0] / 1e6 if tracemalloc.is_tracing() else 0.0
    return (f"{time.perf_counter() - started:6.0f} s  RSS {s['Rss']:5.0f}  anon "
            f"{s['Anonymous']:5.0f}  file {s['Rss'] - s['Anonymous']:4.0f}  heap used "
            f"{used:5.0f} free {free:4.0f} mmapped {mapped:4.0f}  python {traced:5.0f}  "
            f"matrix {matrix_rows(parts)}  {arrow_and_lance(parts)}  {indexer_step(startup)}")


_ARENA = 64 << 20  # glibc's thread arenas: heaps of at most 64 MiB, aligned to it


def _kind(name: str, start: int, end: int, named: dict[int, str]) -> str:
    """Who a mapping's resident pages belong to: a file's name, glibc's main heap, a glibc
    thread arena (64 MiB aligned), an array of `named` (by its address) or other anonymous
    memory."""
    if name.startswith("/"):
        return Path(name).name
    if name:
        return name  # [heap], [stack], [vdso] ...
    for address, label in named.items():
        if start <= address < end:
            return f"[{label}]"
    return "[glibc thread arena]" if start % _ARENA == 0 else "[anonymous]"


def named_arrays(parts: Any) -> dict[int, str]:
    """The address of the in-memory vector matrix (a mapping of its own: glibc's mmap
    threshold is fixed at 128 KiB in the daemon)."""
    index = getattr(parts.index, "_index", None) or getattr(parts.index, "_value", None)
    matrix = getattr(index, "_matrix", None)
    if matrix is None:
        return {}
    return {matrix._vectors.ctypes.data: "vector matrix"}


def mappings(count: int, named: dict[int, str]) -> None:
    """Resident memory by owner: each file (its pages, and those of it the process wrote),
    glibc's main heap, glibc's thread arenas, other anonymous mappings; the largest first."""
    held: dict[str, list[float]] = {}
    owner, sizes = "", []
    for text in Path("/proc/self/smaps").read_text().splitlines():
        first = text.split(maxsplit=5)
        if "-" in first[0] and len(first) >= 5 and ":" not in first[0]:
            start, end = (int(x, 16) for x in first[0].split("-"))
            owner = _kind(first[5] if len(first) > 5 else "", start, end, named)
            held.setdefault(owner, [0.0, 0.0, 0.0])[2] += (end - start) / 1e6
        elif first[0] == "Rss:":
            held[owner][0] += int(first[1]) / 1000
            if owner == "[anonymous]":
                sizes.append(int(first[1]) / 1000)
        elif first[0] == "Anonymous:":
            held[owner][1] += int(first[1]) / 1000
    sizes.sort(reverse=True)
    print(f"      other anonymous mappings: {len(sizes)}; the largest resident "
          f"{', '.join(f'{mb:.1f}' for mb in sizes[:count])} MB")
    print("      resident MB  (written)  mapped MB  owner")
    for name, (rss, anon, size) in sorted(held.items(), key=lambda kv: -kv[1][0])[:count]:
        print(f"      {rss:11.1f}  {anon:9.1f}  {size:9.0f}  {name}")


def top(snapshot: tracemalloc.Snapshot, count: int) -> None:
    for stat in snapshot.statistics("traceback")[:count]:
        frames = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in stat.traceback)
        print(f"      {stat.size / 1e6:6.1f} MB {stat.count:8d}  {frames}")


def ask(daemon: Any, paths: list[str], per_second: float, done: threading.Event) -> None:
    """Titles searched, `per_second` a second (none: 0), as bench/bigvault.py's rounds."""
    rng = random.Random(11)
    titles = [Path(p).stem.replace("-", " ").replace("_", " ") for p in paths]
    while per_second > 0 and not done.wait(1.0 / per_second):
        daemon.api.call("search", {"query": rng.choice(titles), "top_k": 20})


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="vaultmem-bench-firstmem-") as tmp:
        root = Path(tmp)
        vault = root / "vault"
        paths = build_vault(vault, args.notes, seed=11)
        in_process_daemon_env(root, vault)
        if args.trace:
            tracemalloc.start(args.trace)
        from vaultmem.app import build_app, daemon_params
        from vaultmem.config import load_settings
        from vaultmem.daemon.run import Daemon

        print(f"vaultmem first-index memory, {now_utc():%Y-%m-%d %H:%M} UTC")
        print(*machine_lines(), sep="\n")
        print(f"{len(paths):,} notes; MB (10^6 bytes)", flush=True)
        settings = load_settings()
        parts = build_app(settings, daemon=True).daemon_parts()
        daemon = Daemon(daemon_params(settings), parts)
        started = time.perf_counter()
        daemon.start()
        next_snapshot, next_map = args.snapshot_every, args.map_every or float("inf")
        done = threading.Event()
        asker = threading.Thread(target=ask, args=(daemon, paths, args.per_second, done),
                                 daemon=True)
        asker.start()
        try:
            time.sleep(0.5)
            startup = next((t for t in threading.enumerate() if t.name == "vaultmem-startup"),
                           None)
            while time.perf_counter() - started < args.seconds:
                print(line(started, parts, startup), flush=True)
                if args.trace and time.perf_counter() - started >= next_snapshot:
                    next_snapshot += args.snapshot_every
                    top(tracemalloc.take_snapshot(), args.top)
                if time.perf_counter() - started >= next_map:
                    next_map += args.map_every
                    mappings(args.top, named_arrays(parts))
                if daemon.progress.last is not None and not daemon.progress.running:
                    print("index ready")
                    break
                time.sleep(args.every)
            for _ in range(3):
                time.sleep(args.every)
                print(line(started, parts, startup), flush=True)
            if args.trace:
                top(tracemalloc.take_snapshot(), args.top)
            mappings(args.top, named_arrays(parts))
        finally:
            done.set()
            asker.join()
            daemon.stop()
        print(f"load average {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--per-second", type=float, default=3.0, help="title searches")
    parser.add_argument("--every", type=float, default=3.0)
    parser.add_argument("--trace", type=int, default=0, help="tracemalloc's frames (0: off)")
    parser.add_argument("--snapshot-every", type=float, default=30.0)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--map-every", type=float, default=0.0,
                        help="resident memory by owner this often (0: at the end only)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
