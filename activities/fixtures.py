"""Fixture sync: refresh the fixture table from the provider and start the matches that are due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.ingest.store import IngestStore
from activities.provider.client import SportMonksClient
from scoreline.logging import get_logger
from workflows.fixture_sync import DueFixture, DueFixtures, FixtureSyncInput
from workflows.match import MatchInput, MatchOptions, MatchWorkflow
from workflows.match_types import OVER_STATES
from workflows.snapshot import MatchState, Snapshot

log = get_logger(__name__)


def match_workflow_id(fixture_id: int) -> str:
    return f"match-{fixture_id}"


class FixtureActivities:
    def __init__(
        self,
        client: SportMonksClient,
        store: IngestStore,
        temporal: Client,
        task_queue: str,
        match_options: MatchOptions,
    ) -> None:
        self._client = client
        self._store = store
        self._temporal = temporal
        self._task_queue = task_queue
        self._match_options = match_options

    @activity.defn(name="sync_fixtures")
    async def sync_fixtures(self, sync: FixtureSyncInput) -> DueFixtures:
        """Upsert every fixture of the window; a failed fetch raises before anything is written."""
        today = datetime.now(UTC).date()
        snapshots = await self._client.fixtures_between(
            today - timedelta(days=sync.days_back), today + timedelta(days=sync.days_ahead)
        )
        await self._store.upsert_fixtures(snapshots)
        horizon = datetime.now(UTC) + timedelta(minutes=sync.horizon_minutes)
        due = tuple(
            DueFixture(fixture_id=snapshot.fixture_id, kickoff=snapshot.kickoff)
            for snapshot in snapshots
            if _is_due(snapshot, horizon)
        )
        log.info("fixtures synced", fixtures=len(snapshots), due=len(due))
        return DueFixtures(fixtures_seen=len(snapshots), due=due)

    @activity.defn(name="start_match_workflows")
    async def start_match_workflows(self, due: tuple[DueFixture, ...]) -> tuple[int, ...]:
        """Start `match-{id}` for each; one already running (or finished) is left alone."""
        started = []
        for fixture in due:
            try:
                await self._temporal.start_workflow(
                    MatchWorkflow.run,
                    MatchInput(
                        fixture_id=fixture.fixture_id, kickoff=fixture.kickoff, options=self._match_options
                    ),
                    id=match_workflow_id(fixture.fixture_id),
                    task_queue=self._task_queue,
                    # A finished match is not watched again; one that failed may be restarted.
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                )
            except WorkflowAlreadyStartedError:
                continue
            started.append(fixture.fixture_id)
        if started:
            log.info("match workflows started", fixtures=started)
        return tuple(started)


NOT_STARTED = frozenset(
    {MatchState.SCHEDULED, MatchState.TO_BE_ANNOUNCED, MatchState.PENDING, MatchState.UNKNOWN}
)


def _is_due(snapshot: Snapshot, horizon: datetime) -> bool:
    """Live (or suspended, delayed …) now, or kicking off before `horizon`."""
    if snapshot.state in OVER_STATES or snapshot.state is MatchState.POSTPONED:
        return False
    if snapshot.state not in NOT_STARTED:
        return True
    return snapshot.kickoff is not None and snapshot.kickoff <= horizon
