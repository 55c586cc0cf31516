"""MatchWorkflow (id `match-{fixture_id}`): one live match, from before kickoff to the final backfill.

The lifecycle (design §2):
1. a durable timer to shortly before kickoff;
2. a long-running watch activity that returns only on a material change, restarted after each;
3. full time is confirmed by a quiet settle period (SportMonks shows FT for a moment before extra
   time in a cup tie), then a post-match backfill fetches the fixture once more;
4. postponed: wait for the new start time, rechecking now and then, or give up after a while;
   suspended / delayed / interrupted: keep watching; cancelled / abandoned / awarded: end cleanly;
5. continue-as-new when Temporal suggests it, after every handler finished, carrying only the
   compact progress.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from workflows.match_types import (
        OVER_STATES,
        FetchInput,
        IngestSummary,
        MatchProgress,
        WatchInput,
        WatchResult,
    )
    from workflows.snapshot import MatchState

WATCH_ACTIVITY = "watch_match"
FETCH_ACTIVITY = "fetch_and_ingest"


class MatchOptions(BaseModel):
    """Timings of one match's lifecycle; defaults are production values, tests shrink them."""

    model_config = ConfigDict(frozen=True)

    kickoff_lead_seconds: float = 300
    settle_seconds: float = 300
    heartbeat_timeout_seconds: float = 10
    polling_off_recheck_seconds: float = 60
    postponed_recheck_seconds: float = 600
    postponed_give_up_seconds: float = 7 * 24 * 3600
    watch_task_queue: str | None = None
    """Queue of the watch activity; None = this workflow's queue."""


class MatchInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    kickoff: datetime | None = None
    progress: MatchProgress = MatchProgress()
    options: MatchOptions = MatchOptions()
    postponed_since: datetime | None = None


class MatchOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    state: MatchState
    home: int
    away: int
    version: int


@workflow.defn
class MatchWorkflow:
    def __init__(self) -> None:
        self._progress = MatchProgress()

    @workflow.query
    def progress(self) -> MatchProgress:
        """Where the match stands, for operators (Temporal UI → Queries)."""
        return self._progress

    @workflow.run
    async def run(self, start: MatchInput) -> MatchOutcome:
        self._progress = start.progress
        options = start.options
        kickoff = start.kickoff
        postponed_since = start.postponed_since
        workflow.logger.info("match workflow started", extra={"fixture_id": start.fixture_id})

        while self._progress.state not in OVER_STATES:
            if workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(
                    MatchInput(
                        fixture_id=start.fixture_id,
                        kickoff=kickoff,
                        progress=self._progress,
                        options=options,
                        postponed_since=postponed_since,
                    )
                )
            if self._progress.state is MatchState.POSTPONED:
                postponed_since = postponed_since or workflow.now()
                if workflow.now() - postponed_since > timedelta(seconds=options.postponed_give_up_seconds):
                    workflow.logger.info(
                        "postponed for too long; ending", extra={"fixture_id": start.fixture_id}
                    )
                    break
                kickoff = await self._recheck_postponed(start.fixture_id, options, kickoff)
                continue
            postponed_since = None
            await self._sleep_until_kickoff(kickoff, options)
            result = await self._watch(start.fixture_id, options, settle=None)
            if result.summary is not None and result.summary.kickoff is not None:
                kickoff = result.summary.kickoff
            if result.reason == "polling_off":
                await workflow.sleep(timedelta(seconds=options.polling_off_recheck_seconds))
            if self._progress.state is MatchState.FINISHED and not await self._full_time_holds(
                start.fixture_id, options
            ):
                continue

        final = await self._fetch(start.fixture_id, "postmatch")
        if final is not None:
            self._progress = final.progress
        workflow.logger.info(
            "match workflow finished", extra={"fixture_id": start.fixture_id, "state": self._progress.state}
        )
        return MatchOutcome(
            fixture_id=start.fixture_id,
            state=self._progress.state,
            home=self._progress.home,
            away=self._progress.away,
            version=self._progress.version,
        )

    async def _sleep_until_kickoff(self, kickoff: datetime | None, options: MatchOptions) -> None:
        if kickoff is None or self._progress.state is not MatchState.SCHEDULED:
            return
        wake = kickoff - timedelta(seconds=options.kickoff_lead_seconds)
        if wake > workflow.now():
            await workflow.sleep(wake - workflow.now())

    async def _full_time_holds(self, fixture_id: int, options: MatchOptions) -> bool:
        """Keep watching through a quiet settle period; FT that turns into extra time is not the end."""
        while True:
            result = await self._watch(fixture_id, options, settle=options.settle_seconds)
            if result.reason == "settled":
                return True
            if self._progress.state is not MatchState.FINISHED:
                return self._progress.state in OVER_STATES

    async def _recheck_postponed(
        self, fixture_id: int, options: MatchOptions, kickoff: datetime | None
    ) -> datetime | None:
        await workflow.sleep(timedelta(seconds=options.postponed_recheck_seconds))
        summary = await self._fetch(fixture_id, "reconcile")
        if summary is None:
            return kickoff
        self._progress = summary.progress
        return summary.kickoff or kickoff

    async def _watch(self, fixture_id: int, options: MatchOptions, settle: float | None) -> WatchResult:
        result: WatchResult = await workflow.execute_activity(
            WATCH_ACTIVITY,
            WatchInput(fixture_id=fixture_id, progress=self._progress, settle_seconds=settle),
            result_type=WatchResult,
            task_queue=options.watch_task_queue,
            start_to_close_timeout=timedelta(hours=12),
            heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout_seconds),
            # A crashed watch is resumed by another worker quickly and forever: polling is the job.
            retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=1.0),
        )
        self._progress = result.progress
        return result

    async def _fetch(self, fixture_id: int, source: str) -> IngestSummary | None:
        summary: IngestSummary | None = await workflow.execute_activity(
            FETCH_ACTIVITY,
            FetchInput(fixture_id=fixture_id, source=source),
            result_type=IngestSummary | None,  # type: ignore[arg-type]
            start_to_close_timeout=timedelta(minutes=2),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=2),
                maximum_interval=timedelta(minutes=1),
                maximum_attempts=20,
            ),
        )
        return summary
