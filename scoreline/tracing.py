"""The trace id that ties one change's log lines together, from HTTP request or poll to every push.

It lives in a contextvar bound into structlog. It enters from a W3C `traceparent` header (or is made
fresh), and crosses into Temporal as a header through `TraceInterceptor` (see
`scoreline.temporal.tracing`), so workflow and activity log lines carry the same id.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

TRACE_KEY = "trace_id"
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-(?P<trace>[0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def new_trace_id() -> str:
    """A fresh 128-bit trace id in W3C hex form."""
    return secrets.token_hex(16)


def trace_id_from_traceparent(header: str | None) -> str | None:
    """The trace id of a valid W3C `traceparent` header, else None (an all-zero id is invalid)."""
    if not header:
        return None
    match = _TRACEPARENT.match(header.strip().lower())
    if match is None or set(match["trace"]) == {"0"}:
        return None
    return match["trace"]


def traceparent_for(trace_id: str) -> str:
    """A `traceparent` header carrying `trace_id`, for outgoing calls."""
    return f"00-{trace_id}-{secrets.token_hex(8)}-01"


def current_trace_id() -> str | None:
    value = structlog.contextvars.get_contextvars().get(TRACE_KEY)
    return value if isinstance(value, str) else None


@contextmanager
def bound_trace(trace_id: str | None = None) -> Iterator[str]:
    """Bind `trace_id` (or a fresh one) to every log line written inside the block."""
    chosen = trace_id or new_trace_id()
    with structlog.contextvars.bound_contextvars(**{TRACE_KEY: chosen}):
        yield chosen
