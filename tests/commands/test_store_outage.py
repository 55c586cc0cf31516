"""Requests while the API cannot reach Postgres (found by the soak).

The soak of 2026-12-02 (seed 2) restarted Postgres while 20 desks scored and 2,000 phones
registered: every command whose token was not in the API's five-second sender cache, and every
device registration, was answered 500 `internal_error`. The desk app takes a 500 as final and marks
the tap refused: the tap was lost. A store out of reach is now 503 `unavailable` with
`Retry-After`, which the desk app (and `devkit.devstack.demo_desk`) resends with the same key.
"""

from __future__ import annotations

import httpx

from api.app import create_app
from devkit.devstack.tcp_proxy import CuttableProxy
from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings
from tests.support.http import serve


async def test_a_command_and_a_registration_are_answered_503_unavailable_while_postgres_is_cut(
    settings: Settings, road: Road
) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    proxy = CuttableProxy.to_database(settings.require_database_url())
    await proxy.start()
    through_proxy = road_settings(settings).model_copy(
        update={"database_url": proxy.database_url(settings.require_database_url())}
    )
    try:
        async with (
            serve(create_app(through_proxy)) as api,
            httpx.AsyncClient(base_url=api, timeout=30) as http,
        ):
            await proxy.cut()
            answer = await http.post(
                f"/v1/matches/{fixture_id}/commands",
                json={
                    "key": road.key(),
                    "code": "football.period_start",
                    "input": {"period": "1H"},
                    "saw": 0,
                },
                headers={"Authorization": f"Bearer {token}"},
            )
            registration = await http.post(
                "/v1/devices",
                json={"install_id": "soak-outage-phone", "platform": "ios", "environment": "sandbox"},
            )
            await proxy.restore()
    finally:
        await proxy.cut()
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "unavailable"
    assert answer.headers["Retry-After"] == "1"
    assert await road.log(fixture_id) == [], "nothing is written while the token cannot be checked"
    assert (registration.status_code, registration.json()["error"]["code"]) == (503, "unavailable")
