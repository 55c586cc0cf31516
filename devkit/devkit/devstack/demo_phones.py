"""The demo's phones: a few simulated iPhones that follow every demo match, so Live Activity
pushes go out (the monitor's `pushes=` column) and the console's Live Activity counts move.

Each phone does what the app does: it registers (`POST /v1/devices`) with a push-to-start token,
follows each match once its fixture exists (`POST /v1/devices/{id}/follows`; a 404 means "not
synced yet", tried again a second later), and when a push-to-start for a match reaches its token
at the APNs simulator it reports the new activity's update token
(`PUT /v1/devices/{id}/live-activities/{fixture_id}`), as ActivityKit hands it to the app. From
then on that activity gets the match's updates and its `end`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

PHONES = 3
POLL_SECONDS = 1.0
TOKEN_BYTES = 80
"""Live-Activity-length APNs tokens (160 hex digits), like the real ones."""


def apns_token() -> str:
    return secrets.token_hex(TOKEN_BYTES)


@dataclass
class DemoPhone:
    name: str
    push_to_start_token: str = field(default_factory=apns_token)
    device_id: str | None = None
    auth: dict[str, str] = field(default_factory=dict)
    following: set[int] = field(default_factory=set)
    reported: set[int] = field(default_factory=set)

    async def register(self, api: httpx.AsyncClient) -> None:
        response = await api.post(
            "/v1/devices",
            json={
                "install_id": f"demo-{self.name}-{uuid.uuid4().hex[:12]}",
                "platform": "ios",
                "environment": "sandbox",
                "push_to_start_token": self.push_to_start_token,
                "app_version": "demo",
            },
        )
        response.raise_for_status()
        body = response.json()
        self.device_id, self.auth = body["id"], {"Authorization": f"Bearer {body['token']}"}

    async def follow_new(self, api: httpx.AsyncClient, fixture_ids: list[int]) -> None:
        for fixture_id in fixture_ids:
            if fixture_id in self.following:
                continue
            response = await api.post(
                f"/v1/devices/{self.device_id}/follows", json={"fixture_id": fixture_id}, headers=self.auth
            )
            if response.status_code in (200, 201):
                self.following.add(fixture_id)

    async def report_started(self, api: httpx.AsyncClient, apns_admin: httpx.AsyncClient) -> None:
        """Report an update token for every match whose push-to-start reached this phone."""
        pushes = await apns_admin.get(
            "/_sim/pushes", params={"token": self.push_to_start_token, "limit": 1000}
        )
        pushes.raise_for_status()
        for record in pushes.json().get("pushes", []):
            aps = (record.get("payload") or {}).get("aps") or {}
            fixture_id = (aps.get("attributes") or {}).get("fixtureId")
            if aps.get("event") != "start" or not isinstance(fixture_id, int) or fixture_id in self.reported:
                continue
            response = await api.put(
                f"/v1/devices/{self.device_id}/live-activities/{fixture_id}",
                json={"push_token": apns_token()},
                headers=self.auth,
            )
            if response.status_code == 200:
                self.reported.add(fixture_id)


async def run_demo_phones(api_url: str, apns_admin_url: str, fixture_ids: Callable[[], list[int]]) -> None:
    """Register `PHONES` phones and keep them following `fixture_ids()`; never raises (the demo
    goes on without them), and runs until cancelled."""
    phones = [DemoPhone(f"phone-{n + 1}") for n in range(PHONES)]
    try:
        async with (
            httpx.AsyncClient(base_url=api_url, timeout=5) as api,
            httpx.AsyncClient(base_url=apns_admin_url, timeout=5) as apns_admin,
        ):
            for phone in phones:
                await phone.register(api)
            while True:
                ids = fixture_ids()
                for phone in phones:
                    try:
                        await phone.follow_new(api, ids)
                        await phone.report_started(api, apns_admin)
                    except httpx.HTTPError:
                        pass  # the API or the simulator is busy or restarting: next round
                await asyncio.sleep(POLL_SECONDS)
    except (httpx.HTTPError, ValueError) as error:
        print(f"{time.strftime('%H:%M:%S')}  phones: stopped: {error!r}", flush=True)
