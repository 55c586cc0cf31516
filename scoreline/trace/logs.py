"""A trace's log lines, streamed from the processes' JSON log files.

`scoreline dev` writes each process's structlog JSON lines to `<data-dir>/logs/<part>.log`; a line
written under a bound trace has `trace_id` (`scoreline.tracing`), and a line that speaks for several
changes (`feeds.published`) lists them in `trace_ids`. Files can be large, so they are read a line
at a time and a line is parsed only if it contains the id at all. A line that is not a JSON object,
does not carry the trace, or has no readable timestamp (nothing to place it by) is skipped: the
files also hold other programs' output (Postgres, Temporal) and console-format lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoreline.trace.models import TraceItem

LOG_SUFFIX = ".log"
_OWN_FIELDS = frozenset({"timestamp", "event", "trace_id"})
"""Fields an item shows as its time, its `what` and its trace, not again in its detail."""


def log_files(paths: Iterable[Path]) -> list[Path]:
    """The files to read: a file as given, a directory's `*.log` files by name; a missing path
    (the default directory of a stack that never ran) gives none. Each file once."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            found.update(dict.fromkeys(sorted(p for p in path.glob(f"*{LOG_SUFFIX}") if p.is_file())))
        elif path.is_file():
            found[path] = None
    return list(found)


def read_log(path: Path, trace_id: str) -> Iterator[TraceItem]:
    """The lines of `path` that carry `trace_id`, in file order."""
    needle = trace_id.encode()
    with path.open("rb") as lines:
        for line in lines:
            if needle in line and (item := parse_line(line, trace_id, path)) is not None:
                yield item


def parse_line(line: bytes | str, trace_id: str, path: Path) -> TraceItem | None:
    """The item for one log line of `path`, or None if the line is not one of this trace's."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not _carries(record, trace_id):
        return None
    at = _timestamp(record.get("timestamp"))
    if at is None:
        return None
    detail: dict[str, Any] = {key: value for key, value in record.items() if key not in _OWN_FIELDS}
    detail["file"] = str(path)
    return TraceItem(at=at, source="log", what=f"{path.stem}: {record.get('event')}", detail=detail)


def _carries(record: dict[str, Any], trace_id: str) -> bool:
    if record.get("trace_id") == trace_id:
        return True
    traces = record.get("trace_ids")
    return isinstance(traces, list) and trace_id in traces


def _timestamp(value: object) -> datetime | None:
    """structlog's ISO timestamp in UTC (a line without an offset is taken as UTC)."""
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
