"""Partner webhooks over HTTP: a partner's own endpoints and delivery log, and the operator's view.

- Partner (`X-Api-Key`, the feed key): `GET /v1/partner/webhooks` (its endpoints and their state),
  `GET /v1/partner/webhooks/{id}/deliveries?before=&limit=` (attempts, newest first) and
  `POST /v1/partner/webhooks/{id}/redeliver` `{fixture_id, from_seq}`. Another partner's endpoint
  is 404, never 403: a partner cannot learn which ids exist.
- Operator (bearer operator token): `api.routes.webhook_ops`, included in this module's router.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from api.deps import EngineDep
from api.errors import ApiError
from api.routes import webhook_ops
from api.routes.webhook_ops import EndpointList
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
)

_BIGINT_MAX: Final = 2**63 - 1
AUTH_CHALLENGE: Final = {"WWW-Authenticate": 'ApiKey header="X-Api-Key"'}

EndpointId = Annotated[int, Path(ge=1, le=_BIGINT_MAX, description="The endpoint's id.")]

_PARTNER_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "`X-Api-Key` is missing or not a key we issued."},
    403: {"description": "The key was revoked."},
}
_NO_ENDPOINT: dict[int | str, dict[str, Any]] = {404: {"description": "No such endpoint of yours."}}


class RedeliverRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    fixture_id: int = Field(ge=1, le=_BIGINT_MAX)
    from_seq: int = Field(ge=1, le=_BIGINT_MAX)


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


router = APIRouter()
router.include_router(partner_router)
router.include_router(webhook_ops.router)
