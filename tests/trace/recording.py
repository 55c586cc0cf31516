"""Provider changes the way the worker makes them: a recording's snapshots through the real ingest."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from activities.ingest.store import IngestStore
from activities.provider.normaliser import normalise_fixture
from domain.progress import IngestSummary
from scoreline.tracing import new_trace_id

RECORDING = Path(__file__).resolve().parents[2] / "recordings" / "football-basic.jsonl"
MATCH = 81000001
"""The recording's one fixture."""


class TracedIngest:
    """The recording's snapshots, in order, each ingested under a trace id of its own."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._store = IngestStore(engine)
        lines = RECORDING.read_text().splitlines()[1:]
        self._left = iter(
            normalise_fixture(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line
        )

    async def next_change(self) -> tuple[str, IngestSummary]:
        """Ingest snapshots until one logs something: that change's trace id and summary."""
        for snapshot in self._left:
            trace_id = new_trace_id()
            summary = await self._store.ingest(snapshot, "live", trace_id=trace_id)
            if summary.version > summary.previous_version:
                return trace_id, summary
        raise AssertionError("the recording has no further change")
