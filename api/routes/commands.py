"""`POST /v1/matches/{fixture_id}/commands`: a scorer desk's command, answered after the commit.

Every answer has one body, `{outcome, seq?, answer?, reason?, changed?}`. It is an answer, not an
error, so accepted, duplicate, refused and conflict are all 200; only `try_again` is 503 with
`Retry-After` (no answer in time, a store out of reach, or no pool connection free). Bad shapes are 422 with the field path and never reach the workflow.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.auth import SenderDep, require_fixture
from api.command_road import (
    NotAnswered,
    WorkflowRefused,
    payload_hash,
    stored_answer,
    submit,
)
from api.deps import EngineDep, ResourcesDep, SettingsDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from api.resources import Resources
from domain.commands import CommandAnswer, CommandKey, CommandRequest, Outcome, Reason
from domain.failures import UnknownFixture
from domain.rules import CommandShapeError, parse_command
from domain.rules.commands import MAX_ID
from scoreline.logging import get_logger
from scoreline.temporal.match_runs import MatchRuns

router = APIRouter(prefix="/v1/matches", tags=["commands"], route_class=TokenFirstRoute)
log = get_logger(__name__)

RETRY_AFTER_SECONDS = 1
FixtureId = Annotated[int, Path(ge=1, le=MAX_ID, description="The fixture the command is for.")]


class CommandBody(BaseModel):
    """What a desk sends. `key` is made once and resent unchanged on every retry."""

    model_config = ConfigDict(extra="forbid", strict=True)

    key: CommandKey
    code: str = Field(min_length=1, max_length=64)
    input: dict[str, JsonValue] = Field(max_length=32)
    saw: int = Field(ge=0, le=MAX_ID, description="The last log seq the desk showed.")
    sent_at: AwareDatetime | None = Field(default=None, strict=False)


@router.post("/{fixture_id}/commands", response_model=CommandAnswer, response_model_exclude_none=True)
async def send_command(
    fixture_id: FixtureId,
    body: CommandBody,
    sender: SenderDep,
    engine: EngineDep,
    settings: SettingsDep,
    resources: ResourcesDep,
) -> JSONResponse:
    require_fixture(sender, fixture_id)
    try:
        parse_command(body.code, body.input)
    except CommandShapeError as error:
        raise _shape_error(error.path, error.message) from None
    request = CommandRequest(
        key=body.key,
        code=body.code,
        input=body.input,
        saw=body.saw,
        sent_at=body.sent_at,
        sender=sender.label,
        actor="operator" if sender.kind == "operator" else "desk",
        payload_hash=payload_hash(fixture_id, body.code, body.input, body.saw),
    )
    try:
        answer = await stored_answer(resources.commands_engine, fixture_id, request)
        if answer is None:
            answer = await submit(await _match_runs(resources), settings, fixture_id, request)
    except UnknownFixture:
        raise ApiError(404, "not_found", f"fixture {fixture_id} does not exist") from None
    except WorkflowRefused as error:
        raise _shape_error(error.path or "input", error.message) from None
    except (NotAnswered, DBAPIError, PoolTimeoutError, OSError) as error:
        log.warning("command not answered in time", fixture_id=fixture_id, key=body.key, error=str(error))
        resources.metrics.commands.labels(Outcome.TRY_AGAIN.value).inc()
        return _try_again("no answer yet; send the same command again")
    log.info("command answered", fixture_id=fixture_id, key=body.key, code=body.code, outcome=answer.outcome)
    resources.metrics.commands.labels(answer.outcome.value).inc()
    if answer.outcome is Outcome.TRY_AGAIN:
        return _respond_try_again(answer)
    return JSONResponse(answer.body())


async def _match_runs(resources: Resources) -> MatchRuns:
    """Connected here rather than as a dependency: Temporal being down is `try_again`, not a 500."""
    try:
        return await resources.match_runs()
    except RuntimeError as error:  # the SDK's "Failed client connect"
        raise NotAnswered(f"Temporal unreachable: {error}") from error


def _try_again(message: str) -> JSONResponse:
    return _respond_try_again(
        CommandAnswer(outcome=Outcome.TRY_AGAIN, reason=Reason(code="unavailable", message=message))
    )


def _respond_try_again(answer: CommandAnswer) -> JSONResponse:
    return JSONResponse(answer.body(), status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def _shape_error(path: str, message: str) -> ApiError:
    field = f"body.{path}"
    return ApiError(
        422,
        "validation_error",
        f"invalid request: {field}",
        fields=[{"path": field, "message": message, "type": "command_shape"}],
    )
