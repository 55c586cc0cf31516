"""Bodies are limited before they are read, and the token is checked before the body (design §6):
no client holds a request open by announcing a body it never sends, or sending one without end."""

from __future__ import annotations

from scoreline.settings import Settings
from tests.api.raw_http import chunked, headers_only
from tests.commands.harness import Road

AT_ONCE = 2.0
"""Seconds an answer that needs no body may take; the client never sends the body."""
JSON = {"Content-Type": "application/json"}


async def test_an_anonymous_20_mb_command_is_answered_at_once_without_its_body(api: Road) -> None:
    """Regression: the server waited for all 20 MB before it looked at the (missing) token. Fails on
    main before the fix."""
    answer = await headers_only(
        api.url, "POST", "/v1/matches/1/commands", {**JSON, "Content-Length": "20000000"}, wait=AT_ONCE
    )

    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"


async def test_the_token_is_checked_before_a_body_under_the_limit_is_read(api: Road) -> None:
    """Regression: a missing, unknown or too weak token was found out only after the body came.
    Fails on main before the fix."""
    fixture_id = await api.fixture()
    desk = await api.desk(fixture_id)
    length = {**JSON, "Content-Length": "30000"}
    commands, desks = f"/v1/matches/{fixture_id}/commands", f"/v1/console/matches/{fixture_id}/desks"

    anonymous = await headers_only(api.url, "POST", commands, length, wait=AT_ONCE)
    unknown = await headers_only(
        api.url, "POST", commands, {**length, "Authorization": "Bearer sl_desk_nope"}, wait=AT_ONCE
    )
    not_operator = await headers_only(
        api.url, "POST", desks, {**length, "Authorization": f"Bearer {desk}"}, wait=AT_ONCE
    )
    anonymous_fixture = await headers_only(api.url, "POST", "/v1/fixtures", length, wait=AT_ONCE)

    assert (anonymous.status, anonymous.json()["error"]["code"]) == (401, "unauthorized")
    assert anonymous.headers["www-authenticate"] == "Bearer"
    assert (unknown.status, unknown.json()["error"]["code"]) == (401, "invalid_token")
    assert (not_operator.status, not_operator.json()["error"]["code"]) == (403, "operators_only")
    assert anonymous_fixture.status == 401


async def test_a_device_token_is_checked_before_the_body_is_read(api: Road) -> None:
    """A device route read (and parsed) the whole body before it looked at the device token: an
    anonymous or foreign client was kept waiting for a body it never sent."""
    device = "00000000-0000-4000-8000-000000000001"
    length = {**JSON, "Content-Length": "30000"}
    follows = f"/v1/devices/{device}/follows"

    anonymous = await headers_only(api.url, "POST", follows, length, wait=AT_ONCE)
    unknown = await headers_only(
        api.url, "POST", follows, {**length, "Authorization": f"Bearer sl_dev_{device}_nope"}, wait=AT_ONCE
    )

    assert anonymous.status == 401
    assert (unknown.status, unknown.json()["error"]["code"]) == (401, "invalid_token")


async def test_a_content_length_over_the_limit_is_413_before_the_body(api: Road, settings: Settings) -> None:
    """Regression: only `/v1/devices` limited bodies; an operator route read any size. Fails on main
    before the fix."""
    fixture_id = await api.fixture()
    headers = {
        **JSON,
        "Authorization": f"Bearer {api.operator_token}",
        "Content-Length": str(settings.api_max_body_bytes + 1),
    }

    answer = await headers_only(
        api.url, "POST", f"/v1/console/matches/{fixture_id}/desks", headers, wait=AT_ONCE
    )

    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"
    assert answer.headers["content-type"] == "application/json"


async def test_a_chunked_body_stops_being_read_at_the_limit(api: Road, settings: Settings) -> None:
    """Regression: a chunked body (no Content-Length) was read to its end whatever its size. Fails
    on main before the fix (the 128 KiB of junk were read and answered 422)."""
    fixture_id = await api.fixture()
    headers = {**JSON, "Authorization": f"Bearer {api.operator_token}"}
    chunk = b"x" * 16_384
    count = settings.api_max_body_bytes // len(chunk) + 4

    answer = await chunked(
        api.url, "POST", f"/v1/console/matches/{fixture_id}/desks", headers, [chunk] * count, wait=AT_ONCE
    )

    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"


async def test_a_body_within_the_limit_still_works(api: Road) -> None:
    fixture_id = await api.fixture()

    response = await api.http.post(
        f"/v1/console/matches/{fixture_id}/desks",
        json={"name": "desk-within-limit"},
        headers={"Authorization": f"Bearer {api.operator_token}"},
    )

    assert response.status_code == 201, response.text
