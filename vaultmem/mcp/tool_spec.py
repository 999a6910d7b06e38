"""What an MCP tool is (`ToolSpec`) and how its input schema is made from the daemon's request
schema (`tool_schema`); shared by mcp/tools.py and mcp/memory_tools.py."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vaultmem.api.schemas import REQUESTS, Schema
from vaultmem.api.validation import validate
from vaultmem.core.json_types import JSON
from vaultmem.errors import InvalidInput

REF = "A memory id (stm_id, a UUID) or the note's vault-relative path, e.g. from search_memory."
TAG_NOTE = "Obsidian tags without '#', e.g. homelab or project/web (nested tags match)."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    op: str  # the daemon operation (vaultmem.api.ops.Api.OPERATIONS)
    description: str
    schema: Schema  # the published input schema: a JSON Schema object
    to_body: Callable[[JSON], JSON] = dict  # checked arguments -> the daemon's request body
    read_only: bool = False
    exactly_one_of: tuple[str, ...] = ()
    # socket fields this tool reaches through another argument: {socket field: argument}
    reached_by: Mapping[str, str] = field(default_factory=dict)

    def request(self, arguments: Mapping[str, Any]) -> JSON:
        """The daemon body for these arguments, defaults filled in (so the tool's defaults
        win), or InvalidInput saying which argument is wrong and how."""
        try:
            checked: JSON = validate(self.schema, arguments, "arguments")
        except InvalidInput as exc:
            message = exc.message.removeprefix("arguments.").removeprefix("arguments: ")
            raise InvalidInput(f"invalid arguments for {self.name}: {message}") from None
        given = [name for name in self.exactly_one_of if name in checked]
        if self.exactly_one_of and len(given) != 1:
            raise InvalidInput(f"invalid arguments for {self.name}: give exactly one of "
                               f"{' or '.join(self.exactly_one_of)}")
        return self.to_body(checked)


def tool_schema(op: str, required: tuple[str, ...] = (), *, reached_by: Mapping[str, str] = {},
                **fields: str | Schema) -> Schema:
    """An object schema from REQUESTS[op], the one protocol definition: every field of the
    daemon's request, each given either a description (str) or schema keys laid over the
    daemon's (dict, with a description). A daemon field the tool reaches through another
    argument is named in `reached_by`; a daemon field neither described nor reached, or a
    described field the daemon does not know (other than a `reached_by` argument), is an
    error, so the tools cannot drift from the socket."""
    source: dict[str, Schema] = REQUESTS[op]["properties"]
    missing = [name for name in source if name not in fields and name not in reached_by]
    unknown = [name for name in fields
               if name not in source and name not in reached_by.values()]
    if missing or unknown:
        raise ValueError(f"the {op} tool's fields do not mirror the socket's: "
                         f"missing {missing}, unknown {unknown}")
    properties: dict[str, Schema] = {}
    for name, spec in fields.items():
        base = copy.deepcopy(source.get(name, {}))
        extra = {"description": spec} if isinstance(spec, str) else spec
        properties[name] = {**base, **extra}
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


# the content limits: the save gate's, from Settings (`min_content_chars`, `max_content_chars`)
CONTENT_TOOLS = ("save_memory", "edit_memory")


def with_content_limits(spec: ToolSpec, min_chars: int, max_chars: int) -> ToolSpec:
    """`spec` publishing the gate's content limits (so a client sees the limit the daemon
    applies, not only the wire's hard cap); other tools are returned as they are."""
    if spec.name not in CONTENT_TOOLS or "content" not in spec.schema["properties"]:
        return spec
    schema = copy.deepcopy(spec.schema)
    content = schema["properties"]["content"]
    content["minLength"] = max(min(min_chars, content.get("maxLength", min_chars)), 1)
    content["maxLength"] = min(max_chars, content.get("maxLength", max_chars))
    return replace(spec, schema=schema)
