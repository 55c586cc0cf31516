"""Shared pieces of the end-to-end cricket tests: settings, the fixture row, the run, the outcome."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import asyncpg
from temporalio.client import Client

from activities.ingest.store import IngestStore
from devkit.simulators.provider.recording_file import read_recording
from domain.cricket.board import CricketBoard
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns
from tests.match.harness import end_leftover_run, fast_settings
from tests.support.provider import Provider, recording
from workers.dependencies import worker_dependencies


def cricket_settings(
    settings: Settings, provider: Provider, *, rechecks: tuple[timedelta, ...] | None = None
) -> Settings:
    """Fast polling, with the cricket timers shortened."""
    return fast_settings(settings, provider.url).model_copy(
        update={
            "cricket_stumps_interval": timedelta(milliseconds=100),
            "cricket_post_match_rechecks": rechecks
            if rechecks is not None
            else (timedelta(milliseconds=200), timedelta(milliseconds=400)),
        }
    )


async def start_cricket_match(client: Client, settings: Settings, fixture_id: int) -> None:
    """As the fixture sync does it: the fixture from the Cricket v2 client, then the run from the
    database's facts."""
    await end_leftover_run(client, fixture_id)
    async with worker_dependencies(settings) as deps:
        snapshot = await deps.cricket.fixture(fixture_id)
        assert snapshot is not None, f"the cricket provider does not know fixture {fixture_id}"
        await IngestStore(deps.pools.ingest).upsert_fixtures([snapshot])
        assert await MatchRuns.from_settings(client, deps.pools.ingest, settings).ensure_running(fixture_id)


def recorded_lines(name: str) -> list[dict[str, Any]]:
    """The recording's `{t, fixture}` lines, header left out."""
    text = read_recording(recording(name))
    return [json.loads(line) for line in text.splitlines()[1:] if line.strip()]


async def stored_board(database_url: str, fixture_id: int) -> CricketBoard | None:
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        raw = await db.fetchval("SELECT body->'cricket' FROM scoreboard WHERE fixture_id = $1", fixture_id)
    finally:
        await db.close()
    return None if raw is None else CricketBoard.model_validate(json.loads(raw))


async def amended_balls(database_url: str, fixture_id: int) -> list[int]:
    """The balls with an amendment entry in the log, by id."""
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await db.fetch(
            """SELECT DISTINCT e.provider_event_id FROM timeline_item t
            JOIN match_event e ON e.id = t.match_event_id
            WHERE t.fixture_id = $1 AND t.kind = 'amendment' ORDER BY 1""",
            fixture_id,
        )
    finally:
        await db.close()
    return [row["provider_event_id"] for row in rows]
