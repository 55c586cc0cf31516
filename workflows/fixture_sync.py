"""FixtureSyncWorkflow: keep the fixture table fresh and every imminent or live match watched.

A Temporal Schedule runs it every `FIXTURE_SYNC_INTERVAL` (overlap: skip). It replaces any
"active matches" table or lock: Temporal guarantees one running MatchWorkflow per id
(`match-{fixture_id}`), so starting one that runs already is a no-op.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy

SYNC_ACTIVITY = "sync_fixtures"
START_ACTIVITY = "start_match_workflows"


class FixtureSyncInput(BaseModel):
    """A date window around today (UTC); every field has a default for the UI form."""

    model_config = ConfigDict(frozen=True)

    days_back: int = 0
    days_ahead: int = 1
    horizon_minutes: int = 15
    """Start the MatchWorkflow of a fixture that kicks off within this many minutes (or is live)."""


class FixtureSyncResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixtures_seen: int = 0
    due: tuple[int, ...] = ()
    started: tuple[int, ...] = ()


class DueFixture(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    kickoff: datetime | None = None


class DueFixtures(BaseModel):
    """What `sync_fixtures` found: how many rows it upserted, and which matches need watching."""

    model_config = ConfigDict(frozen=True)

    fixtures_seen: int
    due: tuple[DueFixture, ...]


@workflow.defn
class FixtureSyncWorkflow:
    @workflow.run
    async def run(self, sync: FixtureSyncInput) -> FixtureSyncResult:
        found: DueFixtures = await workflow.execute_activity(
            SYNC_ACTIVITY,
            sync,
            result_type=DueFixtures,
            start_to_close_timeout=timedelta(seconds=40),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        started: tuple[int, ...] = ()
        if found.due:
            started = await workflow.execute_activity(
                START_ACTIVITY,
                found.due,
                result_type=tuple[int, ...],
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=RetryPolicy(maximum_attempts=3),
            )
        due = tuple(fixture.fixture_id for fixture in found.due)
        return FixtureSyncResult(fixtures_seen=found.fixtures_seen, due=due, started=started)
