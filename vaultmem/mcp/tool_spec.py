"""What an MCP tool is (`ToolSpec`) and how its input schema is made from the daemon's request
schema (`tool_schema`); shared by mcp/tools.py and mcp/memory_tools.py."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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


def tool_schema(op: str, required: tuple[str, ...] = (), **fields: str | Schema) -> Schema:
    """An object schema from REQUESTS[op]: the fields named, in order, each given either a
    description (str) or schema keys laid over the daemon's (dict, with a description)."""
    source: dict[str, Schema] = REQUESTS[op]["properties"]
    properties: dict[str, Schema] = {}
    for name, spec in fields.items():
        base = copy.deepcopy(source.get(name, {}))
        extra = {"description": spec} if isinstance(spec, str) else spec
        properties[name] = {**base, **extra}
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema
