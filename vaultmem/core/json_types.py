"""`JSON`: the one alias for a JSON object, as the wire carries it (request bodies, the answers
`api/wire.py` builds from the use cases' typed results, the MCP tools' schemas). Defined here,
at the bottom of the layers, so that every layer names it the same way."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
