"""The request/response layer every edge shares: the socket, the MCP bridge, the plugin, and
the daemon's scheduled jobs.

`Api.call(op, body)` validates `body` against the op's schema (`validation.py`) before doing
anything (so bad input changes nothing), runs the operation as its row in the table says
(`operations.py`: the write lane, the undo record) and answers with the shapes of
docs/protocol.md. Errors are VaultmemError subclasses; each edge turns them into its own form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from vaultmem.api.operations import OPERATIONS as TABLE
from vaultmem.api.operations import Answer, Operation
from vaultmem.api.parts import ApiParts
from vaultmem.api.validation import validate_body
from vaultmem.api.wire import to_wire
from vaultmem.core.json_types import JSON
from vaultmem.engine.upkeep_results import Undoable
from vaultmem.engine.write_lane import WriteLane
from vaultmem.errors import InvalidInput


class Api:
    # the operations the edges may ask for (each has a route and a schema: api/schemas.py)
    OPERATIONS: tuple[str, ...] = tuple(op for op, row in TABLE.items() if not row.scheduled)

    def __init__(self, parts: ApiParts, *, lane: WriteLane,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        """The parts come from the composition root (`App.api`). `lane` is the process's one
        write lane, shared by every Api of the process (the daemon's and its jobs')."""
        self.parts = parts
        self.lane = lane
        self.clock = clock

    def call(self, op: str, body: Mapping[str, Any]) -> JSON:
        """The operation's answer in the protocol's JSON (what the socket, the CLI and the MCP
        bridge send and show)."""
        answer = to_wire(self.run(op, body))
        assert isinstance(answer, dict)
        return answer

    def run(self, op: str, body: Mapping[str, Any]) -> Answer:
        """The operation's typed result (`engine/results.py`), `body` validated first."""
        row = TABLE.get(op)
        if row is None or row.scheduled:
            raise InvalidInput(f"unknown operation {op!r}: use one of {', '.join(self.OPERATIONS)}")
        return self._perform(op, row, validate_body(op, body))

    def run_job(self, op: str, body: Mapping[str, Any] | None = None) -> Answer:
        """A scheduled job of the daemon: an operation of the table (a scheduled-only one
        too), run as a request would be; a body with a schema is validated too."""
        row = TABLE[op]
        checked = dict(body or {}) if row.scheduled else validate_body(op, body or {})
        return self._perform(op, row, checked)

    def _perform(self, op: str, row: Operation, body: JSON) -> Answer:
        """Run `row`'s handler: in the write lane when it writes (`now` read once inside it,
        after the operation ahead), recorded for `undo` when it applies changes."""
        if not row.writes(body):
            return row.handler(self.parts, body, self.clock())
        with self.lane.hold(op):
            now = self.clock()
            if not row.recorded(body):
                return row.handler(self.parts, body, now)

            def once() -> Undoable:
                answer = row.handler(self.parts, body, now)
                assert not isinstance(answer, dict), f"{op} answers no typed result"
                return cast(Undoable, answer)

            recorded = self.parts.undoer.record(op, now, once, cast(Any, row.created))
            return cast(Answer, recorded)
