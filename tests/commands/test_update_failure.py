"""An Update that fails inside the workflow (not a shape refusal) still gets a precise JSON answer."""

from __future__ import annotations

import random

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from domain.match_run import MatchInput
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_options, match_workflow_id
from tests.commands.harness import Road
from workflows.match import MatchWorkflow


async def test_a_running_match_whose_fixture_row_is_gone_answers_404_json(
    road: Road, settings: Settings, temporal_client: Client
) -> None:
    """Regression: the book load (`load_desk_context`) failing non-retryably for an unstored fixture
    failed the Update, and the API let WorkflowUpdateFailedError escape as a text/plain 500; now it is
    404 `not_found` in the JSON error shape and nothing is written. Fails on main before the fix."""
    fixture_id = random.randrange(9 * 10**15, 9 * 10**15 + 10**14)
    handle = await temporal_client.start_workflow(
        MatchWorkflow.run,
        MatchInput(fixture_id=fixture_id, source="desk", mode="desk", options=match_options(settings)),
        id=match_workflow_id(fixture_id),
        task_queue=settings.temporal_task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.TERMINATE_EXISTING,
    )
    try:
        response = await road.send(road.operator_token, fixture_id, "football.period_start", {"period": "1H"})
    finally:
        await handle.terminate("test over")

    assert response.status_code == 404, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"
    assert str(fixture_id) in response.json()["error"]["message"]
    assert "x-trace-id" in response.headers
    assert await road.rows("SELECT command_id FROM command WHERE fixture_id = $1", fixture_id) == []
