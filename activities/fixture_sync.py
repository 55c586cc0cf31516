"""Fixture sync: refresh the fixture table from the providers and start the matches that are due.

Football v3 and, when the worker has a cricket client, Cricket v2 are listed; a cricket listing
that fails is logged and skipped (football's fixtures are still written and started), while a
football failure fails the attempt before anything is written.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from temporalio import activity

from activities.ingest.store import IngestStore
from activities.provider.client import SportMonksClient
from activities.provider.cricket.client import CricketClient
from activities.provider.errors import ProviderError
from domain.fixture_sync import DueFixture, DueFixtures, FixtureSyncInput
from domain.snapshot import MatchState, Snapshot
from domain.states import OVER_STATES
from scoreline.logging import get_logger
from scoreline.temporal.match_runs import MatchRuns

log = get_logger(__name__)


class FixtureSyncActivities:
    def __init__(
        self,
        client: SportMonksClient,
        store: IngestStore,
        runs: MatchRuns,
        cricket: CricketClient | None = None,
    ) -> None:
        self._client = client
        self._store = store
        self._runs = runs
        self._cricket = cricket

    @activity.defn(name="sync_fixtures")
    async def sync_fixtures(self, sync: FixtureSyncInput) -> DueFixtures:
        """Upsert every fixture of the window; a failed fetch raises before anything is written."""
        today = datetime.now(UTC).date()
        first, last = today - timedelta(days=sync.days_back), today + timedelta(days=sync.days_ahead)
        snapshots = await self._client.fixtures_between(first, last)
        # Football's rows are written before cricket is listed: a slow cricket API never holds them.
        written = await self._store.upsert_fixtures(snapshots)
        cricket = await self._cricket_fixtures(first, last)
        if cricket:
            written += await self._store.upsert_fixtures(cricket)
            snapshots += cricket
        horizon = datetime.now(UTC) + timedelta(minutes=sync.horizon_minutes)
        due = tuple(
            DueFixture(fixture_id=snapshot.fixture_id, kickoff=snapshot.kickoff)
            for snapshot in snapshots
            if _is_due(snapshot, horizon)
        )
        log.info("fixtures synced", fixtures=len(snapshots), written=written, due=len(due))
        return DueFixtures(fixtures_seen=len(snapshots), due=due)

    async def _cricket_fixtures(self, first: date, last: date) -> list[Snapshot]:
        if self._cricket is None:
            return []
        try:
            return await self._cricket.fixtures_between(first, last)
        except ProviderError as error:
            log.warning("cricket fixtures not synced", error=str(error), kind=type(error).__name__)
            return []

    @activity.defn(name="start_match_workflows")
    async def start_match_workflows(self, due: tuple[DueFixture, ...]) -> tuple[int, ...]:
        """Start `match-{id}` for each; one already running, or a match that is over, is left alone."""
        started = [
            fixture.fixture_id for fixture in due if await self._runs.ensure_running(fixture.fixture_id)
        ]
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
