"""What the operator console needs beyond the public API (operator token only).

- `GET /v1/console/matches`: every match with its state, scoring mode, version, last change, a
  link to its workflow in the Temporal UI and its Live Activity counts.
- `POST /v1/console/matches/{id}/replay`: starts `ReplayFixtureWorkflow` (what `scoreline replay`
  does) and answers at once with its workflow id; the replay's outcome is in the Temporal UI.
- `GET|POST /v1/console/matches/{id}/desks`, `POST /v1/console/desks/{name}/revoke`: the match's
  desks; a new desk's token is in the answer once, and never again.

Switching a match's scoring mode needs nothing new: the console sends `match.set_mode` through
the command road like any command, with the operator's token.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.service import RPCError

from api.auth import OperatorDep
from api.deps import EngineDep, ResourcesDep, SettingsDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from domain.rules.commands import MAX_ID
from scoreline.accounts.models import Desk
from scoreline.accounts.store import (
    AccountError,
    AccountNotFoundError,
    NameTakenError,
    UnknownFixturesError,
    create_desk,
    revoke_desk,
)
from scoreline.console.desks import desks_of
from scoreline.console.overview import ConsoleMatch, console_matches
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from scoreline.tracing import current_trace_id

router = APIRouter(prefix="/v1/console", tags=["console"], route_class=TokenFirstRoute)

FixtureId = Annotated[int, Path(ge=1, le=MAX_ID, description="The fixture id.")]
REPLAY_TIMEOUT = timedelta(minutes=10)
REPLAY_WORKFLOW = "ReplayFixtureWorkflow"
"""By name, with its plain JSON input (`domain.replay.ReplayInput`): importing the workflow
would load the worker's activities into the API process (tests/foundation/test_layers.py)."""
_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or an unknown or revoked one."},
    403: {"description": "Not an operator token."},
}


class ConsoleMatchRow(ConsoleMatch):
    workflow_id: str
    workflow_url: str | None
    """The match's workflow in the Temporal UI (`TEMPORAL_UI_URL`); None when it is not set."""


class ConsoleMatches(BaseModel):
    model_config = ConfigDict(frozen=True)

    matches: list[ConsoleMatchRow]


class ReplayStarted(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    workflow_id: str
    run_id: str | None
    workflow_url: str | None


class DeskRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    created_at: datetime
    revoked_at: datetime | None
    fixtures: list[int]


class DeskList(BaseModel):
    model_config = ConfigDict(frozen=True)

    desks: list[DeskRow]


class NewDesk(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str = Field(min_length=1, max_length=100)


class CreatedDesk(DeskRow):
    token: str
    """Shown once: Postgres keeps only its hash."""


def _workflow_url(settings: Settings, workflow_id: str) -> str | None:
    base = settings.temporal_ui_url.rstrip("/")
    if not base:
        return None
    return f"{base}/namespaces/{settings.temporal_namespace}/workflows/{workflow_id}"


def _desk_row(desk: Desk) -> DeskRow:
    return DeskRow(
        name=desk.name, created_at=desk.created_at, revoked_at=desk.revoked_at, fixtures=sorted(desk.fixtures)
    )


@router.get("/matches", response_model=ConsoleMatches, responses=_AUTH)
async def matches(*, engine: EngineDep, settings: SettingsDep, operator: OperatorDep) -> ConsoleMatches:
    rows = []
    for match in await console_matches(engine):
        workflow_id = match_workflow_id(match.id)
        rows.append(
            ConsoleMatchRow(
                **match.model_dump(),
                workflow_id=workflow_id,
                workflow_url=_workflow_url(settings, workflow_id),
            )
        )
    return ConsoleMatches(matches=rows)


@router.post(
    "/matches/{fixture_id}/replay",
    status_code=202,
    response_model=ReplayStarted,
    responses={**_AUTH, 503: {"description": "Temporal is unreachable."}},
)
async def replay(
    *, fixture_id: FixtureId, resources: ResourcesDep, settings: SettingsDep, operator: OperatorDep
) -> ReplayStarted:
    trace = current_trace_id() or "console"
    workflow_id = f"replay-{fixture_id}-{trace[:12]}"
    try:
        client = await resources.temporal()
        handle = await client.start_workflow(
            REPLAY_WORKFLOW,
            {"fixture_id": fixture_id, "rebuild": True},
            id=workflow_id,
            task_queue=settings.temporal_task_queue,
            execution_timeout=REPLAY_TIMEOUT,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
    except (RuntimeError, RPCError) as error:
        raise ApiError(503, "unavailable", f"Temporal did not start the replay: {error}") from error
    return ReplayStarted(
        fixture_id=fixture_id,
        workflow_id=workflow_id,
        run_id=handle.result_run_id,
        workflow_url=_workflow_url(settings, workflow_id),
    )


@router.get("/matches/{fixture_id}/desks", response_model=DeskList, responses=_AUTH)
async def desks(*, fixture_id: FixtureId, engine: EngineDep, operator: OperatorDep) -> DeskList:
    return DeskList(desks=[_desk_row(desk) for desk in await desks_of(engine, fixture_id)])


@router.post(
    "/matches/{fixture_id}/desks",
    status_code=201,
    response_model=CreatedDesk,
    responses={
        **_AUTH,
        404: {"description": "No such fixture."},
        409: {"description": "The name is taken."},
    },
)
async def new_desk(
    *, fixture_id: FixtureId, body: NewDesk, engine: EngineDep, operator: OperatorDep
) -> CreatedDesk:
    try:
        desk, token = await create_desk(engine, body.name, [fixture_id])
    except UnknownFixturesError:
        raise ApiError(404, "fixture_not_found", f"no fixture with id {fixture_id}") from None
    except NameTakenError as error:
        raise ApiError(409, "name_taken", str(error)) from None
    except AccountError as error:
        raise ApiError(422, "validation_error", str(error)) from None
    return CreatedDesk(**_desk_row(desk).model_dump(), token=token)


@router.post(
    "/desks/{name}/revoke",
    response_model=DeskRow,
    responses={**_AUTH, 404: {"description": "No desk has that name."}},
)
async def revoke(
    *, name: Annotated[str, Path(min_length=1, max_length=100)], engine: EngineDep, operator: OperatorDep
) -> DeskRow:
    try:
        desk = await revoke_desk(engine, name)
    except AccountNotFoundError:
        raise ApiError(404, "desk_not_found", f"no desk named {name!r}") from None
    return _desk_row(desk)
