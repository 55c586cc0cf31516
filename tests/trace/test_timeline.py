"""The merged timeline and its two renderings, from items made by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scoreline.trace.models import Source, Trace, TraceItem, is_trace_id
from scoreline.trace.render import as_json, as_table
from scoreline.trace.timeline import merge

pytestmark = pytest.mark.unit

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = datetime(2026, 3, 14, 15, 2, 11, 123000, tzinfo=UTC)


def _item(source: Source, seconds: float, what: str, **detail: Any) -> TraceItem:
    return TraceItem(at=T0 + timedelta(seconds=seconds), source=source, what=what, detail=detail)


def test_trace_ids_are_32_lowercase_hex_digits() -> None:
    assert is_trace_id(TRACE)
    for bad in ("", TRACE.upper(), TRACE[:-1], TRACE + "0", "g" * 32, f" {TRACE}", f"{TRACE}\n"):
        assert not is_trace_id(bad), bad


def test_items_are_merged_by_time() -> None:
    logs = [_item("log", 0.0, "api: request"), _item("log", 0.5, "api: command answered")]
    rows = [_item("entry", 0.2, "entry"), _item("feed", 1.7, "feed")]
    merged = merge(rows, logs)
    assert [item.what for item in merged] == ["api: request", "entry", "api: command answered", "feed"]


def test_rows_of_one_transaction_come_in_the_order_a_change_writes_them() -> None:
    """Same `created_at`: command, entry, outbox row, push, feed, then log lines; a source's own
    order is kept (two entries of one ingest, by seq)."""
    same = 0.3
    rows = [
        _item("log", same, "log"),
        _item("feed", same, "feed"),
        _item("outbox", same, "outbox"),
        _item("entry", same, "entry seq 4"),
        _item("entry", same, "entry seq 5"),
        _item("push", same, "push"),
        _item("command", same, "command"),
    ]
    assert [item.what for item in merge(rows)] == [
        "command",
        "entry seq 4",
        "entry seq 5",
        "outbox",
        "push",
        "feed",
        "log",
    ]


def _trace() -> Trace:
    return Trace(
        trace_id=TRACE,
        items=merge(
            [
                _item("log", 0.0, "api: command answered", outcome="accepted", key="k1"),
                _item("command", 0.012, "command football.goal accepted seq 5 (desk:1)", seq=5, saw=4),
                _item("entry", 0.012, "entry command (desk) fixture 7 seq 5", body={"code": "football.goal"}),
                _item("feed", 1.5, "feed match/7 v3", trace_ids=[TRACE], competition_id=None),
            ]
        ),
    )


def test_the_table_has_a_line_per_item_in_fixed_columns() -> None:
    lines = as_table(_trace()).splitlines()
    assert lines[0] == f"trace {TRACE}: 4 items from 2026-03-14 15:02:11 UTC over 1.500s"
    header, *rows, footer = lines[1:]
    assert header.split() == ["time", "(UTC)", "+seconds", "source", "what", "detail"]
    assert footer == "1 command, 1 entry, 1 feed, 1 log"
    assert [row[:12] for row in rows] == ["15:02:11.123", "15:02:11.135", "15:02:11.135", "15:02:12.623"]
    assert [row.split()[1:3] for row in rows] == [
        ["0.000", "log"],
        ["0.012", "command"],
        ["0.012", "entry"],
        ["1.500", "feed"],
    ]
    # Every column starts where the header's does.
    for column in ("source", "what", "detail"):
        at = header.index(column)
        assert all(row[at - 1] == " " and row[at] != " " for row in rows), column
    assert rows[0].endswith("outcome=accepted key=k1")
    assert rows[2].endswith('body={"code":"football.goal"}')
    assert rows[3].endswith(f'trace_ids=["{TRACE}"]'), "None values are left out"


def test_long_cells_are_cut_to_the_width() -> None:
    trace = Trace(trace_id=TRACE, items=[_item("log", 0, "w" * 80, text="line\nbreak " + "x" * 300)])
    row = as_table(trace, width=120).splitlines()[2]
    assert len(row) == 120
    assert row.endswith("…")
    assert "w" * 47 + "…" in row
    assert "text=line break x" in row


def test_json_has_every_field_of_every_item() -> None:
    trace = _trace()
    parsed = json.loads(as_json(trace))
    assert parsed["trace_id"] == TRACE
    assert [item["source"] for item in parsed["items"]] == ["log", "command", "entry", "feed"]
    assert parsed["items"][1] == {
        "at": "2026-03-14T15:02:11.135000Z",
        "source": "command",
        "what": "command football.goal accepted seq 5 (desk:1)",
        "detail": {"seq": 5, "saw": 4},
    }
    assert Trace.model_validate_json(as_json(trace)) == trace
