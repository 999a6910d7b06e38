"""`JSON`: the one alias for a JSON object, as the wire carries it (request bodies, answers,
the MCP tools' schemas, the few shapes still built as JSON below the wire). Defined here, at
the bottom of the layers, so that every layer names it the same way."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
