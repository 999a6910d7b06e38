"""The daemon's threads carry their names in the kernel (daemon/native.py name_os_threads),
so `top -H` and bench/idle.py tell them apart."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vaultmem.daemon.native import name_os_threads, os_thread_name


def test_the_kernel_name_drops_our_prefix_and_keeps_15_bytes() -> None:
    assert os_thread_name("vaultmem-http:41499") == b"http:41499"
    assert os_thread_name("vaultmem-http:41499:request") == b"http:41499:requ"
    assert os_thread_name("APScheduler") == b"APScheduler"
    assert os_thread_name("vaultmem-éééééééé") == "ééééééé".encode()  # no cut character
    assert len(os_thread_name("ThreadPoolExecutor-0_0")) == 15


@pytest.mark.timeout(30)
def test_threads_started_after_it_name_themselves() -> None:
    if not Path("/proc/self/task").is_dir():
        pytest.skip("no /proc here")
    seen: list[str] = []

    def read_own_name() -> None:
        task = Path(f"/proc/self/task/{threading.get_native_id()}/comm")
        seen.append(task.read_text().strip())

    try:
        if not name_os_threads():
            pytest.skip("not glibc")
        thread = threading.Thread(target=read_own_name, name="vaultmem-settled")
        thread.start()
        thread.join(10)
    finally:
        threading.setprofile(None)
    assert seen == ["settled"]
