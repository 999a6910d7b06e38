"""A memory whose note cannot be written is named as such on every edge (the socket, the CLI,
the MCP tools): "memory X cannot be written: its frontmatter does not parse (line L, column
C)", never "no memory with id X"; and nothing is written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.test_server import SAMPLE_ID, SAMPLE_PATH, Served, digest, serving
from tests.cli._support import invoke
from vaultmem.api.client import Client
from vaultmem.mcp.bridge import Bridge

CANNOT = re.compile(
    rf"memory {SAMPLE_ID} \({re.escape(SAMPLE_PATH)}\) cannot be written: its frontmatter "
    r"does not parse \(line \d+, column \d+\): ")


def break_frontmatter(vault: Path) -> None:
    note = vault / SAMPLE_PATH
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("  - crumb\n", "  - crumb: [never closed\n", 1),
                    encoding="utf-8")


@pytest.fixture
def broken(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as served:
        break_frontmatter(served.vault)
        served.app.sync.sync_paths([SAMPLE_PATH])
        yield served


@pytest.mark.timeout(60)
def test_the_socket_says_the_memory_cannot_be_written(broken: Served) -> None:
    before = digest(broken.vault)
    for route, body in (("/v1/touch", {"id": SAMPLE_ID}),
                        ("/v1/feedback", {"id": SAMPLE_ID, "helpful": True}),
                        ("/v1/pin", {"id": SAMPLE_ID, "pinned": True})):
        answer = broken.request("POST", route, body)
        assert answer.status != 404, (route, answer.body)
        assert CANNOT.search(answer.body["error"]["message"]), (route, answer.body)
    assert digest(broken.vault) == before


@pytest.mark.timeout(60)
def test_the_mcp_tools_say_the_memory_cannot_be_written(broken: Served) -> None:
    bridge = Bridge(broken.vault, broken.app.data_dir, "vaultmem run",
                    connect=lambda data_dir: Client(broken.server.url, broken.token))
    result = bridge.call("touch_memory", {"id": SAMPLE_ID})
    assert result.is_error
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert CANNOT.search(text), text


@pytest.mark.timeout(60)
def test_the_cli_says_the_memory_cannot_be_written(tmp_path: Path) -> None:
    from tests.cli._support import copy_vault
    from tests.conftest import SAMPLE_VAULT

    vault = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    break_frontmatter(vault)
    env = {"VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_CONFIG": str(tmp_path / "none.toml")}
    result = invoke(["touch", SAMPLE_ID, "--vault", str(vault), "--data-dir",
                     str(tmp_path / "data")], env=env)
    assert result.exit_code != 0
    assert CANNOT.search(" ".join(result.output.split())), result.output


@pytest.mark.timeout(60)
def test_a_read_only_memory_is_named_as_one_that_cannot_be_written(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        note = served.vault / SAMPLE_PATH
        before = note.read_bytes()
        note.chmod(0o444)
        served.app.sync.sync_paths([SAMPLE_PATH])
        try:
            answer = served.request("POST", "/v1/pin", {"id": SAMPLE_ID, "pinned": True})
            message = answer.body["error"]["message"]
            assert answer.status == 422  # by its mode bits: refused even to root
            assert message.startswith(f"memory {SAMPLE_ID} ({SAMPLE_PATH}) cannot be "
                                      "written: it is read-only"), message
        finally:
            note.chmod(0o644)
        assert note.read_bytes() == before
