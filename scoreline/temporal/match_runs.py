"""The one way to start `match-{fixture_id}`: one id format, one reuse policy, facts from Postgres.

Every caller that needs a match's workflow running — the fixture sync, the command road, the
tests — goes through `MatchRuns`, so a run always starts from what the database holds: the
fixture's kickoff, who scores it (provider or desk), the stored scoreboard and the newest
generation of its followers' Live Activities. A run started for a match that already kicked off
therefore knows its followers' Live Activities were started (which generation, since when) and
where the log stands; one started for a match that is over decides the command it was started for
against the stored state and ends, without polling the provider again.

Policy: a closed run (completed, failed, terminated) is always followed by a new one when asked
(`ALLOW_DUPLICATE`: a postponed fixture that gave up is watched again once rescheduled); a running
one is attached to, never duplicated (update- and signal-with-start use it; a plain start that
finds it running reports that it did not start one).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from domain.failures import UnknownFixture
from domain.match_run import MATCH_WORKFLOW, MatchInput, MatchOptions, MatchOutcome
from domain.progress import FixtureSource, MatchProgress
from domain.rules import Mode
from domain.snapshot import MatchState
from domain.states import OVER_STATES, STARTED_STATES
from scoreline.db.fixture_scoreboard import select_fixture_with_scoreboard, stored_board
from scoreline.db.tables import fixture, la_push
from scoreline.settings import Settings

REUSE_POLICY = WorkflowIDReusePolicy.ALLOW_DUPLICATE


def match_workflow_id(fixture_id: int) -> str:
    return f"match-{fixture_id}"


def match_options(settings: Settings) -> MatchOptions:
    """The lifecycle timings every MatchWorkflow this deployment starts runs with."""
    return MatchOptions(
        kickoff_lead_seconds=settings.kickoff_lead.total_seconds(),
        settle_seconds=settings.full_time_settle.total_seconds(),
        heartbeat_timeout_seconds=settings.watch_heartbeat_timeout.total_seconds(),
        postponed_recheck_seconds=settings.postponed_recheck_interval.total_seconds(),
        postponed_give_up_seconds=settings.postponed_give_up.total_seconds(),
        watch_task_queue=settings.temporal_watch_task_queue,
        post_match_rechecks_seconds=tuple(
            delay.total_seconds() for delay in settings.cricket_post_match_rechecks
        ),
        la_renew_after_seconds=settings.la_renew_after.total_seconds(),
    )


@dataclass(frozen=True)
class MatchFacts:
    """What a match's run starts from, as Postgres holds it."""

    fixture_id: int
    kickoff: datetime | None
    source: FixtureSource
    mode: Mode
    progress: MatchProgress
    generation: int = 1
    """The newest generation of the followers' Live Activities (1 before any)."""
    generation_since: datetime | None = None
    """When its first push was published: the renewal is counted from there."""

    @property
    def over(self) -> bool:
        return self.progress.state in OVER_STATES

    def start_input(self, options: MatchOptions) -> MatchInput:
        started = self.progress.state in STARTED_STATES
        return MatchInput(
            fixture_id=self.fixture_id,
            kickoff=self.kickoff,
            progress=self.progress,
            options=options,
            source=self.source,
            mode=self.mode,
            live_activities_started=started,
            live_activity_generation=self.generation,
            live_activity_since=self.generation_since,
        )


async def load_facts(engine: AsyncEngine, fixture_id: int) -> MatchFacts | None:
    """The fixture, its stored scoreboard and its newest Live Activity generation; None if there is
    no such fixture."""
    async with engine.connect() as conn:
        newest = (
            await conn.execute(
                select(la_push.c.generation, func.min(la_push.c.created_at).label("since"))
                .where(la_push.c.fixture_id == fixture_id)
                .group_by(la_push.c.generation)
                .order_by(la_push.c.generation.desc())
                .limit(1)
            )
        ).first()
        row = (
            await conn.execute(
                select_fixture_with_scoreboard(
                    fixture.c.starting_at, fixture.c.source, fixture.c.scoring_mode, *stored_board
                ).where(fixture.c.id == fixture_id)
            )
        ).first()
    if row is None:
        return None
    progress = MatchProgress()
    if row.version is not None:
        progress = MatchProgress(
            version=row.version,
            state=MatchState(row.state),
            home=row.home_score,
            away=row.away_score,
            minute=(row.body or {}).get("minute"),
        )
    return MatchFacts(
        fixture_id=fixture_id,
        kickoff=row.starting_at,
        source="desk" if row.source == "desk" else "provider",
        mode="desk" if row.scoring_mode == "desk" else "provider",
        progress=progress,
        generation=1 if newest is None else int(newest.generation),
        generation_since=None if newest is None else newest.since,
    )


class MatchRuns:
    """Starts, or reaches, the run of `match-{fixture_id}` on this deployment's task queue."""

    def __init__(self, client: Client, engine: AsyncEngine, task_queue: str, options: MatchOptions) -> None:
        self.client = client
        self.engine = engine
        self._task_queue = task_queue
        self._options = options

    @classmethod
    def from_settings(cls, client: Client, engine: AsyncEngine, settings: Settings) -> MatchRuns:
        return cls(client, engine, settings.temporal_task_queue, match_options(settings))

    async def facts(self, fixture_id: int) -> MatchFacts:
        """Raises `UnknownFixture` when the fixture does not exist."""
        facts = await load_facts(self.engine, fixture_id)
        if facts is None:
            raise UnknownFixture(f"fixture {fixture_id} does not exist")
        return facts

    async def ensure_running(self, fixture_id: int) -> bool:
        """Start the match's run unless one runs already or the match is over; True if started."""
        facts = await self.facts(fixture_id)
        if facts.over:
            return False
        try:
            await self.client.start_workflow(
                **self._start(facts), id_conflict_policy=WorkflowIDConflictPolicy.FAIL
            )
        except WorkflowAlreadyStartedError:
            return False
        return True

    def start_operation(self, facts: MatchFacts) -> WithStartWorkflowOperation[Any, MatchOutcome]:
        """The start half of an update-with-start (the command road): the running run if any."""
        return WithStartWorkflowOperation(
            **self._start(facts), id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING
        )

    def _start(self, facts: MatchFacts) -> dict[str, Any]:
        """What every start of `match-{id}` has in common: the type, the input from the facts,
        the id, the queue and the reuse policy."""
        return {
            "workflow": MATCH_WORKFLOW,
            "arg": facts.start_input(self._options),
            "result_type": MatchOutcome,
            "id": match_workflow_id(facts.fixture_id),
            "task_queue": self._task_queue,
            "id_reuse_policy": REUSE_POLICY,
        }
