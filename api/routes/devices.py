"""The app's device API: register, keep tokens current, follow fixtures, report Live Activities.

Auth: `Authorization: Bearer <device token>` (the `token` answered by `POST /v1/devices`) for every
route under `/v1/devices/{id}`. Missing or malformed header: 401 `unauthorized`; a token we did not
issue or one that was rotated away: 401 `invalid_token`; a valid token of another device: 403
`other_device`. Bad input is refused before anything is written: 422 `validation_error` naming the
field (APNs tokens are 64 to 200 hex digits), 413 `payload_too_large` for a body over the API's one
limit (`api_max_body_bytes`, `api.guards.body_limit`, as on every route), 404 `fixture_not_found`, 409 `not_following` (a Live Activity report for a match the device does not
follow), 404 `live_activity_not_found` (a report naming a generation Scoreline never started).

Limits (429 `too_many_requests` with `Retry-After`, nothing done): `POST /v1/devices` at most
`device_registration_rate_limit` a minute per client address (an IPv6 client counts as its /64),
follows and unfollows at most `follow_rate_limit` a minute per device. The client address is the
connection's peer as the ASGI server gives it: behind a proxy, uvicorn takes it from
`X-Forwarded-For` only when the proxy is one of `FORWARDED_ALLOW_IPS` (default 127.0.0.1).

A follower may have several Live Activities for one fixture in turn, numbered by `generation`: a
match that outlives Apple's 8-hour cap gets its activity ended and a new one started before it, a
Test ends the day's at stumps and starts one when play resumes. The push-to-start's attributes
carry the generation (absent = 1); the app reports its update token with it.

Registering an `install_id` that is known already needs that device's current token in
`Authorization: Bearer`: then it answers 200 (instead of 201) with the same device id and a **new**
token (the old one stops working at once), the fields refreshed, follows and activities kept.
Without it, or with any other token, it is 409 `install_registered` and nothing changes: knowing an
install id must not be enough to take a device over. An app that lost its token registers a new
install id.
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.exceptions import HTTPException

from api.deps import EngineDep, ResourcesDep, resources_of
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute, checked_before_the_body
from api.resources import Resources
from domain.failures import UnknownFixture
from scoreline.devices import store
from scoreline.devices.rate_limit import MinuteRateLimit, address_subject
from scoreline.devices.tokens import APNS_TOKEN_PATTERN, device_of, matches
from scoreline.logging import get_logger

log = get_logger("api.devices")

ApnsToken = Annotated[str, Field(pattern=APNS_TOKEN_PATTERN, description="64 to 200 hex digits.")]
FixtureId = Annotated[int, Field(ge=1, le=2**63 - 1)]


router = APIRouter(prefix="/v1/devices", tags=["devices"], route_class=TokenFirstRoute)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class DeviceRegistration(_Body):
    install_id: Annotated[str, Field(min_length=8, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")]
    """Made by the app once per install; registering it again with its device token rotates it."""
    platform: Literal["ios"]
    environment: Literal["sandbox", "production"]
    """The APNs environment the app's tokens belong to (a debug build: sandbox)."""
    push_to_start_token: ApnsToken | None = None
    app_version: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[\w.+-]+$")] | None = None
    locale: (
        Annotated[str, Field(min_length=2, max_length=35, pattern=r"^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$")]
        | None
    ) = None


class DeviceCredentials(BaseModel):
    id: uuid.UUID
    token: str
    """The device's bearer token: keep it in the keychain; it is never shown again."""


class PushToStartToken(_Body):
    push_to_start_token: ApnsToken


class FollowRequest(_Body):
    fixture_id: FixtureId


class Follow(BaseModel):
    fixture_id: int


class ActivityToken(_Body):
    push_token: ApnsToken
    """The activity's update token (ActivityKit `pushTokenUpdates`)."""
    generation: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    """The `generation` of the push-to-start's attributes (absent there: 1); one Scoreline never
    push-started to this device is 404. Left out: the newest activity of the device for this
    fixture, or, with none, the app's own (generation 1)."""


class LiveActivity(BaseModel):
    fixture_id: int
    generation: int
    """Which of this device's activities for the fixture: 1 from kick-off, then one per renewal
    (before Apple's 8-hour cap) or per day of play."""
    status: Literal["pending", "active", "ended", "failed"]
    push_token_active: bool
    has_push_token: bool
    started_at: datetime | None
    ended_at: datetime | None
    updated_at: datetime


class LiveActivityList(BaseModel):
    live_activities: list[LiveActivity]


def _bearer(request: Request) -> str | None:
    """The `Authorization: Bearer` token; None without the header, 401 when it is malformed."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(
            401, "Authorization is not 'Bearer <token>'", headers={"WWW-Authenticate": "Bearer"}
        )
    return token


_DEVICE_KEY = "scoreline.device"
"""Where the early check (`_device_first`) leaves the device it authenticated."""


async def _authenticated(
    device_id: Annotated[uuid.UUID, Path(description="The device id from registration.")],
    request: Request,
    engine: EngineDep,
) -> uuid.UUID:
    if request.scope.get(_DEVICE_KEY) == device_id:
        return device_id
    return await _check_device_token(request, device_id, engine)


async def _device_first(request: Request) -> None:
    """The device's token checked before the body is read (`api.guards.token_first`)."""
    try:
        device_id = uuid.UUID(str(request.path_params.get("device_id")))
    except ValueError:
        return  # not a device id: the route's own validation answers 422
    engine = resources_of(request).engine
    request.scope[_DEVICE_KEY] = await _check_device_token(request, device_id, engine)


async def _check_device_token(request: Request, device_id: uuid.UUID, engine: AsyncEngine) -> uuid.UUID:
    token = _bearer(request)
    if token is None:
        raise HTTPException(401, "missing Authorization header", headers={"WWW-Authenticate": "Bearer"})
    owner = device_of(token)
    stored = None if owner is None else await store.stored_token_hash(engine, owner)
    if owner is None or stored is None or not matches(token, stored):
        log.info("devices.auth_refused", reason="invalid_token", path=request.url.path)
        raise ApiError(401, "invalid_token", "the device token is unknown or was rotated")
    if owner != device_id:
        raise ApiError(403, "other_device", "this token belongs to another device")
    return device_id


DeviceDep = Annotated[uuid.UUID, Depends(_authenticated)]
checked_before_the_body(_authenticated, _device_first)

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No, malformed or unknown device token."},
    403: {"description": "The token belongs to another device."},
}


async def _spend(limit: MinuteRateLimit, subject: str, rule: str) -> None:
    """Count one call against `limit`; past it, 429 `too_many_requests` saying `rule` and when to retry."""
    wait = await limit.spend(subject)
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        raise ApiError(
            429,
            "too_many_requests",
            f"{rule}; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )


async def _registration_within_rate(request: Request, resources: ResourcesDep) -> None:
    """Every `POST /v1/devices` from the client's address counts, whatever it comes to: each new
    device is one more token any match's pushes can be aimed at. A dependency of the route, so a
    body that is valid JSON but not a valid registration counts too."""
    per_minute = resources.settings.device_registration_rate_limit
    await _spend(
        MinuteRateLimit(resources.redis, "registrations", per_minute),
        address_subject(None if request.client is None else request.client.host),
        f"at most {per_minute} device registrations a minute from one address",
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=DeviceCredentials,
    responses={
        200: {"model": DeviceCredentials, "description": "A known install, with its token: new token."},
        401: {"description": "A malformed Authorization header."},
        409: {"description": "A known install without its current device token: nothing changed."},
        429: {"description": "Too many registrations from this client address; see Retry-After."},
    },
    dependencies=[Depends(_registration_within_rate)],
)
async def register(
    body: DeviceRegistration, engine: EngineDep, request: Request, response: Response
) -> DeviceCredentials:
    """Register an install (201), or register a known one again with its current device token
    (200, same id, new token)."""
    try:
        registered = await store.register(
            engine,
            store.Registration(
                install_id=body.install_id,
                platform=body.platform,
                environment=body.environment,
                push_to_start_token=_lower(body.push_to_start_token),
                app_version=body.app_version,
                locale=body.locale,
            ),
            _bearer(request),
        )
    except store.InstallRegisteredError as error:
        log.info("devices.registration_refused", reason="install_registered", device_id=str(error.device_id))
        raise ApiError(
            409,
            "install_registered",
            "this install_id is registered already; registering it again needs its current device "
            "token (Authorization: Bearer <token>)",
        ) from error
    if not registered.created:
        response.status_code = status.HTTP_200_OK
    log.info("devices.registered", device_id=str(registered.device_id), created=registered.created)
    return DeviceCredentials(id=registered.device_id, token=registered.token)


@router.put("/{device_id}/push-to-start-token", status_code=status.HTTP_204_NO_CONTENT, responses=_ERRORS)
async def put_push_to_start_token(device_id: DeviceDep, body: PushToStartToken, engine: EngineDep) -> None:
    """ActivityKit gave the app a new push-to-start token (`pushToStartTokenUpdates`)."""
    await store.set_push_to_start_token(engine, device_id, body.push_to_start_token.lower())


_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {"description": "Too many follow or unfollow calls from this device; see Retry-After."}
}


@router.post(
    "/{device_id}/follows",
    status_code=status.HTTP_201_CREATED,
    response_model=Follow,
    responses={**_ERRORS, **_LIMITED, 404: {"description": "No such fixture."}},
)
async def follow(
    device_id: DeviceDep, body: FollowRequest, engine: EngineDep, resources: ResourcesDep, response: Response
) -> Follow:
    """Follow a fixture: its kick-off starts a Live Activity on this device (at once if the match
    already kicked off). 200 if followed already."""
    await _within_rate(resources, device_id)
    try:
        created = await store.follow(engine, device_id, body.fixture_id)
    except UnknownFixture as error:
        raise _no_fixture(body.fixture_id) from error
    if not created:
        response.status_code = status.HTTP_200_OK
    return Follow(fixture_id=body.fixture_id)


async def _within_rate(resources: Resources, device_id: uuid.UUID) -> None:
    per_minute = resources.settings.follow_rate_limit
    await _spend(
        MinuteRateLimit(resources.redis, "follows", per_minute),
        str(device_id),
        f"at most {per_minute} follow or unfollow calls a minute",
    )


@router.delete(
    "/{device_id}/follows/{fixture_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={**_ERRORS, **_LIMITED},
)
async def unfollow(
    device_id: DeviceDep,
    fixture_id: Annotated[int, Path(ge=1, le=2**63 - 1)],
    engine: EngineDep,
    resources: ResourcesDep,
) -> None:
    """Stop following (idempotent: 204 whether or not it was followed)."""
    await _within_rate(resources, device_id)
    await store.unfollow(engine, device_id, fixture_id)


@router.put(
    "/{device_id}/live-activities/{fixture_id}",
    response_model=LiveActivity,
    responses={
        **_ERRORS,
        404: {"description": "No such fixture, or a generation of its activity Scoreline never started."},
        409: {"description": "The device does not follow the fixture."},
    },
)
async def report_live_activity(
    device_id: DeviceDep,
    fixture_id: Annotated[int, Path(ge=1, le=2**63 - 1)],
    body: ActivityToken,
    engine: EngineDep,
) -> LiveActivity:
    """The update token of this device's activity for a fixture it follows (of `generation`, which
    Scoreline push-started, or the newest, or the app's own): the activity gets the current state
    on it at once (the end, if it has ended)."""
    try:
        row = await store.report_activity_token(
            engine, device_id, fixture_id, body.push_token.lower(), body.generation
        )
    except UnknownFixture as error:
        raise _no_fixture(fixture_id) from error
    except store.NotFollowingError as error:
        log.info(
            "devices.report_refused", reason="not_following", device_id=str(device_id), fixture_id=fixture_id
        )
        raise ApiError(409, "not_following", f"this device does not follow fixture {fixture_id}") from error
    except store.UnknownActivityError as error:
        raise ApiError(404, "live_activity_not_found", str(error)) from error
    return LiveActivity.model_validate(row, from_attributes=True)


@router.get("/{device_id}/live-activities", response_model=LiveActivityList, responses=_ERRORS)
async def list_live_activities(device_id: DeviceDep, engine: EngineDep) -> LiveActivityList:
    """This device's Live Activities, newest first."""
    rows = await store.activities(engine, device_id)
    return LiveActivityList(
        live_activities=[LiveActivity.model_validate(r, from_attributes=True) for r in rows]
    )


def _no_fixture(fixture_id: int) -> ApiError:
    return ApiError(404, "fixture_not_found", f"no fixture with id {fixture_id}")


def _lower(token: str | None) -> str | None:
    return None if token is None else token.lower()
