"""Partner webhooks over HTTP: a partner's own endpoints and delivery log, and the operator's view.

- Partner (`X-Api-Key`, the feed key): `GET /v1/partner/webhooks` (its endpoints and their state),
  `GET /v1/partner/webhooks/{id}/deliveries?before=&limit=` (attempts, newest first) and
  `POST /v1/partner/webhooks/{id}/redeliver` `{fixture_id, from_seq}`. Another partner's endpoint
  is 404, never 403: a partner cannot learn which ids exist.
- Operator (bearer operator token): `GET /v1/ops/webhooks` (every endpoint, its lag and owed
  count) and `PUT /v1/ops/partners/{name}/delay` (the broadcast delay of the partner's key).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from api.auth import OperatorDep
from api.deps import EngineDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from scoreline.feeds.partners import MAX_NAME_LENGTH
from scoreline.webhooks.deliveries import (
    DEFAULT_PAGE,
    MAX_PAGE,
    AttemptPage,
    EndpointState,
    NothingOwedError,
    PartnerRef,
    Redelivery,
    attempts,
    endpoint_state,
    endpoint_states,
    find_partner,
    redeliver,
    set_partner_delay,
)

_BIGINT_MAX: Final = 2**63 - 1
MAX_DELAY_SECONDS: Final = 300
AUTH_CHALLENGE: Final = {"WWW-Authenticate": 'ApiKey header="X-Api-Key"'}

EndpointId = Annotated[int, Path(ge=1, le=_BIGINT_MAX, description="The endpoint's id.")]
PartnerName = Annotated[
    str, Path(min_length=1, max_length=MAX_NAME_LENGTH, description="The partner's name.")
]

_PARTNER_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "`X-Api-Key` is missing or not a key we issued."},
    403: {"description": "The key was revoked."},
}
_OPERATOR_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or an unknown or revoked one."},
    403: {"description": "Not an operator token."},
}
_NO_ENDPOINT: dict[int | str, dict[str, Any]] = {404: {"description": "No such endpoint of yours."}}


class EndpointList(BaseModel):
    model_config = ConfigDict(frozen=True)

    endpoints: list[EndpointState]


class RedeliverRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    fixture_id: int = Field(ge=1, le=_BIGINT_MAX)
    from_seq: int = Field(ge=1, le=_BIGINT_MAX)


class DelayRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    delay_seconds: int = Field(ge=0, le=MAX_DELAY_SECONDS)


class PartnerDelay(BaseModel):
    model_config = ConfigDict(frozen=True)

    partner: str
    delay_seconds: int


async def _partner(request: Request, engine: EngineDep) -> PartnerRef:
    """The calling partner, by its feed key; refused as `GET /v1/feeds/{doc}` refuses it."""
    api_key = request.headers.get("x-api-key")
    if not api_key:
        raise ApiError(
            401, "unauthorized", "send your partner API key in the X-Api-Key header", headers=AUTH_CHALLENGE
        )
    found = await find_partner(engine, api_key)
    if found is None:
        raise ApiError(401, "invalid_api_key", "this API key is not valid", headers=AUTH_CHALLENGE)
    if not found.active:
        raise ApiError(403, "api_key_revoked", "this API key has been revoked")
    return found


PartnerDep = Annotated[PartnerRef, Depends(_partner)]

partner_router = APIRouter(prefix="/v1/partner/webhooks", tags=["partner webhooks"])
ops_router = APIRouter(prefix="/v1/ops", tags=["ops"], route_class=TokenFirstRoute)


async def _own(engine: EngineDep, partner: PartnerRef, endpoint_id: int) -> EndpointState:
    state = await endpoint_state(engine, endpoint_id, partner_id=partner.id)
    if state is None:
        raise ApiError(404, "endpoint_not_found", f"you have no webhook endpoint {endpoint_id}")
    return state


@partner_router.get("", response_model=EndpointList, responses=_PARTNER_ERRORS)
async def my_endpoints(*, engine: EngineDep, partner: PartnerDep) -> EndpointList:
    """Your endpoints: active or paused (and why), messages owed, lag, last success and failure."""
    return EndpointList(endpoints=await endpoint_states(engine, partner_id=partner.id))


@partner_router.get(
    "/{endpoint_id}/deliveries", response_model=AttemptPage, responses={**_PARTNER_ERRORS, **_NO_ENDPOINT}
)
async def deliveries(
    *,
    endpoint_id: EndpointId,
    before: Annotated[
        int | None, Query(ge=1, le=_BIGINT_MAX, description="`next` of the page before.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
    engine: EngineDep,
    partner: PartnerDep,
) -> AttemptPage:
    """Every delivery attempt to the endpoint, newest first (kept 30 days); page back with `before`."""
    await _own(engine, partner, endpoint_id)
    return await attempts(engine, endpoint_id, before=before, limit=limit)


@partner_router.post(
    "/{endpoint_id}/redeliver",
    status_code=202,
    response_model=Redelivery,
    responses={
        **_PARTNER_ERRORS,
        404: {"description": "No such endpoint of yours."},
        422: {"description": "A bad body, or a seq the endpoint was never sent for that match."},
    },
)
async def redeliver_from(
    *, endpoint_id: EndpointId, body: RedeliverRequest, engine: EngineDep, partner: PartnerDep
) -> Redelivery:
    """Send the match's messages again from `from_seq` on, in seq order; asking twice is harmless."""
    await _own(engine, partner, endpoint_id)
    try:
        return await redeliver(engine, endpoint_id, body.fixture_id, body.from_seq)
    except NothingOwedError as error:
        raise ApiError(
            422,
            "validation_error",
            str(error),
            fields=[{"path": "body.from_seq", "message": str(error), "type": "nothing_owed"}],
        ) from None


@ops_router.get("/webhooks", response_model=EndpointList, responses=_OPERATOR_ERRORS)
async def all_endpoints(*, engine: EngineDep, operator: OperatorDep) -> EndpointList:
    """Every partner's endpoints with their state, owed count and lag, by partner name."""
    return EndpointList(endpoints=await endpoint_states(engine))


@ops_router.put(
    "/partners/{name}/delay",
    response_model=PartnerDelay,
    responses={**_OPERATOR_ERRORS, 404: {"description": "No partner has that name."}},
)
async def partner_delay(
    *, name: PartnerName, body: DelayRequest, engine: EngineDep, operator: OperatorDep
) -> PartnerDelay:
    """Set the broadcast delay (0 to 300 s) of everything the partner's key reads."""
    if not await set_partner_delay(engine, name, body.delay_seconds):
        raise ApiError(404, "partner_not_found", f"there is no partner named {name!r}")
    return PartnerDelay(partner=name, delay_seconds=body.delay_seconds)


router = APIRouter()
router.include_router(partner_router)
router.include_router(ops_router)
