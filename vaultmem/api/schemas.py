"""The socket's contract in one place: the routes, the request schemas that `validation.py`
checks bodies against, the response schemas, and the OpenAPI 3.1 document built from them.

Schemas are plain JSON Schema dicts (the subset `validation.validate` understands: type, properties,
required, additionalProperties, items, enum, minimum/maximum, exclusiveMinimum,
minLength/maxLength, minItems/maxItems, default, and `oneOf` of `required` alternatives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultmem import __version__
from vaultmem.core.memory import ACTIVE, MEMORY_TYPES, PROMOTED, STATUSES

Schema = dict[str, Any]

# building blocks ----------------------------------------------------------------------------

REF = {"type": "string", "minLength": 1, "maxLength": 1024,
       "description": "A memory id (stm_id) or a vault-relative note path."}
TAG = {"type": "string", "minLength": 1, "maxLength": 200}
TAGS = {"type": "array", "items": TAG, "maxItems": 64}
TOP_K = {"type": "integer", "minimum": 1, "maximum": 200}
BOOL = {"type": "boolean"}
STR = {"type": "string"}
NUM = {"type": "number"}
INT = {"type": "integer"}
NULL_STR = {"type": ["string", "null"]}
OBJ = {"type": "object"}


def body(properties: Mapping[str, Schema], required: tuple[str, ...] = (), **extra: Any) -> Schema:
    """A request body: an object that accepts only the listed fields."""
    schema: Schema = {"type": "object", "properties": dict(properties),
                      "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def shape(properties: Mapping[str, Schema], required: tuple[str, ...] | None = None) -> Schema:
    """A response body: these fields are always present; more may be added later."""
    return {"type": "object", "properties": dict(properties),
            "required": list(properties if required is None else required)}


def one_of(*names: str) -> list[Schema]:
    return [{"required": [name]} for name in names]


# request bodies -----------------------------------------------------------------------------

REQUESTS: dict[str, Schema] = {
    "health": body({}),
    "status": body({"files": {**BOOL, "default": False,
                              "description": "Also list every file with its index status."}}),
    "search": body({
        "query": {"type": "string", "minLength": 1, "maxLength": 4000},
        "top_k": TOP_K,
        "tags": {**TAGS, "description": "Any of these tags (nested tags match)."},
        "all_tags": {**TAGS, "description": "All of these tags."},
        "type": {"type": "string", "minLength": 1, "maxLength": 64},
        "status": {"type": "array", "items": {"type": "string", "enum": list(STATUSES)},
                   "minItems": 1, "maxItems": len(STATUSES)},
        "folder": {"type": "string", "maxLength": 1024},
        "window_days": {"type": "number", "exclusiveMinimum": 0, "maximum": 36500},
        "memories_only": {**BOOL, "default": False},
        "include_review": {**BOOL, "default": True},
        "matched_only": {**BOOL, "default": False,
                         "description": "Only real matches: relevance above the match "
                                        "threshold (0.5); no results means nothing relevant."},
        "min_relevance": {"type": "number", "minimum": 0, "maximum": 1,
                          "description": "Only results with at least this relevance (0-1)."},
    }, ("query",)),
    "related": body({"id": REF, "path": REF, "top_k": {**TOP_K, "default": 5}},
                    oneOf=one_of("id", "path")),
    "get": body({"id": REF}, ("id",)),
    "save": body({
        "content": {"type": "string", "minLength": 1, "maxLength": 200_000},
        "title": {"type": "string", "minLength": 1, "maxLength": 300},
        "tags": TAGS,
        "type": {"type": "string", "enum": list(MEMORY_TYPES)},
        "strength": {"type": "number", "minimum": 0, "maximum": 2, "default": 1.0},
        "pinned": {**BOOL, "default": False},
        "source": {"type": "string", "minLength": 1, "maxLength": 500},
        "force": {**BOOL, "default": False, "description":
                  "Save even when a similar memory exists (default: hold the save back)."},
        "supersedes": {**REF, "description": "The memory this one replaces (its id or path): "
                       "it keeps its note and history, is marked superseded and fades."},
    }, ("content",)),
    "touch": body({"id": REF, "path": REF, "boost": {**BOOL, "default": False}},
                  oneOf=one_of("id", "path")),
    "observe": body({
        "ids": {"type": "array", "items": REF, "minItems": 1, "maxItems": 100},
        "context_tags": {**TAGS, "default": []},
    }, ("ids",)),
    "review": body({"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20}}),
    "sweep": body({"dry_run": {**BOOL, "default": True}}),
    "gc": body({"apply": {**BOOL, "default": False}}),
    "reconcile": body({"apply": {**BOOL, "default": False, "description":
                                 "Merge and archive the copies (default: only show them)."}}),
    "promote": body({"id": REF, "dry_run": {**BOOL, "default": False}}),
    "clusters": body({}),
    "merge_cluster": body({"cluster_id": {"type": "string", "minLength": 1, "maxLength": 200}},
                          ("cluster_id",)),
    "reindex": body({"full": {**BOOL, "default": False}}),
    "feedback": body({"id": REF, "helpful": {
        **BOOL, "description": "true: a use with a strength boost; false: strength lowered."}},
        ("id", "helpful")),
    "restore": body({"id": REF}, ("id",)),
    "supersede": body({"id": {**REF, "description": "The stale memory (id or path)."},
                       "by": {**REF, "description": "The memory that replaces it."}},
                      ("id", "by")),
    "unsupersede": body({"id": {**REF, "description": "A superseded memory (it becomes "
                                "current again) or its successor."}}, ("id",)),
    "pin": body({"id": REF, "pinned": {
        **BOOL, "description": "true: never forget this memory; false: it may fade again."}},
        ("id", "pinned")),
    "list": body({
        "status": {"type": "array", "items": {"type": "string", "enum": list(STATUSES)},
                   "minItems": 1, "maxItems": len(STATUSES), "default": [ACTIVE, PROMOTED]},
        "tags": {**TAGS, "description": "Any of these tags (nested tags match)."},
        "type": {"type": "string", "minLength": 1, "maxLength": 64},
        "decision": {"type": "string", "enum": ["keep", "forget", "promote"],
                     "description": "Only memories the next sweep would keep, forget or "
                                    "promote."},
        "pinned": {**BOOL, "description": "Only pinned (true) or unpinned (false) memories."},
        "sort": {"type": "string", "enum": ["score", "last_used", "created", "use_count",
                                            "title"], "default": "score"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 100},
    }),
    "forget": body({"id": REF}, ("id",)),
    "edit": body({
        "id": REF,
        "content": {"type": "string", "minLength": 1, "maxLength": 200_000,
                    "description": "The memory's new text (replaces the remembered text)."},
        "title": {"type": "string", "minLength": 1, "maxLength": 300},
        "tags": {**TAGS, "description": "The memory's new tags (replace its tags; [] removes "
                                        "them)."},
    }, ("id",)),
    "undo": body({
        "operation": {"type": "string", "minLength": 1, "maxLength": 64, "description":
                      "The operation to undo (default: the last one not undone yet)."},
        "list": {**BOOL, "default": False,
                 "description": "Only list the recent operations that can be undone."},
    }),
}

# responses ------------------------------------------------------------------------------------

MEMORY = shape({
    "id": STR, "path": STR, "title": STR, "uri": STR, "tags": {"type": "array", "items": STR},
    "type": NULL_STR, "status": {"type": "string", "enum": list(STATUSES)}, "pinned": BOOL,
    "source": NULL_STR, "created": STR, "last_used": STR, "use_count": INT, "strength": NUM,
    "review_count": INT, "cross_domain_count": INT, "promoted_at": NULL_STR,
    "merged_into": NULL_STR, "superseded_by": NULL_STR, "supersedes": NULL_STR,
    "possible_update_of": NULL_STR, "score": NUM,
    "decision": {"type": "string", "enum": ["keep", "forget", "promote"]}, "reason": STR,
    "review_priority": NUM,
})
SEARCH = shape({"query": STR, "results": {"type": "array", "items": shape({
    "id": NULL_STR, "path": STR, "title": STR, "snippet": STR, "uri": STR,
    "tags": {"type": "array", "items": STR}, "relevance": NUM,
    "score": {"type": ["number", "null"]}, "final": NUM, "review": BOOL,
    "superseded_by": {"type": ["object", "null"]}})},
    # the index's state on every answer: starting (not counted yet), indexing (with the notes
    # whose vectors are written, done of total), ready; by_words and by_meaning say whether
    # every note is searchable by its words and by meaning yet (partial, complete)
    "indexing": shape({"state": {"enum": ["starting", "indexing", "ready"]},
                       "by_words": {"enum": ["partial", "complete"]},
                       "by_meaning": {"enum": ["partial", "complete"]},
                       "done": INT, "total": INT}, ("state", "by_words", "by_meaning"))},
    ("query", "results", "indexing"))
ITEMS = {"type": "array", "items": shape({"id": STR, "path": STR, "decision": STR, "reason": STR,
                                         "score": NUM})}
MOVES = {"type": "array", "items": shape({"id": STR, "from": STR, "to": STR})}
LEFT_ALONE = {"type": "array", "items": shape({"id": STR, "path": STR, "reason": STR})}
MOVES_BACK = {"type": "array", "items": shape({"from": STR, "to": STR})}
ERROR = shape({"error": shape({"code": STR, "message": STR})})

RESPONSES: dict[str, Schema] = {
    "health": shape({"status": {"type": "string", "enum": ["ok"]}, "version": STR, "vault": STR}),
    "status": shape({"vault": STR, "notes": INT, "memories": OBJ, "coverage": OBJ,
                     "embedder": STR, "model": shape({"setting": STR, "model": STR,
                                                      "reason": STR}),
                     "languages": OBJ}),
    "search": SEARCH,
    "related": shape({"path": STR, "related": {"type": "array", "items": shape(
        {"path": STR, "title": STR, "similarity": NUM})}}),
    "get": MEMORY,
    "save": shape({"created": BOOL, "reinforced": {"type": ["object", "null"]}, "memory": MEMORY,
                   "similar": shape({"id": STR, "path": STR, "title": STR, "similarity": NUM}),
                   "superseded": {"type": ["object", "null"]},
                   "possible_update_of": {"type": ["object", "null"]}},
                  ("created", "reinforced", "memory")),
    "supersede": shape({"superseded": MEMORY, "by": MEMORY}),
    "unsupersede": shape({"unsuperseded": {"type": ["object", "null"]},
                          "successor": {"type": ["object", "null"]},
                          "dismissed": {"type": ["object", "null"]}},
                         ("unsuperseded", "successor")),
    "touch": MEMORY,
    "observe": shape({"observed": {"type": "array", "items": MEMORY}}),
    "review": shape({"items": {"type": "array", "items": MEMORY}, "total": INT,
                     "updates": {"type": "array", "items": shape({
                         "id": STR, "path": STR, "title": STR, "uri": STR, "reason": STR,
                         "by": OBJ})}}),
    "sweep": shape({"dry_run": BOOL, "archive": ITEMS, "promote": ITEMS, "keep": INT,
                    "archived": MOVES, "promoted": MOVES, "finished_moves": MOVES,
                    "left_alone": LEFT_ALONE}),
    "gc": shape({"dry_run": BOOL, "archive": ITEMS, "archived": MOVES, "kept": INT,
                 "left_alone": LEFT_ALONE}),
    "reconcile": shape({"dry_run": BOOL, "duplicates": {"type": "array", "items": shape({
        "id": STR, "canonical": STR, "use_count": INT, "copies": {"type": "array", "items": shape(
            {"path": STR, "kind": NULL_STR, "text_differs": BOOL})}})},
        "merged": {"type": "array", "items": shape({
            "id": STR, "canonical": STR, "use_count": INT,
            "archived": {"type": "array", "items": shape({"from": STR, "to": STR})},
            "linked": {"type": "array", "items": STR}})},
        "git_conflicts": {"type": "array", "items": STR}}),
    "promote": shape({"dry_run": BOOL, "promote": ITEMS, "promoted": MOVES,
                      "left_alone": LEFT_ALONE}),
    "clusters": shape({"clusters": {"type": "array", "items": shape({
        "id": STR, "cohesion": NUM, "action": STR, "members": {"type": "array", "items": shape(
            {"id": STR, "path": STR, "title": STR})}})}}),
    "merge_cluster": shape({"cluster_id": STR, "merged_into": MEMORY, "archived": MOVES}),
    "reindex": shape({name: INT for name in ("added", "changed", "meta_changed", "moved",
                                             "deleted", "skipped", "failed", "chunks_embedded")}
                     | {"seconds": NUM, "rebuilt_reason": NULL_STR,
                        "failures": {"type": "array", "items": {"type": "array", "items": STR}}}),
    "feedback": MEMORY,
    "pin": MEMORY,
    "restore": shape({"restored": shape({"id": STR, "from": STR, "to": STR}), "memory": MEMORY}),
    "list": shape({"memories": {"type": "array", "items": MEMORY}, "total": INT}),
    "forget": shape({"forgotten": shape({"id": STR, "from": STR, "to": STR}), "memory": MEMORY}),
    "edit": shape({"edited": shape({"id": STR, "path": STR, "changed": {
        "type": "array", "items": STR}}), "memory": MEMORY}),
    "undo": shape({"operation": STR, "kind": STR, "restored": MOVES_BACK,
                   "archived": MOVES, "skipped": {"type": "array", "items": shape(
                       {"path": STR, "reason": STR})}}, ()),
    "openapi": OBJ,
}

COMPONENTS: dict[str, Schema] = {"Memory": MEMORY, "SearchResponse": SEARCH, "Error": ERROR}

# routes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # an OpenAPI path template; at most one parameter, `{id}`
    op: str  # the Api operation (or "openapi" for the document itself)
    summary: str
    auth: bool = True
    source: str = "none"  # where the op's body comes from: "json", "query" or "none"
    path_field: str | None = None  # the body field that receives `{id}`


ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/health", "health", "Is the daemon up? (no token needed)", auth=False),
    Route("GET", "/v1/status", "status", "Counts, decisions, index coverage and daemon jobs",
          source="query"),
    Route("POST", "/v1/search", "search", "Hybrid search re-ranked by memory strength",
          source="json"),
    Route("POST", "/v1/related", "related", "Notes most similar to a note or memory",
          source="json"),
    Route("GET", "/v1/memories/{id}", "get", "One memory with its score and decision",
          path_field="id"),
    Route("POST", "/v1/memories", "save", "Save a memory (through the intake gate)",
          source="json"),
    Route("POST", "/v1/touch", "touch", "Record a use of a memory", source="json"),
    Route("POST", "/v1/observe", "observe", "Record uses in a conversation with context tags",
          source="json"),
    Route("GET", "/v1/review", "review", "Memories worth revisiting before they fade",
          source="query"),
    Route("POST", "/v1/sweep", "sweep", "Forget and promote (dry run by default)",
          source="json"),
    Route("POST", "/v1/gc", "gc", "Archive faded memories (dry run unless apply)", source="json"),
    Route("POST", "/v1/reconcile", "reconcile",
          "Merge sync conflict copies into their memory (dry run unless apply)", source="json"),
    Route("POST", "/v1/promote", "promote", "Promote one memory or every one that qualifies",
          source="json"),
    Route("GET", "/v1/clusters", "clusters", "Clusters of similar memories"),
    Route("POST", "/v1/clusters/{id}/merge", "merge_cluster", "Merge a cluster into one memory",
          source="json", path_field="cluster_id"),
    Route("POST", "/v1/reindex", "reindex", "Bring the index up to date", source="json"),
    Route("POST", "/v1/feedback", "feedback", "Say whether a memory helped (strength up or down)",
          source="json"),
    Route("POST", "/v1/pin", "pin", "Pin or unpin a memory (pinned memories are never forgotten)",
          source="json"),
    Route("POST", "/v1/restore", "restore",
          "Bring an archived memory back (active, used now, out of the archive folder)",
          source="json"),
    Route("POST", "/v1/list", "list", "Memories with status, score and decision, filtered",
          source="json"),
    Route("POST", "/v1/forget", "forget",
          "Forget one memory now (archived, restorable)", source="json"),
    Route("POST", "/v1/edit", "edit", "Change a memory's text, title or tags", source="json"),
    Route("POST", "/v1/undo", "undo", "Undo a whole sweep, gc, promotion or merge",
          source="json"),
    Route("POST", "/v1/supersede", "supersede",
          "Mark a memory as replaced by a newer one (both keep their notes)", source="json"),
    Route("POST", "/v1/unsupersede", "unsupersede",
          "Undo a supersede: the stale memory is current again", source="json"),
    Route("GET", "/v1/openapi.json", "openapi", "This document"),
)



def _pattern(route: Route) -> re.Pattern[str]:
    """`{id}` matches one segment; as the last segment it may span slashes (a note path)."""
    last = route.path.endswith("}")
    regex = re.escape(route.path).replace(r"\{id\}", "(?P<id>.+)" if last else "(?P<id>[^/]+)")
    return re.compile(regex)


_PATTERNS = [(route, _pattern(route)) for route in ROUTES]


def match_path(path: str) -> list[tuple[Route, str | None]]:
    """The routes (any method) whose template matches `path`, with the raw `{id}` if any."""
    found = []
    for route, pattern in _PATTERNS:
        match = pattern.fullmatch(path)
        if match is not None:
            found.append((route, match.groupdict().get("id")))
    return found


# the document ---------------------------------------------------------------------------------


def openapi_document() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "vaultmem", "version": __version__,
                 "description": "The vaultmem daemon's localhost socket (see docs/protocol.md)."},
        "servers": [{"url": "http://127.0.0.1:7345"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {name: _refs(schema, top=schema) for name, schema in COMPONENTS.items()},
        },
    }


def _operation(route: Route) -> dict[str, Any]:
    request = REQUESTS.get(route.op, body({}))
    operation: dict[str, Any] = {
        "operationId": route.op, "summary": route.summary,
        "responses": {
            "200": {"description": "OK", "content": _json(RESPONSES[route.op])},
            "default": {"description": "An error", "content": _json(ERROR)},
        },
    }
    if not route.auth:
        operation["security"] = []
    parameters = []
    if route.path_field is not None:
        parameters.append({"name": "id", "in": "path", "required": True,
                           "schema": request["properties"][route.path_field]})
    if route.source == "query":
        required = set(request.get("required", ()))
        parameters += [{"name": name, "in": "query", "required": name in required,
                        "schema": schema} for name, schema in request["properties"].items()]
    if parameters:
        operation["parameters"] = parameters
    if route.source == "json":
        fields = {k: v for k, v in request["properties"].items() if k != route.path_field}
        schema = {**request, "properties": fields,
                  "required": [r for r in request.get("required", ()) if r in fields]}
        operation["requestBody"] = {"required": bool(schema["required"]), "content": _json(schema)}
    return operation


def _json(schema: Schema) -> dict[str, Any]:
    return {"application/json": {"schema": _refs(schema)}}


def _refs(schema: Any, top: Any = None) -> Any:
    """A copy of `schema` with the shared components replaced by `$ref`s."""
    if isinstance(schema, dict):
        for name, component in COMPONENTS.items():
            if schema is component and schema is not top:
                return {"$ref": f"#/components/schemas/{name}"}
        return {k: _refs(v, top) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_refs(v, top) for v in schema]
    return schema
