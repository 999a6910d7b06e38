"""The MCP bridge's tools: name, description, input schema, and the daemon operation each calls.

No SDK here: `mcp/bridge.py` turns these specs into MCP tools, and tests and docs read them.
Input schemas are derived from the daemon's own request schemas (`vaultmem.api.schemas.REQUESTS`),
so both sides accept the same values. Arguments are checked here, before anything is sent:
input a schema rejects never reaches the daemon (which checks again).
"""

from __future__ import annotations

from vaultmem.core.json_types import JSON
from vaultmem.mcp.memory_tools import memory_tools
from vaultmem.mcp.tool_spec import REF, TAG_NOTE, ToolSpec, tool_schema

GUIDE = """\
vaultmem is the user's long-term memory, kept as Markdown notes in their Obsidian vault.
Memories fade unless they are used, grow stronger when they help, and are archived (never
deleted) when they fade out.

- Search first: before answering about the user's projects, setup, preferences or past
  decisions, call search_memory. Cite what you use by its title and obsidian:// uri.
- Save what lasts: when the user states or confirms a durable fact, decision, preference,
  convention, pattern or issue, call save_memory with one self-contained idea, a short title,
  a few tags and a type. Never save secrets, credentials or passing small talk.
- Report use: after answering with the help of memories, call observe_memory_usage once with
  their ids and a few tags describing the conversation's topic.
- Give feedback: feedback with helpful=true when a memory was exactly what was needed,
  helpful=false when it was wrong, outdated or irrelevant (it then fades sooner).
- Review: results marked review=true and the items of review_queue are memories about to
  fade; bring up the ones that matter now and report them with observe_memory_usage.
- Forgotten is not gone: archived memories are found with search_memory status
  ["archived"]; restore_memory brings one back when it matters again.
- Housekeeping only when the user asks: sweep, gc and promote_memory are dry runs unless
  dry_run=false, so show the user what would change first; list_clusters, then
  merge_cluster only for members that really say the same thing.
"""


DRY_RUN = ("true (default): only list what would change; false: apply it (notes are moved, "
           "never deleted).")


APPLY = {"apply": "dry_run"}  # the daemon's `apply` is the tools' `dry_run`, inverted


def _apply_unless_dry_run(arguments: JSON) -> JSON:
    """The daemon's `apply` flag from a tool's `dry_run` argument."""
    return {"apply": not arguments["dry_run"]}


def _save() -> ToolSpec:
    return ToolSpec(
        "save_memory", "Save a memory", "save",
        "Save something worth remembering across conversations as a new memory note in the "
        "user's Obsidian vault (folder memories/). Use it for durable facts, decisions, "
        "preferences, conventions, patterns and issues that the user states or confirms: one "
        "self-contained idea per memory, written so that it makes sense without this "
        "conversation. Content that looks like a secret (passwords, API keys, tokens, private "
        "keys) or is too short is refused with the reason. If the same or a nearly identical "
        "memory already exists, that memory is reinforced instead of creating a duplicate "
        "(created=false, reinforced={id, reason, counted}; a save within hours of the memory's "
        "last use is not counted as a use). If a similar memory exists (a reworded save), "
        "nothing is saved and the answer names it (created=false, similar={id, path, title, "
        "similarity}, memory: that memory): touch or leave it, or save again with force=true "
        "when the new text says something it does not. When the new memory updates an older "
        "one (a changed port, version, date or name), pass that memory's id as supersedes: the "
        "old one is kept but marked stale and fades. A save close to an existing memory that "
        "changes a value is saved and answers possible_update_of={id, title, path, reason}: "
        "ask the user, then call supersede_memory to confirm. Answer: {created, reinforced, "
        "superseded, possible_update_of, memory: {id, path, title, uri, tags, type, strength, "
        "score, ...}}.",
        tool_schema(
            "save", ("content",),
            content="The memory itself, in plain Markdown: complete sentences that stand alone.",
            title="A short title for the note (default: its first words).",
            tags={"description": f"A few topic tags. {TAG_NOTE}"},
            type="What kind of memory it is; its type sets how slowly it fades (facts and "
                 "conventions last longest, issues fade fastest). Omit if none fits.",
            strength="Initial strength, 0-2 (default 1.0). Above 1 for something the user "
                     "stressed as important.",
            pinned="true: never forget this memory (only when the user asks for that).",
            source="Where it came from, e.g. conversation, or a URL or document name.",
            force="true: save even when a similar memory exists (only after checking that "
                  "it says something the existing one does not).",
            supersedes="The id of the memory this one replaces (an outdated fact); omit "
                       "otherwise.",
        ),
    )


def _search() -> ToolSpec:
    return ToolSpec(
        "search_memory", "Search memories and notes", "search",
        "Search the user's vault - saved memories and regular notes alike - by meaning and by "
        "exact words. Results are ranked by relevance times memory strength (memories fade "
        "unless used; a strongly relevant old memory is still found). Use it before answering "
        "about the user's projects, setup, preferences or past decisions. Each result: id (null "
        "for a regular note), title, path, uri (an obsidian:// link to cite), snippet, tags, "
        "relevance (0-1, the same scale for every query: above 0.5 is a real match), matched "
        "(relevance above 0.5), score (memory score, null for regular notes), final (the "
        "ranking key: results come best final first, except a superseded memory, listed just "
        "below its "
        "successor, and review items, listed last) "
        "and review (true: a fading memory blended in for spaced repetition; mention it if it "
        "helps and report it with observe_memory_usage). A memory replaced by a newer one "
        "carries superseded_by {id, title, path, uri} (null otherwise) and ranks below its "
        "successor: answer from the successor. Searching does not count as a use. "
        "Every answer has indexing {state, by_words, by_meaning}: state starting (the daemon "
        "has not counted the notes yet), indexing (with done, total: notes indexed so far) or "
        "ready; by_words / by_meaning partial or complete. Unless state is ready the results "
        "may be partial, so say so rather than conclude the vault holds nothing.",
        tool_schema(
            "search", ("query",),
            query="What to look for: a question or keywords, in the user's words.",
            top_k="How many results (1-200, default 10).",
            tags={"description": f"Only notes with any of these tags. {TAG_NOTE}"},
            all_tags={"description": f"Only notes with all of these tags. {TAG_NOTE}"},
            type="Only memories of this type (decision, pattern, convention, issue, "
                 "preference, fact); leaves out regular notes.",
            status="Memory statuses to include: active, promoted, archived (default: active and "
                   "promoted). Add archived to look into forgotten memories.",
            folder="Only notes under this vault folder, e.g. Projects/Crumb.",
            window_days="Only memories used, or notes edited, within this many days.",
            memories_only="true: only saved memories, no regular notes (default false).",
            include_review="Blend in fading memories for spaced repetition (default true).",
            matched_only="true: only real matches (relevance above 0.5); an empty list then "
                         "means the vault holds nothing relevant. Default false: the best "
                         "results whatever their relevance, each with matched true/false.",
            min_relevance="Only results with at least this relevance (0-1).",
        ),
        read_only=True,
    )


def _reading() -> list[ToolSpec]:
    return [
        ToolSpec(
            "get_memory", "Read a memory", "get",
            "Read one memory by id or path: title, tags, type, status, pinned, created, "
            "last_used, use_count, strength, its current score, the lifecycle decision (keep, "
            "forget or promote) with the reason, and its review priority. Does not count as a "
            "use. A regular note (no stm_id) is an error.",
            tool_schema("get", ("id",), id=REF), read_only=True,
        ),
        ToolSpec(
            "related_notes", "Related notes", "related",
            "The notes most similar in meaning to a note or memory (its nearest neighbours), to "
            "follow connections in the vault. Give exactly one of id or path. Answer: {path, "
            "related: [{path, title, similarity}]}.",
            tool_schema("related", (), id=REF,
                    path="A vault-relative note path, e.g. Areas/Homelab/NAS.md.",
                    top_k="How many notes (1-200, default 5)."),
            read_only=True, exactly_one_of=("id", "path"),
        ),
        ToolSpec(
            "review_queue", "Memories about to fade", "review",
            "Memories in the danger zone - fading but not yet forgotten - highest review "
            "priority first. Use it when the user asks what they may be forgetting, or at a "
            "natural pause: bring up the ones that still matter and report them with "
            "observe_memory_usage (or feedback). updates lists proposed updates: a newer "
            "memory that may replace an older one ({id, title, path, reason, by}); ask "
            "the user, then supersede_memory (or unsupersede_memory with by's id to "
            "dismiss). Answer: {items: [memories], total, updates}.",
            tool_schema("review", (), limit="How many items at most (1-1000, default 20)."),
            read_only=True,
        ),
        ToolSpec(
            "list_clusters", "Near-duplicate memories", "clusters",
            "Groups of similar active memories that may say the same thing, best cohesion "
            "first: each with an id, cohesion (mean similarity), a suggested action (merge, "
            "review or keep) and its members (id, path, title). Read the members (get_memory), "
            "decide whether they really are one memory, and merge them with merge_cluster.",
            tool_schema("clusters"), read_only=True,
        ),
        ToolSpec(
            "stats", "Memory statistics", "status",
            "The vault's numbers: notes indexed, memories by status and type, lifecycle "
            "decisions as of now (keep, forget, promote), index coverage (skipped and failed "
            "files with reasons) and the daemon's state (indexing progress, scheduled jobs).",
            tool_schema("status", (), files="true: also list every file with its index status."),
            read_only=True,
        ),
    ]


def _reinforcing() -> list[ToolSpec]:
    return [
        ToolSpec(
            "touch_memory", "Record a use", "touch",
            "Record that a memory was used (last_used = now, use_count + 1), which keeps it "
            "from fading; boost=true also raises its strength by a step (0.1 by default, max "
            "2). For memories used in a conversation prefer observe_memory_usage; to say "
            "whether one helped, use feedback. Give exactly one of id or path. Answers with the "
            "memory after the use.",
            tool_schema("touch", (), id=REF, path="The memory note's vault-relative path.",
                        boost="Also raise the strength (default false)."),
            exactly_one_of=("id", "path"),
        ),
        ToolSpec(
            "observe_memory_usage", "Report memories used", "observe",
            "Report the memories you actually used in this conversation, in one call, with tags "
            "describing the conversation's topic. Each counts as a use and a review; a memory "
            "used outside its own topic (little overlap between its tags and the context tags) "
            "is a cross-domain use and also gains strength. All or nothing: if one id is "
            "unknown, nothing is recorded. Answer: {observed: [memories, each with "
            "cross_domain]}.",
            tool_schema("observe", ("ids",),
                    ids={"description": "The ids (or paths) of the memories used, 1-100."},
                    context_tags={"description": f"The conversation's topic. {TAG_NOTE}"}),
        ),
        ToolSpec(
            "feedback", "Say whether a memory helped", "feedback",
            "Tell vaultmem whether a memory helped. helpful=true counts as a use and raises its "
            "strength by a step (0.1 by default); helpful=false lowers its strength by 0.2 by "
            "default (never below 0), so it fades and is forgotten sooner - use it when a "
            "memory was wrong, outdated or irrelevant. The note's text is never changed. "
            "Answers with the memory after the change.",
            tool_schema("feedback", ("id", "helpful"), id=REF,
                    helpful="true: it helped; false: it was wrong, outdated or irrelevant."),
        ),
    ]


def _lifecycle() -> list[ToolSpec]:
    dry_run = {"type": "boolean", "default": True, "description": DRY_RUN}
    return [
        ToolSpec(
            "sweep", "Run the memory lifecycle", "sweep",
            "Forget and promote in one pass, as the daemon's schedule does: memories whose "
            "score fell below the forget threshold are archived to memories/archive/ "
            "(restorable), memories that proved valuable are promoted to long-term notes in "
            "STM/. Pinned memories are never forgotten. Answer: {dry_run, archive, promote, "
            "keep, archived, promoted}.",
            tool_schema("sweep", (), dry_run=dry_run),
        ),
        ToolSpec(
            "gc", "Forget faded memories", "gc",
            "Forget faded memories: those whose score fell below the forget threshold are moved "
            "to memories/archive/, where they stay restorable; nothing is deleted. Pinned "
            "memories and memories less than a day old are never forgotten. Answer: {dry_run, "
            "archive: [what qualifies, with reasons], archived: [moves], kept}.",
            tool_schema("gc", (), reached_by=APPLY, dry_run=dry_run),
            to_body=_apply_unless_dry_run, reached_by=APPLY,
        ),
        ToolSpec(
            "promote_memory", "Promote to a long-term note", "promote",
            "Promote memories into long-term notes: the note moves to STM/, gets status "
            "promoted and a Related section of [[links]] to its most similar notes, stays "
            "searchable and is never forgotten. With id, that one memory is promoted on "
            "request; without id, every memory that qualifies (used at least twice and still "
            "strong, or used often recently). Answer: {dry_run, promote: [candidates with "
            "reasons], promoted: [moves]}.",
            tool_schema("promote", (), id={"description": f"{REF} Omit to promote every memory "
                                                      "that qualifies."},
                    dry_run=dry_run),
        ),
        ToolSpec(
            "reconcile", "Merge sync conflict copies", "reconcile",
            "When the vault syncs between devices, a sync tool may keep a second copy of a "
            "memory note (Note.sync-conflict-..., Note (conflicted copy ...), Note 2) carrying "
            "the same memory id. This merges each copy into the memory's own note - the uses "
            "recorded on every device are added up, none lost or counted twice - and moves the "
            "copy to memories/archive/; a copy whose text differs stays linked from the note. "
            "Nothing is deleted. The daemon also does it on its own every few minutes. Answer: "
            "{dry_run, duplicates: [{id, canonical, copies, use_count}], merged, "
            "git_conflicts}.",
            tool_schema("reconcile", (), reached_by=APPLY, dry_run=dry_run),
            to_body=_apply_unless_dry_run, reached_by=APPLY,
        ),
        ToolSpec(
            "restore_memory", "Restore an archived memory", "restore",
            "Bring a forgotten (archived) memory back when it turns out to matter again: it "
            "becomes active with a fresh last_used, keeps its history (created, use count, "
            "strength) and moves from memories/archive/ back to memories/. Find archived "
            "memories with search_memory and status [\"archived\"]. Answer: {restored: {id, "
            "from, to}, memory}.",
            tool_schema("restore", ("id",), id=REF),
        ),
        ToolSpec(
            "supersede_memory", "Mark a memory as replaced by a newer one", "supersede",
            "When a newer memory replaces an outdated one (the user confirmed a "
            "possible_update_of, or says a fact changed): the old memory (id) keeps its note and "
            "history, gains superseded_by, ranks below its successor in search, is never "
            "promoted and fades; the newer one (by) gains supersedes. Answer: {superseded: "
            "<the old memory>, by: <the new one>}.",
            tool_schema("supersede", ("id", "by"), id=f"The outdated memory. {REF}",
                    by=f"The memory that replaces it. {REF}"),
        ),
        ToolSpec(
            "unsupersede_memory", "Undo a supersede", "unsupersede",
            "Undo supersede_memory: the stale memory is current again (id: the stale memory, "
            "or its successor). Given a memory with a possible_update_of the user rejected, it "
            "dismisses that proposal. Answer: {unsuperseded: <the memory current again>, "
            "successor, dismissed}.",
            tool_schema("unsupersede", ("id",), id=REF),
        ),
        ToolSpec(
            "pin_memory", "Pin or unpin a memory", "pin",
            "Pin a memory so it is never forgotten, archived or merged away (pinned=true), or "
            "unpin it so it may fade again (pinned=false). Only when the user asks for it. "
            "Not a use. Answers with the memory after the change.",
            tool_schema("pin", ("id", "pinned"), id=REF,
                    pinned="true: never forget it; false: it may fade again."),
        ),
        ToolSpec(
            "merge_cluster", "Merge near-duplicates", "merge_cluster",
            "Merge one cluster from list_clusters into a single new memory (tags united, use "
            "counts summed, the strongest strength plus a bonus); the original notes are moved "
            "to memories/archive/ with stm_merged_into pointing at the new one - nothing is "
            "deleted. Merge only members that truly say the same thing. Answer: {cluster_id, "
            "merged_into: <the new memory>, archived: [moves]}.",
            tool_schema("merge_cluster", ("cluster_id",),
                    cluster_id="A cluster id from list_clusters, e.g. c-826d2862047c."),
        ),
    ]


ORDER = ("save_memory", "search_memory", "get_memory", "related_notes", "touch_memory",
         "observe_memory_usage", "review_queue", "feedback", "pin_memory", "sweep", "gc",
         "promote_memory", "restore_memory", "supersede_memory", "unsupersede_memory",
         "reconcile", "list_clusters", "merge_cluster",
         "stats")
# the tools of mcp/memory_tools.py come last, in its order
TOOLS: tuple[ToolSpec, ...] = (*sorted(
    (_save(), _search(), *_reading(), *_reinforcing(), *_lifecycle()),
    key=lambda tool: ORDER.index(tool.name),
), *memory_tools())
TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
