"""What `status`, `reindex` and the daemon say are typed (`engine/status_results.py`) and turned
into the protocol's JSON at the wire (`api/wire_status.py`): the daemon's part keeps the
shape docs/protocol.md shows, key order included."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.api.test_server import REFERENCE, sample_app
from vaultmem.api import wire
from vaultmem.api.wire_status import reindex_wire
from vaultmem.daemon.indexing_status import IndexingStatus, finished_report
from vaultmem.engine.status_results import (
    DaemonIndexing,
    JobStatus,
    StatusAnswer,
)
from vaultmem.pipeline.index_ports import ReindexResult, SyncReport
from vaultmem.pipeline.progress import IDLE, IndexingNow, IndexWork, SlicedNote

WORK = IndexWork(running=True, kind="changes", done=8, total=9,
                 current=SlicedNote("Inbox/Conference transcript.md", 1280, 6061))
SYNCED = SyncReport(added=1, changed=2, chunks_embedded=5, seconds=0.25,
                    failures=[("bad.md", "not UTF-8")], moves=[("a.md", "b.md")])
FINISHED = datetime(2026, 11, 20, 8, 0, 5, 123456, tzinfo=UTC)


def test_the_daemons_indexing_joins_the_writers_work_and_its_own_run() -> None:
    status = IndexingStatus()
    idle = status.view(IndexingNow(IDLE, waiting=3), watched=2)
    assert (idle.running, idle.queued, idle.last, idle.error) == (False, 5, None, None)
    status.running = True  # an index run holds the writer before its sync starts
    assert status.view(IndexingNow(IDLE, waiting=0), watched=0).running
    status.running = False
    assert status.view(IndexingNow(WORK, waiting=0), watched=0).running  # a watcher batch


def test_the_daemons_indexing_on_the_wire_keeps_the_documented_order() -> None:
    status = IndexingStatus()
    status.last = SYNCED.result(finished=FINISHED)
    data = wire.to_wire(status.view(IndexingNow(WORK, waiting=1), watched=1))
    assert list(data) == ["running", "kind", "done", "total", "current", "queued", "last",
                          "error"]
    assert data["current"] == {"path": "Inbox/Conference transcript.md", "chunks_done": 1280,
                               "chunks_total": 6061}
    assert data["queued"] == 2 and data["last"]["finished"] == "2026-11-20T08:00:05+00:00"


def test_a_reindex_answers_its_counts_and_the_daemon_also_when_it_finished() -> None:
    in_process = reindex_wire(SYNCED.result())
    assert in_process == {"added": 1, "changed": 2, "meta_changed": 0, "moved": 0,
                          "deleted": 0, "skipped": 0, "failed": 0, "chunks_embedded": 5,
                          "seconds": 0.25, "rebuilt_reason": None,
                          "failures": [["bad.md", "not UTF-8"]]}  # the moves stay inside
    daemon = reindex_wire(finished_report(SYNCED))
    assert list(daemon) == [*in_process, "finished"]
    assert datetime.fromisoformat(daemon["finished"]).tzinfo is not None
    assert json.loads(json.dumps(daemon)) == daemon


def test_a_job_on_the_wire_says_its_times_in_utc() -> None:
    ran = datetime(2026, 11, 20, 10, 0, tzinfo=UTC).astimezone()  # local time in, UTC out
    job = JobStatus("flush", 30, ran, "ok", 0.5, None, 4)
    assert wire.to_wire([job]) == [{
        "name": "flush", "interval_s": 30, "last_run": "2026-11-20T10:00:00+00:00",
        "last_result": "ok", "last_duration_s": 0.5, "next_run": None, "runs": 4}]


@pytest.mark.timeout(60)
def test_status_carries_the_daemons_part_or_the_unseen_changes(tmp_path: Path) -> None:
    indexing = DaemonIndexing(WORK, running=True, queued=2, last=None, error=None)
    jobs = [JobStatus("flush", 30, None, None, None, None, 0)]
    with sample_app(tmp_path) as app:
        daemon = app.api(clock=lambda: REFERENCE, daemon_status=lambda: {
            "pid": 42, "indexing": indexing, "queue_depth": 2, "jobs": jobs})
        typed = daemon.run("status", {})
        assert isinstance(typed, StatusAnswer) and typed.unindexed_changes is None
        answer = daemon.call("status", {})
        in_process = app.api(clock=lambda: REFERENCE).call("status", {})
        empty = app.api(clock=lambda: REFERENCE, daemon_status=dict).call("status", {})
    assert list(answer) == ["vault", "notes", "memories", "coverage", "embedder", "model",
                            "languages", "sync", "daemon"]
    assert answer["daemon"]["indexing"] == wire.to_wire(indexing)
    assert answer["daemon"]["jobs"][0]["name"] == "flush"
    json.dumps(answer)  # nothing typed is left in it
    assert list(in_process)[-2:] == ["sync", "unindexed_changes"]
    assert empty["daemon"] == {} and "unindexed_changes" not in empty


def test_every_status_shape_has_its_wire_function() -> None:
    for value in (WORK, IndexingNow(WORK, 0), SYNCED.result(), ReindexResult(
            0, 0, 0, 0, 0, 0, 0, 0, 0.0, None, ())):
        assert type(value) in wire._SHAPES
        assert isinstance(wire.to_wire(value), dict)
