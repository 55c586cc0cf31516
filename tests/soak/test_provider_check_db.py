"""The provider check against real Postgres: recordings ingested in full pass, tampered rows are named."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg

from activities.ingest.store import IngestStore
from activities.provider.cricket.normaliser import normalise_cricket_fixture
from activities.provider.normaliser import normalise_fixture
from devkit.simulators.provider.recording_file import read_recording
from devkit.soak.provider_check import check_provider
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import Snapshot
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
FOOTBALL = RECORDINGS / "football-correction.jsonl"
CRICKET = RECORDINGS / "cricket-edits.jsonl.gz"
CRICKET_ID = cricket_fixture_id(59005)


def snapshots(path: Path) -> list[Snapshot]:
    """Every poll of the recording, normalised as the watch does it for its sport."""
    normalise = normalise_cricket_fixture if path.name.startswith("cricket") else normalise_fixture
    lines = read_recording(path).splitlines()[1:]
    return [normalise(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line]


async def ingest(database_url: str, *recordings: Path) -> None:
    engine = create_engine(database_url, pool_size=1)
    try:
        store = IngestStore(engine)
        for path in recordings:
            for snapshot in snapshots(path):
                await store.ingest(snapshot, "live")
    finally:
        await engine.dispose()


async def test_ingested_recordings_pass_and_each_tampered_row_is_named(database_url: str) -> None:
    await ingest(database_url, FOOTBALL, CRICKET)

    clean = await check_provider(database_url, [FOOTBALL, CRICKET])

    assert [v.line() for v in clean.violations] == []
    assert clean.figures == {"fixtures": 2, "events": 7, "balls": 59}
    assert clean.checked == 66

    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await db.execute(
            "UPDATE match_event SET retracted_at = NULL WHERE fixture_id = 81000002 AND provider_event_id = 510002"
        )
        amendment = await db.fetchval(
            """DELETE FROM timeline_item t USING match_event e
               WHERE e.id = t.match_event_id AND t.kind = 'amendment' AND e.provider_event_id = 9780001
               RETURNING t.seq"""
        )
    finally:
        await db.close()

    tampered = await check_provider(database_url, [FOOTBALL, CRICKET])

    assert [v.line() for v in tampered.violations] == [
        "provider: fixture 81000002: events/510002 not retracted (1 retraction entries)",
        f"provider: fixture {CRICKET_ID}: balls/9780001 edited by the provider, never amended",
        f"provider: fixture {CRICKET_ID}: the log has gaps or repeats (missing seqs [{amendment}])",
    ]
