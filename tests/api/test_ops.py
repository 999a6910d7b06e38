"""Api.call without a socket: strict validation before any effect, the ops' wiring and shapes."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_server import REFERENCE, SAMPLE_ID, SAMPLE_PATH, digest, sample_app
from tests.conftest import SAMPLE_VAULT
from vaultmem import __version__
from vaultmem.api.ops import Api
from vaultmem.api.schemas import REQUESTS, RESPONSES, ROUTES, openapi_document
from vaultmem.api.validation import parse_body, query_body, validate
from vaultmem.app import App, build_app
from vaultmem.config import load_settings
from vaultmem.engine.results import MemoryView, MergeResult
from vaultmem.engine.status_results import DaemonIndexing, DaemonStatus
from vaultmem.errors import InvalidInput, NotFound, Refused
from vaultmem.pipeline.progress import IDLE


class FakeConsolidator:
    def __init__(self, merged_into: MemoryView) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.merged_into = merged_into

    def list_clusters(self, now: datetime) -> dict[str, Any]:
        self.calls.append(("list", now))
        return {"clusters": [{"id": "c-0123456789ab", "cohesion": 0.8, "action": "review",
                              "members": [{"id": SAMPLE_ID, "path": SAMPLE_PATH,
                                           "title": "Sessions"}]}]}

    def merge(self, cluster_id: str, now: datetime) -> MergeResult:
        self.calls.append((cluster_id, now))
        if cluster_id != "c-0123456789ab":
            raise NotFound(f"no cluster {cluster_id}")
        return MergeResult(cluster_id=cluster_id, merged_into=self.merged_into, archived=())


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    with sample_app(tmp_path_factory.mktemp("api")) as app:
        yield app


@pytest.fixture
def api(app: App) -> Api:
    return app.api(clock=lambda: REFERENCE)


@pytest.fixture
def fresh_app(tmp_path: Path) -> Iterator[App]:
    with sample_app(tmp_path) as app:
        yield app


@pytest.fixture
def fresh(fresh_app: App) -> Api:
    return fresh_app.api(clock=lambda: REFERENCE)


def test_operations_match_the_routes_and_schemas() -> None:
    routed = {route.op for route in ROUTES} - {"openapi"}
    assert routed == set(Api.OPERATIONS) == set(REQUESTS)
    assert set(RESPONSES) == set(Api.OPERATIONS) | {"openapi"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", Api.OPERATIONS)
def test_every_op_refuses_unknown_fields_before_doing_anything(app: App, api: Api,
                                                                op: str) -> None:
    before = digest(app.root)
    body = {"id": SAMPLE_ID} if op in ("get", "touch", "related") else {}
    with pytest.raises(InvalidInput, match=r"unknown field\(s\) zzz_extra"):
        api.call(op, {**body, "zzz_extra": 1})
    assert digest(app.root) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("op", "body", "message"), [
    ("search", {"query": 5}, "query must be a string (got an integer)"),
    ("search", {"query": "x", "top_k": 201}, "top_k must be between 1 and 200"),
    ("search", {"query": "x", "top_k": 2.5}, "top_k must be an integer (got a number)"),
    ("search", {"query": "x", "tags": ["ok", 3]}, "tags[1] must be a string"),
    ("search", {"query": "x", "tags": ["t"] * 65}, "tags must have at most 64 items"),
    ("search", {"query": "x", "window_days": 0}, "window_days must be greater than 0"),
    ("search", {"query": "x", "include_review": None}, "include_review must be true or false"),
    ("search", {"query": ""}, "query must not be empty"),
    ("search", {"query": "nul\x00byte"}, "NUL"),
    ("save", {"content": "long enough text", "type": "gossip"}, "type must be one of"),
    ("save", {"content": "long enough text", "strength": float("nan")}, "strength must be"),
    ("save", {"content": "long enough text", "strength": -0.1}, "between 0 and 2"),
    ("save", {"content": "long enough text", "pinned": "true"}, "pinned must be true or false"),
    ("save", {"content": "long enough text", "title": "t" * 301}, "at most 300"),
    ("save", {"title": "no content"}, "missing required field(s) content"),
    ("touch", {}, "exactly one of id, path"),
    ("touch", {"id": ""}, "id must not be empty"),
    ("touch", {"id": SAMPLE_ID, "boost": 1}, "boost must be true or false"),
    ("related", {"id": SAMPLE_ID, "top_k": 0}, "top_k must be between 1 and 200"),
    ("observe", {"ids": SAMPLE_ID}, "ids must be a list"),
    ("observe", {"ids": [SAMPLE_ID] * 101}, "at most 100"),
    ("observe", {"ids": [SAMPLE_ID], "context_tags": [{}]}, "context_tags[0] must be"),
    ("review", {"limit": 1001}, "limit must be between 1 and 1000"),
    ("sweep", {"dry_run": "no"}, "dry_run must be true or false"),
    ("gc", {"apply": 1}, "apply must be true or false"),
    ("promote", {"id": 7}, "id must be a string"),
    ("merge_cluster", {}, "missing required field(s) cluster_id"),
    ("reindex", {"full": "yes"}, "full must be true or false"),
    ("get", {"id": ["x"]}, "id must be a string"),
    ("status", {"files": "1"}, "files must be true or false"),
])
def test_wrong_types_and_ranges_name_the_field(app: App, api: Api, op: str,
                                               body: dict[str, Any], message: str) -> None:
    before = digest(app.root)
    with pytest.raises(InvalidInput, match=re.escape(message)):
        api.call(op, body)
    assert digest(app.root) == before


def test_unknown_ops_and_non_object_bodies_are_refused(api: Api) -> None:
    with pytest.raises(InvalidInput, match="unknown operation 'drop'"):
        api.call("drop", {})
    with pytest.raises(InvalidInput, match="JSON object"):
        api.call("health", ["not", "a", "mapping"])  # type: ignore[arg-type]


@pytest.mark.timeout(60)
def test_health_and_status(app: App) -> None:
    daemon = DaemonStatus(pid=42, version=__version__, url=None, started=REFERENCE,
                          indexing=DaemonIndexing(IDLE, running=False, queued=0, last=None,
                                                  error=None),
                          queue_depth=0, pending_usage_writes=1, jobs=[], model_loaded=True)
    api = app.api(clock=lambda: REFERENCE, daemon_status=lambda: daemon)
    assert api.call("health", {}) == {"status": "ok", "version": __version__, "vault": "vault"}
    status = api.call("status", {})
    assert status["daemon"] == {
        "pid": 42, "version": __version__, "url": None, "started": REFERENCE.isoformat(),
        "indexing": {"running": False, "kind": None, "done": 0, "total": 0, "current": None,
                     "queued": 0, "last": None, "error": None},
        "queue_depth": 0, "pending_usage_writes": 1,
        "jobs": [], "model_loaded": True}
    assert status["memories"]["decisions"] == {"keep": 7, "forget": 3, "promote": 4}
    languages = status["languages"]
    assert languages["sampled"] > 0 and languages["not_english"] == 0  # an English vault
    assert languages["advice"] is None
    validate(RESPONSES["status"], status, "status")
    plain = app.api(clock=lambda: REFERENCE)
    assert "daemon" not in plain.call("status", {})


@pytest.mark.timeout(60)
def test_search_applies_the_filters(api: Api) -> None:
    everything = api.call("search", {"query": "Crumb sessions", "top_k": 20})
    assert any(r["id"] is None for r in everything["results"])
    memories = api.call("search", {"query": "Crumb sessions", "top_k": 20,
                                   "memories_only": True, "tags": ["crumb"]})
    assert memories["results"] and all(r["id"] for r in memories["results"])
    assert all("crumb" in r["tags"] for r in memories["results"])
    decisions = api.call("search", {"query": "Crumb", "type": "decision", "top_k": 5.0})
    assert {r["id"] for r in decisions["results"]} >= {SAMPLE_ID}
    archived = api.call("search", {"query": "Crumb", "status": ["archived"],
                                   "memories_only": True})
    assert archived["results"] == []
    folder = api.call("search", {"query": "lentils", "folder": "Recipes"})
    assert folder["results"] and all(r["path"].startswith("Recipes/")
                                     for r in folder["results"])


@pytest.mark.timeout(60)
def test_get_by_id_and_by_path(api: Api) -> None:
    by_id = api.call("get", {"id": SAMPLE_ID})
    assert by_id == api.call("get", {"id": SAMPLE_PATH})
    validate(RESPONSES["get"], by_id, "get")
    with pytest.raises(NotFound):
        api.call("get", {"id": "no-such-memory"})
    with pytest.raises(InvalidInput, match="regular note"):
        api.call("get", {"id": "Home.md"})


@pytest.mark.timeout(60)
def test_touch_uses_the_clock(fresh: Api) -> None:
    later = REFERENCE + timedelta(hours=1)
    fresh.clock = lambda: later
    touched = fresh.call("touch", {"path": SAMPLE_PATH})
    assert touched["last_used"] == later.isoformat() and touched["use_count"] == 7


@pytest.mark.timeout(60)
def test_observe_is_all_or_nothing(fresh_app: App, fresh: Api) -> None:
    before = digest(fresh_app.root)
    with pytest.raises(NotFound):
        fresh.call("observe", {"ids": [SAMPLE_ID, "no-such-memory"]})
    assert digest(fresh_app.root) == before
    observed = fresh.call("observe", {"ids": [SAMPLE_ID], "context_tags": ["crumb", "auth"]})
    assert observed["observed"][0]["cross_domain"] is False
    validate(RESPONSES["observe"], observed, "observe")


@pytest.mark.timeout(60)
def test_save_goes_through_the_intake_gate(fresh: Api) -> None:
    with pytest.raises(Refused, match="too short"):
        fresh.call("save", {"content": "tiny"})
    saved = fresh.call("save", {"content": "Sam keeps the spare bike keys in the blue tin.",
                                "tags": ["home"], "type": "fact", "strength": 1.5,
                                "pinned": True, "source": "conversation"})
    memory = saved["memory"]
    assert saved["created"] and memory["type"] == "fact" and memory["pinned"] is True
    assert memory["strength"] == 1.5 and memory["source"] == "conversation"
    assert memory["created"] == REFERENCE.isoformat()


@pytest.mark.timeout(60)
def test_lifecycle_defaults_are_dry_runs(fresh_app: App, fresh: Api) -> None:
    before = digest(fresh_app.root)
    assert fresh.call("sweep", {})["dry_run"] is True
    assert fresh.call("gc", {})["dry_run"] is True
    assert fresh.call("promote", {"dry_run": True})["promoted"] == []
    assert digest(fresh_app.root) == before
    promoted = fresh.call("promote", {"id": SAMPLE_ID})
    [item] = promoted["promoted"]
    assert item["to"].startswith("STM/") and (fresh_app.root / item["to"]).is_file()


@pytest.mark.timeout(60)
def test_review_respects_the_limit(api: Api) -> None:
    review = api.call("review", {"limit": 1})
    assert len(review["items"]) <= 1 and review["total"] >= len(review["items"])
    assert api.call("review", {})["total"] == review["total"]


@pytest.mark.timeout(60)
def test_reindex_through_the_daemon_or_the_engine(app: App) -> None:
    asked: list[bool] = []

    def via_daemon(full: bool) -> dict[str, Any]:
        asked.append(full)
        return {"queued": True}

    api = app.api(reindex=via_daemon)
    assert api.call("reindex", {"full": True}) == {"queued": True} and asked == [True]
    direct = app.api().call("reindex", {})
    assert set(direct) == {"added", "changed", "meta_changed", "moved", "deleted", "skipped",
                           "failed", "chunks_embedded", "seconds", "rebuilt_reason", "failures"}
    assert direct["added"] == 0 and direct["failures"] == []


@pytest.mark.timeout(60)
def test_clusters_and_merge_use_the_consolidator(app: App) -> None:
    fake = FakeConsolidator(app.views.get(SAMPLE_ID, REFERENCE))
    api = app.api(clock=lambda: REFERENCE)
    api.parts = replace(api.parts, consolidator=fake)  # type: ignore[arg-type]
    clusters = api.call("clusters", {})
    validate(RESPONSES["clusters"], clusters, "clusters")
    merged = api.call("merge_cluster", {"cluster_id": "c-0123456789ab"})
    assert (merged["cluster_id"], merged["merged_into"]["id"]) == ("c-0123456789ab", SAMPLE_ID)
    with pytest.raises(NotFound):
        api.call("merge_cluster", {"cluster_id": "c-ffffffffffff"})
    assert fake.calls == [("list", REFERENCE), ("c-0123456789ab", REFERENCE),
                          ("c-ffffffffffff", REFERENCE)]


def test_validate_fills_defaults_and_normalises_numbers() -> None:
    checked = validate(REQUESTS["search"], {"query": "q", "top_k": 7.0}, "search")
    assert checked == {"query": "q", "top_k": 7, "memories_only": False,
                       "include_review": True, "matched_only": False}
    assert isinstance(checked["top_k"], int)
    observe = validate(REQUESTS["observe"], {"ids": ["a"]}, "observe")
    observe["context_tags"].append("mutated")
    assert validate(REQUESTS["observe"], {"ids": ["a"]}, "observe")["context_tags"] == []
    with pytest.raises(InvalidInput, match="window_days must be a number"):
        validate(REQUESTS["search"], {"query": "q", "window_days": float("inf")}, "search")
    with pytest.raises(InvalidInput, match="lone surrogates"):
        validate(REQUESTS["search"], {"query": "\ud800"}, "search")


def test_wire_helpers() -> None:
    assert parse_body(b' {"a": 1} ') == {"a": 1}
    for raw in (b"[]", b"null", b"Infinity", b'{"a": -Infinity}', b"\xc3\x28", b"{"):
        with pytest.raises(InvalidInput):
            parse_body(raw)
    assert query_body("review", "limit=5") == {"limit": 5}
    assert query_body("status", "files=true") == {"files": True}
    assert query_body("review", "limit=x") == {"limit": "x"}  # left for validation to refuse
    with pytest.raises(InvalidInput, match="once"):
        query_body("review", "limit=1&limit=2")
    with pytest.raises(InvalidInput):
        query_body("review", "limit")


def test_the_openapi_document_is_consistent() -> None:
    document = openapi_document()
    json.dumps(document)  # plain JSON
    components = document["components"]["schemas"]
    refs = re.findall(r'"\$ref": "#/components/schemas/(\w+)"', json.dumps(document))
    assert refs and set(refs) <= set(components)
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert path.startswith("/v1/") and method in ("get", "post")
            assert {"200", "default"} <= set(operation["responses"])
            assert ("security" in operation) == (path == "/v1/health")
            params = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
            assert params == re.findall(r"\{(\w+)\}", path)
            body = operation.get("requestBody")
            if body is not None:
                schema = body["content"]["application/json"]["schema"]
                assert schema["additionalProperties"] is False and method == "post"
    for op, schema in REQUESTS.items():
        assert schema["additionalProperties"] is False, op
        for name, field in schema["properties"].items():
            assert "type" in field, (op, name)
            if field["type"] == "string":
                assert "maxLength" in field or "enum" in field, (op, name)
            if field["type"] == "array":
                assert "maxItems" in field, (op, name)


@pytest.mark.timeout(60)
def test_search_answers_say_the_index_is_being_built(tmp_path: Path) -> None:
    """While a rebuild runs, a search answers with its progress and finds notes by their words
    before any vector is written; afterwards it says the index is ready."""
    with sample_app(tmp_path) as app:
        api = app.api(clock=lambda: REFERENCE)
        during: list[dict[str, Any]] = []

        def progress(done: int, total: int) -> None:
            if not during:  # the rebuild has planned its notes and written no vector yet
                during.append(api.call("search", {"query": "Crumb sessions"}))
        report = app.sync.reindex(full=True, progress=progress)
        assert report.added > 1
        assert during[0]["indexing"] == {"state": "indexing", "by_words": "complete",
                                         "by_meaning": "partial", "done": 0,
                                         "total": report.added}
        assert during[0]["results"], "every note is searchable by its words already"
        validate(RESPONSES["search"], during[0], "search")
        after = api.call("search", {"query": "Crumb sessions"})
        assert after["indexing"] == {"state": "ready", "by_words": "complete",
                                     "by_meaning": "complete"}
        assert after["results"]
        validate(RESPONSES["search"], after, "search")


@pytest.mark.timeout(60)
def test_a_daemons_first_answers_say_it_is_starting_until_the_notes_are_counted(
    tmp_path: Path,
) -> None:
    vault = Path(shutil.copytree(SAMPLE_VAULT, tmp_path / "vault", symlinks=True))
    settings = load_settings(tmp_path / "none.toml", env={}, overrides={
        "vault": str(vault), "data_dir": str(tmp_path / "data"), "embedding_model": "fake"})
    app = build_app(settings, daemon=True)
    try:
        api = app.api(clock=lambda: REFERENCE)
        first = api.call("search", {"query": "Crumb sessions"})
        assert first["indexing"] == {"state": "starting", "by_words": "partial",
                                     "by_meaning": "partial"}
        validate(RESPONSES["search"], first, "search")
        app.sync.sync_paths(["Home.md"])  # a watcher's batch does not count the vault
        assert api.call("search", {"query": "x"})["indexing"]["state"] == "starting"
        app.sync.reindex()  # the start-up sync: counted, indexed, ready
        answer = api.call("search", {"query": "Crumb sessions"})
        assert answer["indexing"]["state"] == "ready" and answer["results"]
    finally:
        app.close()
