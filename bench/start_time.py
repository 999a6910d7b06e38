"""A warm start per embedding runtime: how soon a restarted daemon answers, and answers a
search with the model (its index already built), on a copy of `sample-vault/`.

Each runtime first indexes the vault once in its own data folder; then each round restarts
one daemon per runtime (the order alternating) and times, from the spawn, the first answer
(`/v1/health`) and the first search whose answer is complete (results, index ready).

    .venv/bin/python -m bench.start_time [--rounds 3] [--runtimes onnx,openvino]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.support import load_average, machine_lines, now_utc
from vaultmem_testing.daemon import REAL_MODEL, REPO, DaemonProcess

QUERY = "keeping a sourdough starter alive"


def one_start(vault: Path, data: Path, runtime: str) -> tuple[float, float]:
    daemon = DaemonProcess(vault, data, settings=REAL_MODEL, VAULTMEM_EMBEDDING_RUNTIME=runtime)
    started = daemon.spawn()
    try:
        client = daemon.connect(60)
        answers = time.perf_counter() - started
        while True:
            answer = client.search(QUERY)
            if answer["results"] and answer.get("indexing", {}).get("state") == "ready":
                return answers, time.perf_counter() - started
            time.sleep(0.05)
    finally:
        daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtimes", default="onnx,openvino")
    args = parser.parse_args()
    runtimes = args.runtimes.split(",")
    print(f"vaultmem warm start, {now_utc():%Y-%m-%d %H:%M} UTC", *machine_lines(), sep="\n")
    with tempfile.TemporaryDirectory(prefix="vaultmem-start-") as temp:
        root = Path(temp)
        vault = root / "vault"
        shutil.copytree(REPO / "sample-vault", vault)
        for runtime in runtimes:  # the first index, once
            daemon = DaemonProcess(vault, root / runtime, settings=REAL_MODEL,
                                   VAULTMEM_EMBEDDING_RUNTIME=runtime)
            daemon.start(600)
            daemon.wait_ready(600, model=True)
            daemon.stop()
        times: dict[str, list[tuple[float, float]]] = {r: [] for r in runtimes}
        for n in range(args.rounds):
            for runtime in runtimes if n % 2 == 0 else list(reversed(runtimes)):
                times[runtime].append(one_start(vault, root / runtime, runtime))
                answers, searched = times[runtime][-1]
                print(f"  round {n + 1} {runtime}: answers {answers:.2f} s, "
                      f"a complete search {searched:.2f} s", flush=True)
    print(f"medians over {args.rounds} rounds (load average {load_average()}):")
    for runtime, values in times.items():
        print(f"  {runtime:9s} answers {statistics.median(a for a, _ in values):.2f} s, "
              f"a complete search {statistics.median(s for _, s in values):.2f} s")


if __name__ == "__main__":
    main()
