"""A trace for people (a fixed-width table, one line per item) and for programs (JSON).

The table gives each item's time (UTC, to the millisecond), its seconds since the trace's first
item, its source, what it was, and as much of its detail as fits in `width`; the JSON has every
field of every item (`Trace`: `{"trace_id", "items": [{"at", "source", "what", "detail"}]}`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from scoreline.trace.models import Trace, TraceItem
from scoreline.trace.timeline import TIE_ORDER

WIDTH = 160
"""Characters per table line."""
_TIME, _OFFSET, _SOURCE, _WHAT = 12, 9, 7, 48
"""Column widths; the detail gets the rest of the line."""
_GAP = "  "
_ELLIPSIS = "…"


def as_json(trace: Trace) -> str:
    return trace.model_dump_json(indent=2)


def as_table(trace: Trace, width: int = WIDTH) -> str:
    """A heading line, a column header, one line per item, and the count per source."""
    if not trace.items:
        return f"trace {trace.trace_id}: nothing found"
    first, last = trace.items[0].at, trace.items[-1].at
    detail_width = max(width - (_TIME + _OFFSET + _SOURCE + _WHAT + 4 * len(_GAP)), 0)
    lines = [
        f"trace {trace.trace_id}: {len(trace.items)} items from {first:%Y-%m-%d %H:%M:%S} UTC "
        f"over {(last - first).total_seconds():.3f}s",
        _line("time (UTC)", "+seconds", "source", "what", "detail", detail_width),
    ]
    for item in trace.items:
        offset = f"{(item.at - first).total_seconds():.3f}"
        time = f"{item.at:%H:%M:%S}.{item.at.microsecond // 1000:03d}"
        lines.append(_line(time, offset, item.source, item.what, _detail(item), detail_width))
    counts = Counter(item.source for item in trace.items)
    lines.append(
        ", ".join(f"{counts[source]} {source}" for source in sorted(counts, key=TIE_ORDER.__getitem__))
    )
    return "\n".join(lines)


def _line(time: str, offset: str, source: str, what: str, detail: str, detail_width: int) -> str:
    cells = (
        _fit(time, _TIME).ljust(_TIME),
        _fit(offset, _OFFSET).rjust(_OFFSET),
        _fit(source, _SOURCE).ljust(_SOURCE),
        _fit(what, _WHAT).ljust(_WHAT),
        _fit(detail, detail_width),
    )
    return _GAP.join(cells).rstrip()


def _detail(item: TraceItem) -> str:
    """`key=value` pairs; strings bare, everything else as compact JSON."""
    return " ".join(f"{key}={_value(value)}" for key, value in item.detail.items() if value is not None)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _fit(text: str, width: int) -> str:
    """`text` on one line, cut to `width` with an ellipsis if longer."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    if width == 0:
        return ""
    return flat[: width - 1] + _ELLIPSIS
