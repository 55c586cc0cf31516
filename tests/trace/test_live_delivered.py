"""The live hub logs each change it hands to this process's screens once, with its trace id."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.hub import LiveHub
from scoreline.outbox.reader import Cursor, OutboxEvent, read_after
from tests.support.logs import json_log_lines
from tests.support.waiting import eventually
from tests.trace.recording import MATCH, TracedIngest


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """Scoreline's real JSON logging, written to a buffer the test reads."""
    with json_log_lines() as buffer:
        yield buffer


def _delivered(buffer: io.StringIO) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")]
    return [
        {key: line[key] for key in ("fixture_id", "version", "trace_id", "subscribers")}
        for line in lines
        if line["event"] == "live.delivered"
    ]


class Changes:
    """Provider changes through the real ingest, read back from the outbox as a consumer reads them."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._ingest = TracedIngest(engine)
        self._cursor = Cursor(0, 0)

    async def make(self) -> str:
        trace_id, _ = await self._ingest.next_change()
        return trace_id

    async def read(self) -> list[OutboxEvent]:
        """Every change made so far and not read yet. Like the real consumer, it reads again while
        a transaction still open holds rows back: the horizon is the cluster's, and a test beside
        this one can hold it (CI, 2026-12-06: an empty read here failed with IndexError)."""

        async def settled() -> list[OutboxEvent] | None:
            async with self._engine.connect() as conn:
                batch = await read_after(conn, self._cursor, 100)
            return batch.events if batch.events and not batch.held else None

        events = await eventually(settled, every=0.02)
        self._cursor = events[-1].cursor
        return events


async def test_one_line_per_change_not_per_client_and_none_for_nobody(
    engine: AsyncEngine, log_lines: io.StringIO
) -> None:
    changes = Changes(engine)
    hub = LiveHub(engine, capacity=10)
    await changes.make()
    await hub.on_outbox(await changes.read())
    assert _delivered(log_lines) == [], "nobody follows the match"

    screens = [hub.subscriber("sse"), hub.subscriber("ws")]
    for screen in screens:
        hub.follow(screen, MATCH)
    goal = await changes.make()
    events = await changes.read()
    await hub.on_outbox(events)
    version = events[-1].seq
    assert _delivered(log_lines) == [
        {"fixture_id": MATCH, "version": version, "trace_id": goal, "subscribers": 2}
    ]
    value = await screens[0].next(1)
    assert value is not None
    assert value.trace_ids == (goal,)
    assert json.loads(value.wire)["trace_ids"] == [goal]

    await hub.on_outbox(events)  # delivered again (at least once): not newer, not logged
    assert hub.deliver(value) is False  # the same change relayed from another process
    assert len(_delivered(log_lines)) == 1

    # Two changes read in one batch become one value: each change still gets its line.
    both = [await changes.make(), await changes.make()]
    events = await changes.read()
    await hub.on_outbox(events)
    assert _delivered(log_lines)[1:] == [
        {"fixture_id": MATCH, "version": events[-1].seq, "trace_id": trace_id, "subscribers": 2}
        for trace_id in both
    ]
