"""ReplayFixtureWorkflow: re-fetch one fixture, re-run the ingest, rebuild what is derived from it.

Its input is one plain JSON object (`{"fixture_id": 123, "rebuild": true}`) so an operator can
start it from the Temporal UI's Start Workflow form as well as with `scoreline replay`. The ingest
is idempotent, so a replay of a settled match reports no change, and running it twice changes
nothing.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.watch import WatchActivities
    from domain.match_run import FetchInput
    from domain.replay import ReplayInput, ReplayResult


@workflow.defn
class ReplayFixtureWorkflow:
    @workflow.run
    async def run(self, replay: ReplayInput) -> ReplayResult:
        if replay.fixture_id <= 0:
            raise ApplicationError("fixture_id must be a positive provider id", non_retryable=True)
        summary = await workflow.execute_activity_method(
            WatchActivities.fetch_and_ingest,
            FetchInput(fixture_id=replay.fixture_id, source="replay", rebuild=replay.rebuild),
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RetryPolicy(maximum_attempts=5),
        )
        if summary is None:
            return ReplayResult(fixture_id=replay.fixture_id, found=False)
        return ReplayResult(
            fixture_id=replay.fixture_id,
            found=True,
            entries_added=summary.entries,
            version_before=summary.previous_version,
            version_after=summary.version,
            rebuilt=replay.rebuild,
        )
