"""The MCP tools mirror the socket: every field of every daemon request a tool calls is an
argument of that tool (or reached through one, as `dry_run` reaches `apply`), with the daemon's
own schema, and a value given reaches the daemon's body. The content limits the tools publish
are the save gate's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmem.api.schemas import REQUESTS
from vaultmem.config import Settings
from vaultmem.mcp.bridge import Bridge
from vaultmem.mcp.tool_spec import ToolSpec, tool_schema
from vaultmem.mcp.tools import TOOLS

# daemon operations no tool calls, and why
NOT_TOOLS = {"health": "liveness of the socket, answered by the bridge's own connection",
             "reindex": "an administrator's rebuild, run from the command line"}

SAMPLES: dict[str, Any] = {"string": "Notes", "integer": 3, "number": 0.5, "boolean": True,
                           "array": ["x"]}


def _sample(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("type") == "array" and "enum" in schema.get("items", {}):
        return [schema["items"]["enum"][0]]
    kind = schema.get("type")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind in ("integer", "number"):
        value = SAMPLES[kind]
        value = min(value, schema.get("maximum", value))
        return max(value, schema.get("minimum", value))
    return SAMPLES[kind]


def test_every_daemon_operation_has_a_tool_or_a_reason() -> None:
    called = {tool.op for tool in TOOLS}
    assert set(REQUESTS) - called == set(NOT_TOOLS)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_socket_field_reaches_the_daemon_from_the_tool(tool: ToolSpec) -> None:
    socket = REQUESTS[tool.op]["properties"]
    for name, schema in socket.items():
        argument = tool.reached_by.get(name, name)
        assert argument in tool.schema["properties"], (tool.name, name)
        if argument != name:
            continue
        # the same schema; a tool may only describe it and choose a safer default (dry runs)
        mirrored = {k: v for k, v in tool.schema["properties"][name].items()
                    if k not in ("description", "default")}
        assert mirrored == {k: v for k, v in schema.items()
                            if k not in ("description", "default")}, name
        value = _sample(schema)
        arguments = {name: value}
        for other in (*tool.schema.get("required", ()),):
            arguments.setdefault(other, _sample(socket.get(other, {"type": "string"})))
        if tool.exactly_one_of and name not in tool.exactly_one_of:
            arguments.setdefault(tool.exactly_one_of[0], "memories/a.md")
        assert tool.request(arguments)[name] == value, (tool.name, name)


def test_dry_run_reaches_apply_inverted() -> None:
    gc = next(tool for tool in TOOLS if tool.name == "gc")
    assert gc.request({"dry_run": False}) == {"apply": True}
    assert gc.request({}) == {"apply": False}


def test_a_tool_that_leaves_out_a_socket_field_cannot_be_built() -> None:
    with pytest.raises(ValueError, match=r"missing \['all_tags'"):
        tool_schema("search", ("query",), **{name: "d" for name in REQUESTS["search"]
                                             ["properties"] if name != "all_tags"})


def test_the_reported_search_arguments_are_accepted() -> None:
    search = next(tool for tool in TOOLS if tool.name == "search_memory")
    body = search.request({"query": "nas", "memories_only": True, "all_tags": ["homelab"]})
    assert body["memories_only"] is True and body["all_tags"] == ["homelab"]


def test_the_tools_publish_the_gates_content_limit(tmp_path: Path) -> None:
    bridge = Bridge(tmp_path, tmp_path, "vaultmem run", content_chars=(12, 20_000))
    for name in ("save_memory", "edit_memory"):
        content = bridge.tools[name].schema["properties"]["content"]
        assert (content["minLength"], content["maxLength"]) == (12, 20_000)
    default = Settings()
    assert Bridge(tmp_path, tmp_path, "x").tools["save_memory"].schema["properties"][
        "content"]["maxLength"] == default.max_content_chars
    answer = bridge.call("save_memory", {"content": "x" * 20_001})
    assert answer.is_error and "20000" in answer.content[0].text  # type: ignore[union-attr]
