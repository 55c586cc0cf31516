"""Shared pieces of the end-to-end match tests: settings for fast polling, the DB outcome, the run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import asyncpg
from pydantic import SecretStr
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from activities.ingest.store import IngestStore
from domain.match_run import MatchOutcome
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id
from tests.support.provider import TOKEN
from workers.dependencies import worker_dependencies
from workflows.match import MatchWorkflow

FAST = {
    "poll_interval_live": timedelta(milliseconds=50),
    "poll_interval_idle": timedelta(milliseconds=50),
    "reconcile_interval": timedelta(seconds=1),
    "watch_heartbeat_timeout": timedelta(seconds=2),
    "provider_breaker_cooldown": timedelta(seconds=1),
    "full_time_settle": timedelta(seconds=1),
    # The frozen replay clock maps kickoffs to real times minutes away: watch from the start instead.
    "kickoff_lead": timedelta(hours=12),
}


def fast_settings(settings: Settings, provider_url: str) -> Settings:
    """Poll every 50 ms against the test's simulator (both APIs: a dev stack's simulator on the
    default port must not answer a test), on this test's own two task queues."""
    return settings.model_copy(
        update={
            **FAST,
            "provider_url": provider_url,
            "provider_token": SecretStr(TOKEN),
            "cricket_provider_url": f"{provider_url}/api/v2.0",
            "cricket_provider_token": SecretStr(TOKEN),
            "temporal_watch_task_queue": f"{settings.temporal_task_queue}-watch",
        }
    )


async def start_match(
    client: Client, settings: Settings, fixture_id: int
) -> WorkflowHandle[Any, MatchOutcome]:
    """Start `match-{fixture_id}` the way the fixture sync does: its fixture row written from the
    provider's listing, then the run started from the database's facts (`MatchRuns`).

    A run of the same id still running belongs to an earlier test (tests run one at a time and the
    recordings' fixture ids repeat): it is terminated first.
    """
    await end_leftover_run(client, fixture_id)
    async with worker_dependencies(settings) as deps:
        snapshot = await deps.provider.fixture(fixture_id)
        assert snapshot is not None, f"the provider does not know fixture {fixture_id}"
        await IngestStore(deps.pools.ingest).upsert_fixtures([snapshot])
        started = await MatchRuns.from_settings(client, deps.pools.ingest, settings).ensure_running(
            fixture_id
        )
    assert started, f"match-{fixture_id} was not started"
    return client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))


async def end_leftover_run(client: Client, fixture_id: int) -> None:
    """Terminate a running `match-{fixture_id}` an earlier test left behind."""
    handle = client.get_workflow_handle(match_workflow_id(fixture_id))
    try:
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate("left over by an earlier test")
    except RPCError:
        pass


async def stored_outcome(database_url: str, fixture_id: int) -> dict[str, Any]:
    """What Postgres holds for a fixture, in the shape of the recordings' `.expected.json`."""
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await db.fetch(
            "SELECT stream, provider_event_id, retracted_at IS NOT NULL AS retracted FROM match_event WHERE fixture_id = $1",
            fixture_id,
        )
        board = await db.fetchrow("SELECT * FROM scoreboard WHERE fixture_id = $1", fixture_id)
        first_entries = await db.fetch(
            """SELECT e.id, count(t.id) AS entries FROM match_event e
               LEFT JOIN timeline_item t ON t.match_event_id = e.id AND t.kind = 'event'
               WHERE e.fixture_id = $1 GROUP BY e.id""",
            fixture_id,
        )
        seqs = [
            r["seq"]
            for r in await db.fetch(
                "SELECT seq FROM timeline_item WHERE fixture_id = $1 ORDER BY seq", fixture_id
            )
        ]
    finally:
        await db.close()
    return {
        "events": sorted([r["stream"], r["provider_event_id"]] for r in rows if not r["retracted"]),
        "retracted": sorted([r["stream"], r["provider_event_id"]] for r in rows if r["retracted"]),
        "score": {"home": board["home_score"], "away": board["away_score"]} if board else None,
        "state": board["state"] if board else None,
        "version": board["version"] if board else 0,
        "event_entries": sorted({r["entries"] for r in first_entries}),
        "gapless": seqs == list(range(1, len(seqs) + 1)),
    }


async def table_snapshot(database_url: str) -> dict[str, list[Any]]:
    """Every row of the log tables (timestamps aside), to prove a replay changed nothing."""
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        return {
            "match_event": [
                tuple(r)
                for r in await db.fetch(
                    "SELECT id, body_hash, missing_count, retracted_at IS NULL FROM match_event ORDER BY id"
                )
            ],
            "timeline_item": [
                tuple(r)
                for r in await db.fetch("SELECT id, fixture_id, seq, kind FROM timeline_item ORDER BY id")
            ],
            "scoreboard": [
                tuple(r)
                for r in await db.fetch(
                    "SELECT fixture_id, version, state, home_score, away_score FROM scoreboard ORDER BY 1"
                )
            ],
            "domain_event": [
                tuple(r) for r in await db.fetch("SELECT id, seq FROM domain_event ORDER BY id")
            ],
        }
    finally:
        await db.close()
