"""Reading a trace's log lines: JSON lines that carry the id are items; everything else is skipped."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scoreline.trace.logs import log_files, parse_line, read_log

pytestmark = pytest.mark.unit

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
OTHER = "0af7651916cd43dd8448eb211c80319c"
API_LOG = Path("/stack/logs/api.log")


def _line(**fields: Any) -> str:
    return json.dumps({"timestamp": "2026-03-14T15:02:11.123456Z", "level": "info", **fields})


def test_a_line_with_the_trace_is_an_item_at_its_timestamp() -> None:
    """Time from `timestamp` (UTC), `what` names the process and the event, the rest is the detail."""
    line = _line(event="command answered", trace_id=TRACE, logger="api.routes.commands", outcome="accepted")
    item = parse_line(line, TRACE, API_LOG)
    assert item is not None
    assert item.source == "log"
    assert item.at == datetime(2026, 3, 14, 15, 2, 11, 123456, tzinfo=UTC)
    assert item.what == "api: command answered"
    assert item.detail == {
        "level": "info",
        "logger": "api.routes.commands",
        "outcome": "accepted",
        "file": str(API_LOG),
    }


def test_a_line_listing_the_trace_among_others_is_an_item() -> None:
    """A feed build speaks for several changes at once (`trace_ids`)."""
    line = _line(event="feeds.published", trace_ids=[OTHER, TRACE], doc="match/1", version=3)
    item = parse_line(line, TRACE, Path("feeds.log"))
    assert item is not None
    assert item.what == "feeds: feeds.published"
    assert item.detail["trace_ids"] == [OTHER, TRACE]


@pytest.mark.parametrize(
    "line",
    [
        "2026-03-14 15:02:11 [info] command answered trace_id=" + TRACE,
        "not json at all",
        json.dumps(["a", "list", TRACE]),
        _line(event="someone else's", trace_id=OTHER),
        _line(event="no trace", text=f"mentions {TRACE} in passing"),
        _line(event="a list of other traces", trace_ids=[OTHER]),
        json.dumps({"event": "no timestamp", "trace_id": TRACE}),
        json.dumps({"event": "bad timestamp", "trace_id": TRACE, "timestamp": "yesterday"}),
    ],
    ids=["console", "text", "array", "other", "mention", "others", "no-time", "bad-time"],
)
def test_other_lines_are_skipped(line: str) -> None:
    assert parse_line(line, TRACE, API_LOG) is None


def test_a_timestamp_without_an_offset_is_utc() -> None:
    item = parse_line(json.dumps({"timestamp": "2026-03-14T15:02:11", "trace_id": TRACE}), TRACE, API_LOG)
    assert item is not None
    assert item.at == datetime(2026, 3, 14, 15, 2, 11, tzinfo=UTC)


def test_a_file_is_read_in_order_and_broken_lines_do_not_stop_it(tmp_path: Path) -> None:
    """Invalid UTF-8 and a truncated last line (a process killed mid-write) are skipped."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        out.write((_line(event="first", trace_id=TRACE) + "\n").encode())
        out.write(b"\xff\xfe " + TRACE.encode() + b"\n")
        out.write((_line(event="second", trace_id=TRACE) + "\n").encode())
        out.write(_line(event="cut", trace_id=TRACE)[:40].encode())
    assert [item.what for item in read_log(log, TRACE)] == ["worker: first", "worker: second"]


def test_log_files_are_a_directorys_logs_and_files_as_given(tmp_path: Path) -> None:
    """Each file once; a directory gives its `*.log` files by name; a missing path gives nothing."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("worker.log", "api.log", "notes.txt"):
        (logs / name).write_text("")
    (logs / "old.log").mkdir()
    extra = tmp_path / "elsewhere.jsonl"
    extra.write_text("")
    found = log_files([logs, extra, logs / "api.log", tmp_path / "missing"])
    assert found == [logs / "api.log", logs / "worker.log", extra]
