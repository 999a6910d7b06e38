"""MCP tools for looking after single memories and whole operations: list_memories,
forget_memory, edit_memory, undo_operation (each one daemon operation, see api/operations.py).
"""

from __future__ import annotations

from vaultmem.mcp.tool_spec import REF, TAG_NOTE, ToolSpec, tool_schema


def memory_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            "list_memories", "List memories", "list",
            "List the saved memories with their status, score, use count and what the next "
            "sweep would do with each (decision keep, forget or promote), best score first "
            "by default. Use it to see what is remembered about a topic (tags) or of a kind "
            "(type), or which memories are about to be forgotten (decision=forget). Answer: "
            "{memories: [{id, path, title, status, score, use_count, decision, reason, ...}], "
            "total}.",
            tool_schema("list", (),
                    status="Statuses to list (default [\"active\", \"promoted\"]; add "
                           "\"archived\" for forgotten ones).",
                    tags={"description": f"Any of these tags. {TAG_NOTE}"},
                    type="Only memories of this type (decision, pattern, convention, issue, "
                         "preference, fact).",
                    decision="Only what the next sweep would keep, forget or promote.",
                    pinned="Only pinned (true) or unpinned (false) memories.",
                    sort="score (default), last_used, created, use_count or title.",
                    limit="At most this many (default 100)."),
            read_only=True,
        ),
        ToolSpec(
            "forget_memory", "Forget a memory now", "forget",
            "Forget one memory now, when the user says it is wrong, outdated or unwanted: it "
            "is archived (stm_status archived, moved to memories/archive/), never deleted, "
            "and restore_memory brings it back. A pinned memory is refused (unpin it first). "
            "Answer: {forgotten: {id, from, to}, memory}.",
            tool_schema("forget", ("id",), id=REF),
        ),
        ToolSpec(
            "edit_memory", "Edit a memory", "edit",
            "Correct or update a memory in place when the user says what it should say now: "
            "its text (replaces the remembered text), its title and/or its tags (replace its "
            "tags). Only the memory's own words change; its history (uses, strength, dates) "
            "is kept and the edit is not a use. The text passes the same gate as save_memory "
            "(secrets refused). Answer: {edited: {id, path, changed}, memory}.",
            tool_schema("edit", ("id",), id=REF,
                    content="The new text, complete: it replaces the memory's text.",
                    title="A new short title.",
                    tags={"description": f"The new tags (replace the old ones). {TAG_NOTE}"}),
        ),
        ToolSpec(
            "undo_operation", "Undo a sweep or merge", "undo",
            "Undo a whole sweep, gc, promote_memory or merge_cluster in one step, when the "
            "user wants it taken back: every note it archived, promoted or merged returns "
            "exactly as it was, where it was; a memory a merge created is archived. A note "
            "changed since is left as it is and listed under skipped. Those calls answer with "
            "their operation id (operation); without one, the last operation is undone. "
            "list=true only lists the recent operations. Answer: {operation, kind, restored: "
            "[{from, to}], archived, skipped: [{path, reason}]}.",
            tool_schema("undo", (),
                    operation="The operation id, e.g. op-3f2a9c1b7d4e (default: the last).",
                    list="true: only list the recent operations that can be undone."),
        ),
    ]
