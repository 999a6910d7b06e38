"""Wait until the daemon serving a data dir has built its index and loaded the model, with a
progress line: `python scripts/wait_ready.py DATA_DIR PID` (scripts/run uses it). Exits 1 when
the daemon (PID) exits first or reports that indexing failed."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from vaultmem.api.client import discover
from vaultmem.errors import VaultmemError
from vaultmem.vault.writer_lock import pid_alive


def progress_line(daemon: dict[str, Any], built: bool) -> str:
    """`built`: a building line was shown already (the run has ended since)."""
    work = daemon["indexing"]
    if work["running"] and work["total"]:
        line = f"index building: {work['done']:,} of {work['total']:,} notes"
        current = work.get("current")
        if current:
            line += (f" (embedding {current['path']}: {current['chunks_done']:,} of "
                     f"{current['chunks_total']:,} chunks)")
        return line
    if work["last"] is None:
        return "index: writing" if built else "index: comparing the vault with the index"
    return "loading the model"


def main() -> int:
    data_dir, pid = Path(sys.argv[1]), int(sys.argv[2])
    shown, built = "", False
    tty = sys.stderr.isatty()
    while pid_alive(pid):
        client = discover(data_dir)
        try:
            daemon = client.status()["daemon"] if client is not None else None
        except VaultmemError:
            daemon = None
        if daemon is not None:
            work = daemon["indexing"]
            if work["error"]:
                print(f"\nindexing failed: {work['error']}", file=sys.stderr)
                return 1
            if work["last"] is not None and not work["running"] and daemon["model_loaded"]:
                last = work["last"]
                end = "\r\033[K" if tty and shown else ""
                print(f"{end}index ready: {daemon_notes(last)} in {last['seconds']:.1f} s",
                      file=sys.stderr)
                return 0
            line = progress_line(daemon, built)
            built = built or line.startswith("index building")
            if line != shown:
                print(f"\r\033[K{line}" if tty else line, end="" if tty else "\n",
                      file=sys.stderr, flush=True)
                shown = line
        time.sleep(0.25)
    print("\nthe daemon exited", file=sys.stderr)
    return 1


def daemon_notes(last: dict[str, Any]) -> str:
    return (f"{last['added']:,} notes added, {last['changed']:,} changed, "
            f"{last['chunks_embedded']:,} chunks embedded")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C: scripts/run stops the daemon
        sys.exit(130)
