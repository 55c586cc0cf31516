"""Per-connection versions: duplicates dropped, overlaps trimmed, gaps filled from Postgres."""

from __future__ import annotations

import json

from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.changes import load_value
from api.live.tracking import VersionTracker
from tests.outbox.writer import MatchWriter

MATCH = 81000001


async def test_overlap_is_trimmed_duplicates_dropped_and_the_shared_wire_form_not_reused(
    engine: AsyncEngine,
) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    first = await load_value(engine, MATCH, None)
    await match.change(entries=2)
    shared = await load_value(engine, MATCH, 0)
    assert first is not None and shared is not None
    assert json.loads(shared.wire)["previous"] == 0  # already serialised for another connection

    tracker = VersionTracker(engine)
    assert await tracker.fit(first) is first
    trimmed = await tracker.fit(shared)
    assert trimmed is not None
    assert (trimmed.previous, [entry.seq for entry in trimmed.entries]) == (1, [2, 3])
    assert json.loads(trimmed.wire)["previous"] == 1
    assert await tracker.fit(shared) is None


async def test_a_gap_is_filled_from_postgres(engine: AsyncEngine) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    tracker = VersionTracker(engine)
    first = await load_value(engine, MATCH, None)
    assert first is not None
    await tracker.fit(first)
    await match.change(entries=2)
    await match.change()
    later = await load_value(engine, MATCH, 3)  # its entries start after 3; this client holds 1
    assert later is not None
    fitted = await tracker.fit(later)
    assert fitted is not None
    assert (fitted.previous, [entry.seq for entry in fitted.entries]) == (1, [2, 3, 4])
