"""The operator's webhook API (bearer operator token): endpoints, their lag, and partner delays.

- `POST /v1/ops/partners/{name}/webhooks` `{url, delay_seconds?}`: 201 with the signing secret,
  shown this once.
- `GET /v1/ops/webhooks`: every endpoint with its partner, URL, state, owed count and lag.
- `POST /v1/ops/webhooks/{id}/pause|resume|rotate`: rotate answers the new secret once; the old
  one keeps signing beside it for a day.
- `PUT /v1/ops/partners/{name}/delay` `{delay_seconds}`: the broadcast delay of the partner's key.

What an endpoint may be (its URL rules, the delay bounds, the secret) is decided in
`scoreline.webhooks.endpoints`, which the CLI uses too; this module only reads first what lets
it answer precisely (404 for a missing partner or endpoint, 409 for a URL the partner has already).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from api.auth import OperatorDep
from api.deps import EngineDep, SettingsDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from scoreline.feeds.partner_delay import MAX_DELAY_SECONDS, set_partner_delay
from scoreline.feeds.partners import MAX_NAME_LENGTH, PartnerError
from scoreline.settings import Environment, Settings
from scoreline.webhooks.deliveries import (
    EndpointState,
    endpoint_state,
    endpoint_states,
    partner_named,
)
from scoreline.webhooks.endpoints import (
    EndpointError,
    create_endpoint,
    get_endpoint,
    pause_endpoint,
    resume_endpoint,
    rotate_secret,
)
from scoreline.webhooks.urls import MAX_URL_LENGTH, UrlPolicy, UrlRefusedError, check_url

_BIGINT_MAX: Final = 2**63 - 1

router = APIRouter(prefix="/v1/ops", tags=["ops"], route_class=TokenFirstRoute)

EndpointId = Annotated[int, Path(ge=1, le=_BIGINT_MAX, description="The endpoint's id.")]
PartnerName = Annotated[
    str, Path(min_length=1, max_length=MAX_NAME_LENGTH, description="The partner's name.")
]

_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or an unknown or revoked one."},
    403: {"description": "Not an operator token."},
}
_NO_ENDPOINT: dict[int | str, dict[str, Any]] = {**_AUTH, 404: {"description": "No such endpoint."}}
_NO_PARTNER: dict[int | str, dict[str, Any]] = {**_AUTH, 404: {"description": "No partner has that name."}}


class EndpointList(BaseModel):
    model_config = ConfigDict(frozen=True)

    endpoints: list[EndpointState]


class NewEndpoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH)
    delay_seconds: int = Field(default=0, ge=0, le=MAX_DELAY_SECONDS)


class CreatedEndpoint(EndpointState):
    secret: str
    """`whsec_…`: shown once; the receiver verifies signatures with it."""


class RotatedSecret(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    secret: str
    """The new `whsec_…`, shown once."""
    previous_secret_until: datetime | None
    """Until then messages carry a signature with the previous secret too."""


class DelayRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    delay_seconds: int = Field(ge=0, le=MAX_DELAY_SECONDS)


class PartnerDelay(BaseModel):
    model_config = ConfigDict(frozen=True)

    partner: str
    delay_seconds: int


def url_policy(settings: Settings) -> UrlPolicy:
    return UrlPolicy(development=settings.scoreline_env is Environment.DEVELOPMENT)


async def _existing(engine: EngineDep, endpoint_id: int) -> EndpointState:
    state = await endpoint_state(engine, endpoint_id)
    if state is None:
        raise ApiError(404, "endpoint_not_found", f"there is no webhook endpoint {endpoint_id}")
    return state


@router.get("/webhooks", response_model=EndpointList, responses=_AUTH)
async def all_endpoints(*, engine: EngineDep, operator: OperatorDep) -> EndpointList:
    """Every partner's endpoints with their state, owed count and lag, by partner name."""
    return EndpointList(endpoints=await endpoint_states(engine))


@router.post(
    "/partners/{name}/webhooks",
    status_code=201,
    response_model=CreatedEndpoint,
    responses={
        **_NO_PARTNER,
        409: {"description": "The partner has an endpoint at that URL already, or is revoked."},
        422: {"description": "A bad body, or a URL refused (not https, private address, ...)."},
    },
)
async def new_endpoint(
    *, name: PartnerName, body: NewEndpoint, engine: EngineDep, settings: SettingsDep, operator: OperatorDep
) -> CreatedEndpoint:
    """A new endpoint, owed every change of the partner's matches from now on; its secret, once."""
    policy = url_policy(settings)
    try:
        check_url(body.url, policy)
    except UrlRefusedError as error:
        fields = [{"path": "body.url", "message": str(error), "type": "url_refused"}]
        raise ApiError(422, "validation_error", str(error), fields=fields) from None
    owner = await partner_named(engine, name)
    if owner is None:
        raise ApiError(404, "partner_not_found", f"there is no partner named {name!r}")
    if not owner.active:
        raise ApiError(409, "partner_revoked", f"partner {name!r} is revoked")
    if any(known.url == body.url for known in await endpoint_states(engine, partner_id=owner.id)):
        raise ApiError(409, "duplicate_url", f"partner {name!r} already has an endpoint at {body.url}")
    try:
        created, secret = await create_endpoint(
            engine, name, body.url, policy, delay_seconds=body.delay_seconds
        )
    except EndpointError as error:
        # The checks above passed, so only a concurrent change is left: the same URL added, or
        # the partner revoked, in between.
        raise ApiError(409, "conflict", str(error)) from None
    state = await _existing(engine, created.id)
    return CreatedEndpoint(**state.model_dump(), secret=secret)


@router.post("/webhooks/{endpoint_id}/pause", response_model=EndpointState, responses=_NO_ENDPOINT)
async def pause(*, endpoint_id: EndpointId, engine: EngineDep, operator: OperatorDep) -> EndpointState:
    """Stop sending; what the endpoint is owed keeps accumulating and nothing is dropped."""
    await _existing(engine, endpoint_id)
    await pause_endpoint(engine, endpoint_id)
    return await _existing(engine, endpoint_id)


@router.post("/webhooks/{endpoint_id}/resume", response_model=EndpointState, responses=_NO_ENDPOINT)
async def resume(*, endpoint_id: EndpointId, engine: EngineDep, operator: OperatorDep) -> EndpointState:
    """Send again, in order, from the first change each match's receiver has not answered 2xx."""
    await _existing(engine, endpoint_id)
    await resume_endpoint(engine, endpoint_id)
    return await _existing(engine, endpoint_id)


@router.post("/webhooks/{endpoint_id}/rotate", response_model=RotatedSecret, responses=_NO_ENDPOINT)
async def rotate(*, endpoint_id: EndpointId, engine: EngineDep, operator: OperatorDep) -> RotatedSecret:
    """A new signing secret, shown once; the previous one keeps signing beside it for a while."""
    await _existing(engine, endpoint_id)
    try:
        secret = await rotate_secret(engine, endpoint_id)
        rotated = await get_endpoint(engine, endpoint_id)
    except EndpointError:
        raise ApiError(404, "endpoint_not_found", f"there is no webhook endpoint {endpoint_id}") from None
    return RotatedSecret(id=endpoint_id, secret=secret, previous_secret_until=rotated.previous_secret_until)


@router.put("/partners/{name}/delay", response_model=PartnerDelay, responses=_NO_PARTNER)
async def partner_delay(
    *, name: PartnerName, body: DelayRequest, engine: EngineDep, operator: OperatorDep
) -> PartnerDelay:
    """Set the broadcast delay (0 to 300 s) of everything the partner's key reads."""
    try:
        await set_partner_delay(engine, name, body.delay_seconds)
    except PartnerError:
        raise ApiError(404, "partner_not_found", f"there is no partner named {name!r}") from None
    return PartnerDelay(partner=name, delay_seconds=body.delay_seconds)
