"""`vaultmem mcp`: a stdio MCP server whose tools call the running daemon.

The bridge opens no index and writes no note: every tool call looks up the daemon that serves
the vault (through the vault's data dir, at each call, so a restarted daemon is found again)
and sends it one request. Without a daemon, each call answers with one tool error saying how
to start it, and the server stays up. stdout carries MCP messages only; logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from vaultmem import __version__
from vaultmem.api.client import Client, discover
from vaultmem.config import Settings
from vaultmem.errors import DaemonError, InvalidInput, VaultmemError
from vaultmem.mcp.tool_spec import ToolSpec, with_content_limits
from vaultmem.mcp.tools import GUIDE, TOOLS_BY_NAME
from vaultmem.vault.writer_lock import DAEMON, current_holder

log = logging.getLogger("vaultmem.mcp")

Connect = Callable[[Path], Client | None]


class NotRunning(DaemonError):
    """No daemon serves the vault (the message says how to start one)."""


DEFAULT_CONTENT_CHARS = (Settings().min_content_chars, Settings().max_content_chars)


class Bridge:
    """Tool calls in, daemon requests out; every outcome is a CallToolResult."""

    def __init__(self, vault: Path, data_dir: Path, start_command: str,
                 connect: Connect = discover, *,
                 content_chars: tuple[int, int] = DEFAULT_CONTENT_CHARS) -> None:
        self.vault = vault
        self.data_dir = data_dir
        self.start_command = start_command
        self._connect = connect
        # the tools publish the save gate's content limits (`min_content_chars`,
        # `max_content_chars` of the vault's settings), not only the wire's hard cap
        self.tools: dict[str, ToolSpec] = {
            name: with_content_limits(spec, *content_chars)
            for name, spec in TOOLS_BY_NAME.items()}

    def not_running_message(self) -> str:
        return (f"The vaultmem daemon is not running for the vault {self.vault}, so no memory "
                f"tool can work yet. Start it in a terminal with: {self.start_command} "
                "- then call the tool again.")

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        spec = self.tools.get(name)
        if spec is None:
            return error_result(f"unknown tool {name!r}: use one of "
                                f"{', '.join(self.tools)}")
        try:
            body = spec.request({} if arguments is None else arguments)
        except InvalidInput as exc:
            return error_result(exc.message)
        try:
            data = self._send(spec, body)
        except NotRunning as exc:
            return error_result(exc.message)
        except VaultmemError as exc:
            return error_result(f"{name} failed ({exc.code}): {exc.message}")
        except Exception:
            log.exception("tool %s failed", name)
            return error_result(f"{name} failed: an internal error in the vaultmem MCP bridge "
                                "(the details are in its log on stderr)")
        return success_result(data)

    def client(self) -> Client | None:
        """The daemon of this data dir, else the one the vault's lock names (a daemon started
        with another data dir serves this vault on this machine)."""
        client = self._connect(self.data_dir)
        if client is None:
            holder = current_holder(self.vault)
            if holder is not None and holder.kind == DAEMON and holder.data_dir:
                client = self._connect(Path(holder.data_dir))
        return client

    def _send(self, spec: ToolSpec, body: dict[str, Any]) -> dict[str, Any]:
        client = self.client()
        if client is None:
            raise NotRunning(self.not_running_message())
        log.info("%s -> %s", spec.name, spec.op)
        try:
            return client.call_op(spec.op, body)
        except DaemonError:
            if self.client() is None:  # it went away during the call
                raise NotRunning(self.not_running_message()) from None
            raise


def success_result(data: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def mcp_tool(spec: ToolSpec) -> types.Tool:
    hints = types.ToolAnnotations(
        title=spec.title, read_only_hint=spec.read_only, destructive_hint=False,
        idempotent_hint=spec.read_only, open_world_hint=False,
    )
    return types.Tool(name=spec.name, title=spec.title, description=spec.description,
                      input_schema=spec.schema, annotations=hints)


def build_server(bridge: Bridge) -> Server[Any]:
    tools = [mcp_tool(spec) for spec in bridge.tools.values()]

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        # the daemon call blocks (plain HTTP): keep the event loop free for other messages
        return await anyio.to_thread.run_sync(bridge.call, params.name, params.arguments)

    return Server(
        "vaultmem", version=__version__, title="vaultmem",
        description="Long-term memory for assistants, kept in an Obsidian vault.",
        instructions=GUIDE, on_list_tools=list_tools, on_call_tool=call_tool,
    )


def serve_stdio(bridge: Bridge, log_level: str = "warning") -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    client = bridge.client()
    where = (f"daemon at {client.base_url}" if client is not None
             else f"no daemon yet (start it with: {bridge.start_command})")
    print(f"vaultmem mcp {__version__}: tools for the vault {bridge.vault}; {where}",
          file=sys.stderr, flush=True)
    server = build_server(bridge)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
