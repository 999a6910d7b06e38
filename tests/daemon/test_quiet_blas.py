"""The daemon runs numpy's BLAS on the calling thread: OpenBLAS's worker thread otherwise spins
for ~0.1 s after each call it splits, a whole core after every search's vector scoring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem.daemon.native import BLAS_THREADS_ENV

pytestmark = pytest.mark.timeout(120)

#: The process's CPU seconds while it sleeps 0.2 s after scoring 20k rows (as a search does).
AFTER_SCORING = """
import json, sys, time
if sys.argv[1] == "quiet":
    from vaultmem.daemon.native import quiet_blas
    quiet_blas()
import numpy as np
rows = np.random.default_rng(0).random((20_000, 384), dtype=np.float32)
query = rows[0].copy()
spent = []
for _ in range(3):
    rows @ query
    before = time.process_time()
    time.sleep(0.2)
    spent.append(time.process_time() - before)
print(json.dumps(spent))
"""

#: Runs `vaultmem run` until numpy is first imported, then says what the BLAS setting was.
AT_NUMPY = """
import importlib.abc, os, sys

class AtNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "numpy":
            print("BLAS", os.environ.get(sys.argv[1]), flush=True)
            os._exit(0)
        return None

sys.meta_path.insert(0, AtNumpy())
from vaultmem.cli.main import cli
cli.main(["run"], prog_name="vaultmem")
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != BLAS_THREADS_ENV}
    return {**env, **extra}


def test_after_quiet_blas_nothing_spins_once_a_scoring_is_done() -> None:
    done = subprocess.run([sys.executable, "-c", AFTER_SCORING, "quiet"], env=_env(),
                          capture_output=True, text=True, timeout=100, check=True)
    spent = json.loads(done.stdout)
    assert max(spent) < 0.03, spent  # a spinning worker burns ~0.1 s of each 0.2 s


def test_the_daemon_sets_it_before_numpy_is_imported(tmp_path: Path) -> None:
    env = _env(VAULTMEM_VAULT=str(tmp_path), VAULTMEM_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run([sys.executable, "-c", AT_NUMPY, BLAS_THREADS_ENV], env=env,
                          capture_output=True, text=True, timeout=100)
    assert "BLAS 1" in done.stdout, done.stdout + done.stderr


def test_a_value_the_user_set_is_kept(tmp_path: Path) -> None:
    env = _env(VAULTMEM_VAULT=str(tmp_path), VAULTMEM_DATA_DIR=str(tmp_path / "data"),
               **{BLAS_THREADS_ENV: "2"})
    done = subprocess.run([sys.executable, "-c", AT_NUMPY, BLAS_THREADS_ENV], env=env,
                          capture_output=True, text=True, timeout=100)
    assert "BLAS 2" in done.stdout, done.stdout + done.stderr
