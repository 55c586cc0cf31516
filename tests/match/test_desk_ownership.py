"""Once desks own a match's score, no provider write touches its log, board or state (trust issue, hole 2).

An operator's `match.set_mode` hands the score to the desks. Three writers still reach the fixture
from the provider side: a watch poll whose fetch was in flight when the switch committed, a
`ReplayFixtureWorkflow`, and the fixture sync. Each must refresh only the fixture's facts (names,
kickoff): the ingest transaction reads the scoring mode under the fixture lock and decides there.

The match: football-basic's 81000001. The desks take over at 1-0 in the first half; the provider
then moves on to half time at 1-1 (replay clock 3000 s).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from activities.ingest.store import IngestStore
from domain.fixture_sync import FixtureSyncInput
from domain.replay import ReplayInput
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import Road, road_settings, running_api
from tests.match.harness import fast_settings
from tests.support.provider import Provider, running_provider
from tests.support.worker import running_worker, worker_dependencies
from workflows.fixture_sync import FixtureSyncWorkflow
from workflows.replay import ReplayFixtureWorkflow

pytestmark = pytest.mark.timeout(120)

FIXTURE_ID = 81000001
TAKEN_OVER_AT, PROVIDER_MOVED_ON = 1000.0, 3000.0
STALE_NAME = "a name the provider no longer uses"


@dataclass
class DeskOwned:
    road: Road
    provider: Provider
    settings: Settings

    async def board(self) -> dict[str, Any]:
        [row] = await self.road.rows(
            """SELECT s.version, s.state AS board_state, s.home_score, s.away_score, f.state, f.name,
                      f.scoring_mode, (SELECT max(seq) FROM timeline_item t WHERE t.fixture_id = f.id) AS last_seq
               FROM fixture f JOIN scoreboard s ON s.fixture_id = f.id WHERE f.id = $1""",
            FIXTURE_ID,
        )
        return dict(row)


async def _ingest_live_board(settings: Settings) -> None:
    """One watch poll: fetch the live board and commit it through the real ingest."""
    async with worker_dependencies(settings) as deps:
        snapshot = await deps.provider.live_snapshot(FIXTURE_ID)
        assert snapshot is not None
        await IngestStore(deps.pools.ingest).ingest(snapshot, "live")


@pytest.fixture
async def desk_owned(
    settings: Settings, database_url: str, temporal_client: Client
) -> AsyncIterator[DeskOwned]:
    """81000001 ingested from the provider at 1-0, then handed to the desks over the command API."""
    async with running_provider(["football-basic"], t=TAKEN_OVER_AT) as provider:
        # No polling of its own: the provider-side writers are driven by each test.
        config = road_settings(fast_settings(settings, provider.url)).model_copy(
            update={"poll_interval_live": None, "poll_interval_idle": None}
        )
        await _ingest_live_board(config)
        async with running_worker(temporal_client, config), running_api(config, database_url) as road:
            response = await road.send(road.operator_token, FIXTURE_ID, "match.set_mode", {"mode": "desk"})
            assert response.json()["outcome"] == "accepted", response.text
            db = await asyncpg.connect(asyncpg_dsn(database_url))
            try:
                await db.execute("UPDATE fixture SET name = $1 WHERE id = $2", STALE_NAME, FIXTURE_ID)
            finally:
                await db.close()
            await provider.set_clock(PROVIDER_MOVED_ON)
            try:
                yield DeskOwned(road=road, provider=provider, settings=config)
            finally:
                await _end(temporal_client, match_workflow_id(FIXTURE_ID))


async def _end(client: Client, workflow_id: str) -> None:
    """Terminate the run the command started: later tests start `match-81000001` themselves."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate("test over")
    except RPCError:
        pass


def _only_facts_changed(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert after["name"] == "Riverside FC vs Harbour United", "the fixture's facts were not refreshed"
    assert {k: v for k, v in after.items() if k != "name"} == {k: v for k, v in before.items() if k != "name"}
    assert (after["home_score"], after["away_score"], after["scoring_mode"]) == (1, 0, "desk")


async def test_a_watch_poll_that_commits_after_the_takeover_writes_only_the_fixtures_facts(
    desk_owned: DeskOwned,
) -> None:
    """A poll fetched before `match.set_mode` committed, ingested after it: no entry, no score,
    no state; the name is refreshed. On the main of 2026-12-01 this logged the provider's
    equaliser and half time over the desks' board."""
    before = await desk_owned.board()
    await _ingest_live_board(desk_owned.settings)
    _only_facts_changed(before, await desk_owned.board())


async def test_a_replay_of_a_desk_owned_fixture_changes_nothing_but_its_facts(
    desk_owned: DeskOwned, temporal_client: Client
) -> None:
    """`ReplayFixtureWorkflow` finds the provider ahead of the desks: it adds no entry. On the main
    of 2026-12-01 it logged the provider's goal and state."""
    before = await desk_owned.board()
    queue = desk_owned.settings.temporal_task_queue
    result = await temporal_client.execute_workflow(
        ReplayFixtureWorkflow.run,
        ReplayInput(fixture_id=FIXTURE_ID),
        id=f"replay-{FIXTURE_ID}-{uuid.uuid4().hex[:8]}",
        task_queue=queue,
    )
    assert result.found and result.entries_added == 0
    _only_facts_changed(before, await desk_owned.board())


async def test_the_fixture_sync_never_overwrites_a_desk_owned_state(
    desk_owned: DeskOwned, temporal_client: Client
) -> None:
    """The sync lists 81000001 at half time: the desks' `live_first_half` stays. On the main of
    2026-12-01 the sync's upsert wrote the provider's state over it."""
    before = await desk_owned.board()
    queue = desk_owned.settings.temporal_task_queue
    await temporal_client.execute_workflow(
        FixtureSyncWorkflow.run,
        FixtureSyncInput(),
        id=f"sync-{uuid.uuid4().hex[:8]}",
        task_queue=queue,
    )
    after = await desk_owned.board()
    assert after["state"] == before["state"] == "live_first_half"
    assert {k: v for k, v in after.items() if k != "name"} == {k: v for k, v in before.items() if k != "name"}
