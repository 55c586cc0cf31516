"""The items of a trace's timeline, and what a trace id looks like."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict

Source = Literal["log", "command", "entry", "outbox", "push", "feed"]
"""Where an item came from: a log line, or a row of `command`, `timeline_item`, `domain_event`,
`push_attempt` or `published_document`."""

_TRACE_ID = re.compile(r"[0-9a-f]{32}")


def is_trace_id(value: str) -> bool:
    """A W3C trace id as Scoreline writes it (`scoreline.tracing`): 32 lowercase hex digits.

    Checked before any search, so a mistyped id is refused rather than reported as "nothing found".
    """
    return _TRACE_ID.fullmatch(value) is not None


class TraceItem(BaseModel):
    """One thing a change did, at one instant.

    Attributes:
        at: When, in UTC: a row's `created_at` (its transaction's start), a log line's timestamp.
        what: One line for people, e.g. `command football.goal accepted seq 5`.
        detail: The row's columns or the log line's other fields, as JSON values.
    """

    model_config = ConfigDict(frozen=True)

    at: AwareDatetime
    source: Source
    what: str
    detail: dict[str, Any]


class Trace(BaseModel):
    """A trace id and its items in time order: what `scoreline trace --json` prints."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    items: list[TraceItem]
