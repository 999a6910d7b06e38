"""`vaultmem mcp` driven by the MCP SDK's own stdio client, against a real daemon on a copy of the
sample vault: the tools and their schemas, their effects on the notes, the single error without
a daemon, the docs in docs/assistants.md and the walk-through they contain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.conftest import REPO
from vaultmem.mcp.tools import GUIDE, TOOLS
from vaultmem.vault.frontmatter import parse
from vaultmem_testing.daemon import DaemonProcess, wait_until
from vaultmem_testing.sample_vault import redated_sample_vault

DOCS = REPO / "docs" / "assistants.md"
SESSIONS_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba"
SESSIONS = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md"
CADDY = "memories/2026-10-05 tried-caddy-in-front-of-gitea.md"
RESTIC = {
    "295f917b-31ce-4bc0-ba8d-700414d6e071": "memories/2026-11-06 sam-prefers-restic-over-borg.md",
    "a2cd2095-8207-4fe9-aba0-d4ef94d26ecf": "memories/2026-11-12 sam-prefers-restic-to-borg.md",
}
TOOL_NAMES = ["save_memory", "search_memory", "get_memory", "related_notes", "touch_memory",
              "observe_memory_usage", "review_queue", "feedback", "pin_memory", "sweep", "gc",
              "promote_memory", "restore_memory", "supersede_memory", "unsupersede_memory",
              "reconcile", "list_clusters", "merge_cluster",
              "stats", "list_memories", "forget_memory", "edit_memory",
              "undo_operation"]
READ_ONLY = {"search_memory", "get_memory", "related_notes", "review_queue", "list_clusters",
             "stats", "list_memories"}
VALID_ARGS: dict[str, dict[str, Any]] = {
    "save_memory": {"content": "The garden shed key hangs behind the pantry door."},
    "search_memory": {"query": "restic backups"}, "get_memory": {"id": SESSIONS_ID},
    "related_notes": {"id": SESSIONS_ID}, "touch_memory": {"id": SESSIONS_ID},
    "observe_memory_usage": {"ids": [SESSIONS_ID]}, "review_queue": {},
    "feedback": {"id": SESSIONS_ID, "helpful": True}, "sweep": {}, "gc": {},
    "promote_memory": {}, "list_clusters": {}, "merge_cluster": {"cluster_id": "c-0"},
    "stats": {}, "pin_memory": {"id": SESSIONS_ID, "pinned": True},
    "restore_memory": {"id": SESSIONS_ID}, "reconcile": {},
    "list_memories": {}, "forget_memory": {"id": SESSIONS_ID},
    "edit_memory": {"id": SESSIONS_ID, "tags": ["crumb"]}, "undo_operation": {},
    "supersede_memory": {"id": SESSIONS_ID, "by": CADDY}, "unsupersede_memory": {"id": CADDY},
}


# harness ----------------------------------------------------------------------------------------

@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return redated_sample_vault(tmp_path / "vault")


@pytest.fixture
def stopped(tmp_path: Path, vault: Path) -> Iterator[DaemonProcess]:
    """A daemon for the vault that is not running (tests may start it)."""
    process = DaemonProcess(vault, tmp_path / "data")
    yield process
    process.stop()


@pytest.fixture
def daemon(stopped: DaemonProcess) -> DaemonProcess:
    stopped.start()
    return stopped


@asynccontextmanager
async def mcp_session(env: dict[str, str], log: Path, *args: str) -> AsyncIterator[ClientSession]:
    """`python -m vaultmem mcp ARGS` as a subprocess, initialised; its stderr goes to `log`.
    On a clean exit, checks that stdout carried only MCP messages and nothing crashed."""
    faults: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # e.g. a line on stdout that is not JSON-RPC
            faults.append(message)

    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultmem", "mcp", *args],
                                   env=env, cwd=REPO)
    with log.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60,
                          message_handler=on_message) as session,
        ):
            await session.initialize()
            yield session
    assert faults == []
    assert "Traceback" not in log.read_text(encoding="utf-8")


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content  # one content block, success or error
    assert isinstance(block, types.TextContent)
    return block.text


async def ok(session: ClientSession, name: str, args: dict[str, Any] | None = None) -> Any:
    result = await session.call_tool(name, {} if args is None else args)
    text = text_of(result)
    assert not result.is_error, f"{name}: {text}"
    data = json.loads(text)
    assert result.structured_content == data
    return data


async def fails(session: ClientSession, name: str, args: dict[str, Any] | None = None) -> str:
    result = await session.call_tool(name, {} if args is None else args)
    assert result.is_error, f"{name} succeeded: {text_of(result)[:200]}"
    return text_of(result)


def stm(vault: Path, path: str) -> dict[str, object]:
    fields, _, _ = parse((vault / path).read_text(encoding="utf-8"))
    return fields


async def settled(condition: Callable[[], bool]) -> None:
    """Wait (off the event loop) until the daemon's coalesced writes reach the notes."""
    await anyio.to_thread.run_sync(wait_until, condition)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# listing and docs -------------------------------------------------------------------------------

@pytest.mark.timeout(120)
def test_tools_are_listed_with_descriptions_and_object_schemas(stopped: DaemonProcess,
                                                               tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(stopped.env, tmp_path / "mcp.log") as session:
            assert (await session.initialize()).instructions == GUIDE
            tools = (await session.list_tools()).tools
            assert [tool.name for tool in tools] == TOOL_NAMES
            for tool in tools:
                assert tool.description and len(tool.description) > 100, tool.name
                schema = tool.input_schema
                Draft202012Validator.check_schema(schema)
                assert schema["type"] == "object" and schema["additionalProperties"] is False
                assert set(schema.get("required", ())) <= set(schema["properties"])
                assert all(p.get("description") for p in schema["properties"].values())
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (tool.name in READ_ONLY), tool.name

    anyio.run(scenario)


def tool_sections(text: str) -> dict[str, str]:
    start = text.index("\n## Tools\n")
    end = text.index("\n## ", start + 1)
    parts = re.split(r"^### ", text[start:end], flags=re.M)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


@pytest.mark.timeout(30)
def test_every_tool_is_documented_in_assistants_md() -> None:
    text = DOCS.read_text(encoding="utf-8")
    sections = tool_sections(text)
    assert list(sections) == [tool.name for tool in TOOLS] == TOOL_NAMES
    for tool in TOOLS:
        assert tool.description.strip() and tool.schema["type"] == "object", tool.name
        section = sections[tool.name]
        assert [arg for arg in tool.schema["properties"] if f"`{arg}`" not in section] == []
    guide = text.split("## Instructions for the assistant", 1)[1]
    assert guide.split("```text\n", 1)[1].split("```", 1)[0] == GUIDE


# working with a daemon --------------------------------------------------------------------------

@pytest.mark.timeout(180)
def test_save_search_get_touch_observe_related(daemon: DaemonProcess, vault: Path,
                                               tmp_path: Path) -> None:
    content = "The garden shed key hangs on the hook behind the pantry door, left of the broom."

    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            saved = await ok(s, "save_memory", {"content": content, "title": "Garden shed key",
                                                "tags": ["home"], "type": "fact"})
            memory = saved["memory"]
            assert saved["created"] is True and memory["path"].startswith("memories/")
            assert content in (vault / memory["path"]).read_text(encoding="utf-8")
            assert stm(vault, memory["path"])["stm_id"] == memory["id"]
            again = await ok(s, "save_memory", {"content": content})
            assert again["created"] is False and again["reinforced"]["id"] == memory["id"]
            assert again["reinforced"]["counted"] is False  # saved again at once: not a use
            assert "at least 12 characters" in await fails(s, "save_memory",
                                                           {"content": "too short"})

            found = await ok(s, "search_memory", {"query": "garden shed key pantry", "top_k": 3})
            first = found["results"][0]
            assert found["indexing"] == {"state": "ready", "by_words": "complete",
                                         "by_meaning": "complete"}  # every answer says it
            assert first["id"] == memory["id"] and first["review"] is False
            assert first["uri"].startswith("obsidian://open?vault=vault&file=memories%2F")
            assert {"title", "path", "snippet", "relevance", "score"} <= set(first)
            assert (await ok(s, "get_memory", {"id": memory["id"]}))["path"] == memory["path"]

            touched = await ok(s, "touch_memory", {"id": memory["path"], "boost": True})
            assert touched["use_count"] == again["memory"]["use_count"] + 1 == 2
            assert touched["strength"] == pytest.approx(1.1)
            observed = await ok(s, "observe_memory_usage",
                                {"ids": [memory["id"], SESSIONS_ID], "context_tags": ["cooking"]})
            assert [o["id"] for o in observed["observed"]] == [memory["id"], SESSIONS_ID]
            assert observed["observed"][1]["cross_domain"] is True

            related = await ok(s, "related_notes", {"path": SESSIONS, "top_k": 3})
            paths = [r["path"] for r in related["related"]]
            assert related["path"] == SESSIONS and 1 <= len(paths) <= 3 and SESSIONS not in paths
            review = await ok(s, "review_queue", {"limit": 1})
            assert len(review["items"]) == 1 and review["total"] >= 1
            assert (await ok(s, "stats"))["memories"]["total"] == 15

            await settled(lambda: stm(vault, memory["path"]).get("stm_use_count") == 3)
            await settled(lambda: stm(vault, SESSIONS).get("stm_cross_domain_count") == 1)
            assert stm(vault, SESSIONS)["stm_review_count"] == 1

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_feedback_moves_strength_up_and_down_in_the_note(daemon: DaemonProcess, vault: Path,
                                                         tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            helped = await ok(s, "feedback", {"id": SESSIONS_ID, "helpful": True})
            assert helped["strength"] == pytest.approx(1.1) and helped["use_count"] == 7
            await settled(lambda: stm(vault, SESSIONS)["stm_strength"] == pytest.approx(1.1))

            for _ in range(2):
                unhelpful = await ok(s, "feedback", {"id": SESSIONS, "helpful": False})
            assert unhelpful["strength"] == pytest.approx(0.7) and unhelpful["use_count"] == 7
            await settled(lambda: stm(vault, SESSIONS)["stm_strength"] == pytest.approx(0.7))
            assert stm(vault, SESSIONS)["stm_use_count"] == 7  # not counted as a use

            for _ in range(4):  # the Caddy memory starts at 0.6: floor at 0
                floor = await ok(s, "feedback", {"id": CADDY, "helpful": False})
            assert floor["strength"] == 0.0
            await settled(lambda: stm(vault, CADDY)["stm_strength"] == 0)

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_promote_is_a_dry_run_unless_told_and_moves_the_note_to_stm(
        daemon: DaemonProcess, vault: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            before = snapshot(vault)
            plan = await ok(s, "promote_memory")
            assert plan["dry_run"] is True and plan["promoted"] == []
            assert SESSIONS_ID in {item["id"] for item in plan["promote"]}
            assert snapshot(vault) == before

            done = await ok(s, "promote_memory", {"id": SESSIONS_ID, "dry_run": False})
            [move] = done["promoted"]
            assert move["from"] == SESSIONS and move["to"].startswith("STM/")
            assert not (vault / SESSIONS).exists()
            assert stm(vault, move["to"])["stm_status"] == "promoted"
            assert (await ok(s, "get_memory", {"id": SESSIONS_ID}))["status"] == "promoted"

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_clusters_are_listed_and_one_is_merged(daemon: DaemonProcess, vault: Path,
                                               tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            clusters = (await ok(s, "list_clusters"))["clusters"]
            [cluster] = [c for c in clusters if {m["id"] for m in c["members"]} & set(RESTIC)]
            assert {m["id"] for m in cluster["members"]} == set(RESTIC)

            merged = await ok(s, "merge_cluster", {"cluster_id": cluster["id"]})
            new = merged["merged_into"]
            assert merged["cluster_id"] == cluster["id"] and (vault / new["path"]).is_file()
            assert {move["from"] for move in merged["archived"]} == set(RESTIC.values())
            for move in merged["archived"]:
                assert not (vault / move["from"]).exists()
                assert move["to"].startswith("memories/archive/")
                assert stm(vault, move["to"])["stm_merged_into"] == new["id"]
            assert all(c["id"] != cluster["id"] for c in (await ok(s, "list_clusters"))["clusters"])

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_gc_and_sweep_change_nothing_unless_told(daemon: DaemonProcess, vault: Path,
                                                 tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            before = snapshot(vault)
            sweep = await ok(s, "sweep")
            gc = await ok(s, "gc")
            assert sweep["dry_run"] is True and sweep["archive"] and sweep["archived"] == []
            assert gc["dry_run"] is True and gc["archive"] and gc["archived"] == []
            assert snapshot(vault) == before

            applied = await ok(s, "gc", {"dry_run": False})
            assert applied["dry_run"] is False
            assert {m["from"] for m in applied["archived"]} == {i["path"] for i in gc["archive"]}
            for move in applied["archived"]:
                assert (vault / move["to"]).is_file() and not (vault / move["from"]).exists()

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_an_archived_memory_is_restored_and_pinned(daemon: DaemonProcess, vault: Path,
                                                   tmp_path: Path) -> None:
    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            archived = (await ok(s, "gc", {"dry_run": False}))["archived"]
            [move] = [m for m in archived if m["from"] == CADDY]
            assert stm(vault, move["to"])["stm_status"] == "archived"
            back = await ok(s, "restore_memory", {"id": move["id"]})
            assert back["restored"] == {"id": move["id"], "from": move["to"], "to": CADDY}
            assert back["memory"]["status"] == "active" and stm(vault, CADDY)["stm_status"] == (
                "active")
            again = await fails(s, "restore_memory", {"id": move["id"]})
            assert "is active, not archived" in again
            pinned = await ok(s, "pin_memory", {"id": move["id"], "pinned": True})
            assert pinned["pinned"] is True
            await settled(lambda: stm(vault, CADDY).get("stm_pinned") is True)

    anyio.run(scenario)


@pytest.mark.timeout(180)
def test_no_tool_reaches_outside_the_vault(daemon: DaemonProcess, vault: Path,
                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text((vault / SESSIONS).read_text(encoding="utf-8").replace(
        SESSIONS_ID, "00000000-0000-4000-8000-000000000000"), encoding="utf-8")
    (vault / "memories" / "escape.md").symlink_to(outside)
    original = outside.read_bytes()
    refs = ["../outside.md", str(outside), "memories/escape.md", "memories/../../outside.md"]

    async def scenario() -> None:
        async with mcp_session(daemon.env, tmp_path / "mcp.log") as s:
            for ref in refs:
                calls: list[tuple[str, dict[str, Any]]] = [
                    ("get_memory", {"id": ref}), ("touch_memory", {"id": ref, "boost": True}),
                    ("feedback", {"id": ref, "helpful": False}), ("related_notes", {"path": ref}),
                    ("observe_memory_usage", {"ids": [SESSIONS_ID, ref]}),
                    ("promote_memory", {"id": ref, "dry_run": False}),
                ]
                for name, args in calls:
                    message = await fails(s, name, args)
                    assert "(path_outside_vault)" in message, (name, ref, message)
            assert (await ok(s, "get_memory", {"id": SESSIONS_ID}))["use_count"] == 6
            for unknown in ({"folder": ".."}, {"folder": "No Such Folder"},
                            {"tags": ["nosuchtag"]}):
                message = await fails(s, "search_memory", {"query": "sessions redis", **unknown})
                assert "(invalid_input)" in message and "no indexed note" in message, message

    anyio.run(scenario)
    assert outside.read_bytes() == original
    assert not (vault / "STM").exists()


# without a daemon -------------------------------------------------------------------------------

@pytest.mark.timeout(240)
def test_without_a_daemon_every_tool_says_how_to_start_it(stopped: DaemonProcess, vault: Path,
                                                          tmp_path: Path) -> None:
    start = f"vaultmem run --vault {vault.resolve()} --data-dir {stopped.data.resolve()}"

    async def scenario() -> None:
        async with mcp_session(stopped.env, tmp_path / "mcp.log") as s:
            messages = {await fails(s, name, VALID_ARGS[name]) for name in TOOL_NAMES}
            [message] = messages  # one and the same error from every tool
            assert "not running" in message and start in message

            await anyio.to_thread.run_sync(stopped.start)  # the same bridge finds it
            assert (await ok(s, "stats"))["notes"] == 33
            await anyio.to_thread.run_sync(stopped.stop)
            assert await fails(s, "search_memory", VALID_ARGS["search_memory"]) == message
            assert await fails(s, "stats") == message
            assert len((await s.list_tools()).tools) == len(TOOL_NAMES)  # still serving

    anyio.run(scenario)


@pytest.mark.timeout(120)
def test_invalid_arguments_are_refused_before_reaching_the_daemon(stopped: DaemonProcess,
                                                                  tmp_path: Path) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("save_memory", {}, "missing required field(s) content"),
        ("save_memory", {"content": "long enough to save", "type": "gossip"},
         "type must be one of"),
        ("search_memory", {"query": "x", "top_k": 0}, "top_k must be between 1 and 200"),
        ("search_memory", {"query": "x", "tags_all": ["a"]}, "unknown field(s) tags_all"),
        ("save_memory", {"content": "x" * 20_001}, "at most 20000 characters"),
        ("touch_memory", {}, "exactly one of id or path"),
        ("touch_memory", {"id": SESSIONS_ID, "boost": "yes"}, "boost must be true or false"),
        ("feedback", {"id": SESSIONS_ID}, "missing required field(s) helpful"),
        ("related_notes", {"id": SESSIONS_ID, "path": SESSIONS}, "exactly one of id or path"),
        ("related_notes", {}, "exactly one of id or path"),
        ("observe_memory_usage", {"ids": []}, "must have at least 1 item"),
        ("gc", {"dry_run": "no"}, "dry_run must be true or false"),
        ("merge_cluster", {}, "missing required field(s) cluster_id"),
        ("get_memory", {"id": "nul\x00byte"}, "must not contain NUL"),
    ]

    async def scenario() -> None:
        async with mcp_session(stopped.env, tmp_path / "mcp.log") as s:
            for name, args, expected in cases:
                message = await fails(s, name, args)
                assert message.startswith(f"invalid arguments for {name}: "), message
                assert expected in message and "not running" not in message
            assert (await fails(s, "drop_everything")).startswith("unknown tool 'drop_everything'")

    anyio.run(scenario)


@pytest.mark.timeout(60)
def test_without_a_vault_the_bridge_exits_with_an_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env["VAULTMEM_CONFIG"] = str(tmp_path / "none.toml")
    result = subprocess.run([sys.executable, "-m", "vaultmem", "mcp"], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=50, stdin=subprocess.DEVNULL)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: no vault given")


# the walk-through -------------------------------------------------------------------------------

def walkthrough(text: str) -> list[tuple[str, str, str]]:
    """(request, arguments or "", the answer shown) for each `>` line of the session block."""
    block = text.split("```mcp-session\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[str, str, str]] = []
    for line in block.splitlines():
        if line.startswith("> "):
            request, _, args = line[2:].partition(" {")
            steps.append((request, "{" + args if args else "", ""))
        elif line.startswith("< "):
            request, args, answer = steps[-1]
            steps[-1] = (request, args, answer + line[2:] + "\n")
        else:
            assert line == "" or line.startswith("# "), line
    return steps


@pytest.mark.timeout(240)
def test_the_walkthrough_in_the_docs_replays(daemon: DaemonProcess, vault: Path,
                                             tmp_path: Path) -> None:
    steps = walkthrough(DOCS.read_text(encoding="utf-8"))
    assert [s[0].split()[-1] for s in steps if s[0].startswith("tools/call")] == [
        "search_memory", "save_memory", "observe_memory_usage", "feedback", "feedback",
        "promote_memory", "promote_memory"]
    env = {k: v for k, v in daemon.env.items() if k not in ("VAULTMEM_VAULT", "VAULTMEM_DATA_DIR")}

    async def scenario() -> None:
        args = ("--vault", str(vault), "--data-dir", str(daemon.data))
        async with mcp_session(env, tmp_path / "mcp.log", *args) as s:
            for request, arguments, answer in steps:
                if request == "tools/list":
                    names = [tool.name for tool in (await s.list_tools()).tools]
                    assert answer.strip() == ", ".join(names)
                    continue
                data = await ok(s, request.removeprefix("tools/call "), json.loads(arguments))
                shown = json.loads(answer)
                assert set(shown) <= set(data), request
                for key, value in shown.items():
                    if isinstance(value, list) and value and isinstance(value[0], dict):
                        assert set(value[0]) <= set(data[key][0]), (request, key)

    anyio.run(scenario)
    assert (vault / "STM/2026-10-30 pgbouncer-transaction-mode-no-prepared-statements.md").is_file()
