"""A fan's page on another origin reads a live match from the browser through `fetch` and
`EventSource`; it cannot send a desk command, and an origin not in `API_CORS_ORIGINS` reads nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import Browser, expect
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from api.app import create_app
from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings
from tests.support.http import serve
from tests.web.browser import Screen

FAN_PAGE = """<!doctype html><html><body>
<p id="fetched">…</p><p id="streamed">…</p><p id="command">…</p>
<script>
const api = new URLSearchParams(location.search).get("api");
const fixture = new URLSearchParams(location.search).get("fixture");
fetch(`${api}/v1/matches/${fixture}`).then((r) => r.json())
  .then((m) => { document.getElementById("fetched").textContent = `${m.score.home}-${m.score.away} v${m.version}`; })
  .catch((e) => { document.getElementById("fetched").textContent = `blocked: ${e.name}`; });
const source = new EventSource(`${api}/v1/matches/${fixture}/stream`);
source.addEventListener("value", (event) => {
  const value = JSON.parse(event.data);
  document.getElementById("streamed").textContent = `${value.match.score.home}-${value.match.score.away} v${value.version}`;
});
source.onerror = () => { if (source.readyState === EventSource.CLOSED) document.getElementById("streamed").textContent = "blocked"; };
window.sendCommand = (token) => fetch(`${api}/v1/matches/${fixture}/commands`, {
  method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
  body: JSON.stringify({ key: crypto.randomUUID(), code: "match.commentary", input: { text: "from afar" }, saw: 0 }),
}).then((r) => `HTTP ${r.status}`, (e) => `blocked: ${e.name}`);
</script></body></html>"""


async def _fan_page(_: object) -> HTMLResponse:
    return HTMLResponse(FAN_PAGE)


@asynccontextmanager
async def fan_site() -> AsyncIterator[str]:
    """Another origin (another port) serving the fan's page."""
    async with serve(Starlette(routes=[Route("/", _fan_page)])) as url:
        yield url


async def test_a_page_on_another_origin_reads_a_live_match_but_sends_no_command(
    road: Road, browser: Browser
) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    fan = await Screen.open(browser)
    try:
        async with fan_site() as site:
            await fan.page.goto(f"{site}/?api={road.url}&fixture={fixture_id}")
            await expect(fan.page.locator("#fetched")).to_have_text("0-0 v1")
            await expect(fan.page.locator("#streamed")).to_have_text("0-0 v1")
            goal = {"side": "away", "minute": 3, "player_id": 209, "kind": "open_play"}
            await road.send(token, fixture_id, "football.goal", goal, saw=1)
            await expect(fan.page.locator("#streamed")).to_have_text("0-1 v2")
            assert (
                await fan.page.evaluate("(token) => window.sendCommand(token)", token) == "blocked: TypeError"
            )
        assert [row["seq"] for row in await road.log(fixture_id)] == [1, 2]
    finally:
        await fan.close()


async def test_an_origin_outside_the_list_reads_nothing(
    road: Road, browser: Browser, settings: Settings, database_url: str
) -> None:
    """With `API_CORS_ORIGINS` naming one site, a page from another site is refused by the browser."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    listed = f"http://127.0.0.1:{free_port()}"
    strict = road_settings(settings, api_cors_origins=f"{listed}, https://scores.example")
    fan = await Screen.open(browser)
    try:
        async with serve(create_app(strict)) as api, fan_site() as site:
            await fan.page.goto(f"{site}/?api={api}&fixture={fixture_id}")
            await expect(fan.page.locator("#fetched")).to_have_text("blocked: TypeError")
            await expect(fan.page.locator("#streamed")).to_have_text("blocked")
    finally:
        await fan.close()


async def test_the_websocket_refuses_a_browser_origin_outside_the_list(settings: Settings) -> None:
    """CORS does not cover WebSockets: the handshake is refused (403) to a browser `Origin` not in
    `API_CORS_ORIGINS`, accepted from a listed one, from the API's own origin and without one."""
    listed = "https://scores.example"
    strict = road_settings(settings, api_cors_origins=listed)
    async with serve(create_app(strict)) as api:
        ws = api.replace("http://", "ws://") + "/v1/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(ws, origin=Origin("https://elsewhere.example")):
                pass
        assert refused.value.response.status_code == 403
        for origin in (Origin(listed), Origin(api), None):
            async with connect(ws, origin=origin) as socket:
                await socket.send(json.dumps({"op": "subscribe", "channels": ["scores"]}))
                assert json.loads(await socket.recv())["type"] == "subscribed"
