"""The client: every convenience call against a real server, errors mapped back to the
exception tree, an unreachable daemon reported clearly, and discovery through daemon.json."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_server import REFERENCE, SAMPLE_ID, SAMPLE_PATH, Served, digest, serving
from vaultmem.api.auth import load_or_create_token
from vaultmem.api.client import Client, _decode, discover
from vaultmem.errors import (
    ConfigError,
    DaemonError,
    InvalidInput,
    NotFound,
    PathOutsideVault,
    Refused,
    VaultmemError,
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("client")) as served:
        yield served


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as served:
        yield served


def client_for(served: Served, **options: Any) -> Client:
    return Client(served.server.url, served.token, **options)


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.timeout(60)
def test_read_calls(shared: Served) -> None:
    client = client_for(shared)
    before = digest(shared.vault)
    assert client.health()["status"] == "ok"
    assert client.status()["notes"] == 33
    assert len(client.status(files=True)["coverage"]["files"]) == 33
    results = client.search("server-side sessions in Redis", top_k=2, memories_only=True,
                            type=None)["results"]
    assert results[0]["id"] == SAMPLE_ID and len(results) == 2
    assert client.get(SAMPLE_ID)["path"] == SAMPLE_PATH
    assert client.get(SAMPLE_PATH)["id"] == SAMPLE_ID
    assert client.related(SAMPLE_PATH, top_k=1)["related"][0]["path"] != SAMPLE_PATH
    assert len(client.review(limit=1)["items"]) <= 1
    assert client.gc()["dry_run"] is True
    assert client.sweep()["dry_run"] is True
    assert client.promote(dry_run=True)["promoted"] == []
    assert client.openapi()["openapi"].startswith("3.1")
    assert client.call("GET", f"/v1/memories/{SAMPLE_ID}")["id"] == SAMPLE_ID
    assert digest(shared.vault) == before


@pytest.mark.timeout(60)
def test_write_calls(served: Served) -> None:
    client = client_for(served)
    assert client.touch(SAMPLE_ID, boost=True)["use_count"] == 7
    assert client.observe([SAMPLE_ID], ["crumb"])["observed"][0]["use_count"] == 8
    saved = client.save("The shed padlock code is written inside the fuse box door.",
                        tags=["home"], title="Shed padlock")
    assert saved["created"] is True
    assert (served.vault / saved["memory"]["path"]).is_file()
    assert client.reindex()["added"] == 0
    assert client.get(SAMPLE_ID)["last_used"] == REFERENCE.isoformat()


@pytest.mark.timeout(60)
def test_errors_come_back_as_their_exception_class(shared: Served,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(now: object) -> None:
        raise DaemonError("consolidation is not available now")

    monkeypatch.setattr(shared.app.consolidator, "list_clusters", unavailable)
    client = client_for(shared)
    with pytest.raises(NotFound, match="no memory with id 'nope'"):
        client.get("nope")
    with pytest.raises(InvalidInput, match="top_k must be between 1 and 200"):
        client.search("redis", top_k=500)
    with pytest.raises(PathOutsideVault):
        client.touch("../../etc/passwd.md")
    with pytest.raises(Refused, match="too short"):
        client.save("tiny")
    with pytest.raises(DaemonError, match="consolidation"):
        client.clusters()
    with pytest.raises(NotFound, match="no route"):
        client.call("GET", "/v1/nothing")
    wrong = Client(shared.server.url, "not-the-token")
    with pytest.raises(VaultmemError, match="bearer token") as caught:
        wrong.status()
    assert type(caught.value) is VaultmemError
    assert wrong.health()["status"] == "ok"


def test_unknown_error_codes_and_odd_bodies() -> None:
    with pytest.raises(VaultmemError, match="short and stout") as caught:
        _decode(418, b'{"error": {"code": "teapot", "message": "short and stout"}}')
    assert type(caught.value) is VaultmemError
    with pytest.raises(VaultmemError, match="HTTP 502"):
        _decode(502, b"<html>bad gateway</html>")
    with pytest.raises(VaultmemError, match="HTTP 200"):
        _decode(200, b"[1, 2]")
    assert _decode(200, b'{"ok": true}') == {"ok": True}


@pytest.mark.timeout(30)
def test_an_unreachable_daemon_is_reported_clearly() -> None:
    port = free_port()
    client = Client(f"http://127.0.0.1:{port}", "token", timeout=2)
    with pytest.raises(DaemonError) as caught:
        client.health()
    assert str(caught.value) == (f"no vaultmem daemon answers at http://127.0.0.1:{port}: "
                                 "start it with `vaultmem run`")


@pytest.mark.timeout(30)
def test_a_daemon_that_never_answers_times_out() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(DaemonError, match=r"did not answer within 0\.3 s"):
            Client(url, "token", timeout=0.3).health()


def test_only_http_urls() -> None:
    for url in ("https://127.0.0.1:7345", "127.0.0.1:7345", "ftp://x", ""):
        with pytest.raises(ConfigError):
            Client(url, "token")


# discovery -----------------------------------------------------------------------------------

def write_daemon_file(data_dir: Path, **info: Any) -> None:
    defaults = {"pid": os.getpid(), "host": "127.0.0.1", "port": 1,
                "url": "http://127.0.0.1:1", "vault": "/somewhere/vault",
                "started": REFERENCE.isoformat()}
    (data_dir / "daemon.json").write_text(json.dumps({**defaults, **info}), encoding="utf-8")


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=30)
    return process.pid


@pytest.mark.timeout(60)
def test_discover_finds_a_live_daemon(served: Served) -> None:
    data_dir = served.app.data_dir
    write_daemon_file(data_dir, port=served.server.port, url=served.server.url,
                      vault=str(served.vault))
    client = discover(data_dir)
    assert client is not None and client.base_url == served.server.url
    assert client.get(SAMPLE_ID)["id"] == SAMPLE_ID  # the token from the data dir works
    assert client.timeout == 30.0


@pytest.mark.timeout(60)
def test_discover_refuses_stale_or_wrong_daemon_files(served: Served, tmp_path: Path) -> None:
    data_dir = served.app.data_dir
    live = {"port": served.server.port, "url": served.server.url, "vault": str(served.vault)}
    assert discover(tmp_path / "empty") is None
    cases: list[dict[str, Any]] = [
        {**live, "pid": dead_pid()},  # the daemon died without cleaning up
        {**live, "url": f"http://127.0.0.1:{free_port()}"},  # pid alive, nothing listens
        {**live, "vault": "/elsewhere/another-vault"},  # someone else's daemon on that port
        {**live, "url": served.server.url.replace("127.0.0.1", "192.0.2.1")},  # not loopback
        {**live, "pid": "12"},
        {**live, "pid": True},
    ]
    for info in cases:
        write_daemon_file(data_dir, **info)
        assert discover(data_dir) is None, info
    (data_dir / "daemon.json").write_text("{not json", encoding="utf-8")
    assert discover(data_dir) is None
    write_daemon_file(data_dir, **live)
    (data_dir / "token").unlink()
    assert discover(data_dir) is None
    load_or_create_token(data_dir)  # a new token: the daemon holds the old one
    client = discover(data_dir)
    assert client is not None  # health needs no token, so discovery still finds it
    with pytest.raises(VaultmemError, match="bearer token"):
        client.status()
