"""FixtureSyncWorkflow: keep the fixture table fresh and every imminent or live match watched.

A Temporal Schedule runs it every `FIXTURE_SYNC_INTERVAL` (overlap: skip). It replaces any
"active matches" table or lock: Temporal guarantees one running MatchWorkflow per id
(`match-{fixture_id}`), so starting one that runs already is a no-op.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.fixture_sync import FixtureSyncActivities
    from domain.fixture_sync import FixtureSyncInput, FixtureSyncResult


@workflow.defn
class FixtureSyncWorkflow:
    @workflow.run
    async def run(self, sync: FixtureSyncInput) -> FixtureSyncResult:
        found = await workflow.execute_activity_method(
            FixtureSyncActivities.sync_fixtures,
            sync,
            start_to_close_timeout=timedelta(seconds=40),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        started: tuple[int, ...] = ()
        if found.due:
            started = await workflow.execute_activity_method(
                FixtureSyncActivities.start_match_workflows,
                found.due,
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=RetryPolicy(maximum_attempts=3),
            )
        due = tuple(fixture.fixture_id for fixture in found.due)
        return FixtureSyncResult(fixtures_seen=found.fixtures_seen, due=due, started=started)
