"""Broadcast delay for live screens: `?delay=SECONDS` (0 to 300) on the SSE streams and the WebSocket.

A screen that shows a TV picture, or a delayed tier, asks for every message that long after the
change's commit, never earlier and never out of order. Changes the hub delivers are held from the
moment they reached this process (after their commit; `Subscriber.delay`). A first value, read at
connect or subscribe time, may be older: it is due `delay` after the commit of its version, which
its log entry dates (`timeline_item.created_at`, the committing transaction's start, a few
milliseconds before its commit). It joins the same queue, so nothing overtakes it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Annotated

from fastapi import Query
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.changes import LiveValue
from scoreline.feeds.partner_delay import MAX_DELAY_SECONDS

Delay = Annotated[
    int,
    Query(
        ge=0,
        le=MAX_DELAY_SECONDS,
        description="Broadcast delay in seconds: every message arrives this long after its commit.",
    ),
]

_COMMITTED = text(
    """
    SELECT t.fixture_id, EXTRACT(epoch FROM t.created_at)::float8 AS at
    FROM timeline_item t
    JOIN unnest(CAST(:fixtures AS bigint[]), CAST(:versions AS bigint[])) AS v(fixture_id, seq)
      ON t.fixture_id = v.fixture_id AND t.seq = v.seq
    """
)


async def first_due(engine: AsyncEngine, values: Sequence[LiveValue], delay: float) -> list[float]:
    """When each first value may be sent, by the running loop's clock: `delay` after the commit of
    its version (at once for a match with no log entry yet).

    Raises:
        DBAPIError, OSError: Postgres could not say when the versions were committed.
    """
    if not values:
        return []
    async with engine.connect() as conn:
        rows = await conn.execute(
            _COMMITTED,
            {
                "fixtures": [value.fixture_id for value in values],
                "versions": [value.version for value in values],
            },
        )
        committed = {row.fixture_id: row.at for row in rows}
    loop_now, wall_now = asyncio.get_running_loop().time(), time.time()
    return [
        loop_now + committed[value.fixture_id] + delay - wall_now
        if value.fixture_id in committed
        else loop_now
        for value in values
    ]
