"""The desk's outbox in a real browser against the real stack: taps saved before the network,
sent once each, in order, whatever the network and the API do in between."""

from __future__ import annotations

import json

import asyncpg
from playwright.async_api import Browser, Route, expect
from sqlalchemy.engine import make_url

from devkit.devstack.ports import free_port
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings
from tests.support.waiting import eventually
from tests.web.api_process import ApiProcess
from tests.web.browser import DeskScreen, outbox


async def _cut(route: Route) -> None:
    await route.abort("internetdisconnected")


async def _started(road: Road, browser: Browser) -> tuple[int, DeskScreen]:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    desk = await DeskScreen.open(browser)
    await desk.sign_in(road.url, fixture_id, token)
    await desk.tap("Start first half")
    await desk.expect_version(1)
    return fixture_id, desk


async def _logged_keys(road: Road, fixture_id: int) -> list[str]:
    return [row["command_id"] for row in await road.log(fixture_id) if row["seq"] > 1]


async def test_twenty_taps_while_the_network_is_cut_are_all_logged_once_in_order(
    road: Road, browser: Browser
) -> None:
    """20 corners with the API unreachable wait in the outbox under an offline banner; once the
    network is back each is accepted once, in tap order, with its own key."""
    fixture_id, desk = await _started(road, browser)
    try:
        await desk.context.route("**/v1/**", _cut)
        for n in range(20):
            await desk.tap("Corner", "home" if n % 2 == 0 else "away")
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "20")
        await expect(desk.page.locator("#banner")).to_have_attribute("data-kind", "offline")
        await expect(desk.page.locator("#banner")).to_contain_text("20 taps waiting")
        records = await outbox(desk, fixture_id)
        keys = [str(record["key"]) for record in records if record["code"] == "football.corner"]
        assert len(keys) == 20 and all(record["saw"] == 1 for record in records[1:])

        await desk.context.unroute("**/v1/**", _cut)
        await desk.expect_version(21)
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "0")
        assert await _logged_keys(road, fixture_id) == keys
        sides = [json.loads(row["body"])["side"] for row in await road.log(fixture_id) if row["seq"] > 1]
        assert sides == ["home", "away"] * 10
        states = [record["state"] for record in await outbox(desk, fixture_id)]
        assert states == ["accepted"] * 21
        await expect(desk.page.locator("#log li[data-seq]")).to_have_count(21)
        assert desk.errors == []
    finally:
        await desk.close()


async def test_taps_unsent_at_a_reload_are_delivered_once_after_it(road: Road, browser: Browser) -> None:
    """5 taps wait offline; the page is reloaded (still offline: the desk opens from what the
    device kept, the board at the version it last showed) and a sixth is tapped on that version;
    when the network returns all 6 are logged once, in order, the 5 with their original keys."""
    fixture_id, desk = await _started(road, browser)
    try:
        await desk.context.route("**/v1/**", _cut)
        for _ in range(5):
            await desk.tap("Corner", "away")
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "5")
        keys = [str(r["key"]) for r in await outbox(desk, fixture_id) if r["state"] == "waiting"]
        await desk.page.reload()
        await expect(desk.page.locator("#app")).to_be_visible()
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "5")
        await expect(desk.page.locator("#log li.pending.waiting")).to_have_count(5)
        await desk.expect_version(1)
        await desk.tap("Corner", "home")
        sixth = (await outbox(desk, fixture_id))[-1]
        assert sixth["saw"] == 1 and sixth["key"] not in keys

        await desk.context.unroute("**/v1/**", _cut)
        await desk.expect_version(7)
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "0")
        assert await _logged_keys(road, fixture_id) == [*keys, sixth["key"]]
        assert desk.errors == []
    finally:
        await desk.close()


async def test_two_desks_on_the_same_saw_the_second_resolves_its_conflict(
    road: Road, browser: Browser
) -> None:
    """Desks A and B both show v1. B taps a goal while its network is cut, then A taps the same
    goal and it is logged. B's goal comes back `conflict` with A's entry; the taps B made after it
    wait. B sends it again on the new state: both goals stand and B's later tap follows."""
    fixture_id, a = await _started(road, browser)
    token = await road.desk(fixture_id)
    b = await DeskScreen.open(browser)
    try:
        await b.sign_in(road.url, fixture_id, token)
        await b.expect_version(1)
        await b.context.route("**/v1/matches/*/commands", _cut)
        await b.tap("Goal", "home")
        await b.choose("Scorer", "7 Home Player 7")
        await b.save()
        await b.tap("Corner", "away")
        await a.tap("Goal", "home")
        await a.choose("Scorer", "9 Home Player 9")
        await a.save()
        await b.expect_version(2)

        await b.context.unroute("**/v1/matches/*/commands", _cut)
        conflict = b.page.locator("#conflict")
        await expect(conflict).to_be_visible()
        await expect(conflict.locator("li[data-seq='2']")).to_contain_text("Goal Riverside: Home Player 9")
        await expect(b.page.locator("#banner")).to_have_attribute("data-waiting", "2")
        assert [row["seq"] for row in await road.log(fixture_id)] == [1, 2]

        await conflict.get_by_role("button", name="Send it on the new state").click()
        await b.expect_version(4)
        await a.expect_score(2, 0)
        await expect(conflict).to_be_hidden()
        bodies = [json.loads(row["body"]) for row in await road.log(fixture_id)]
        assert [body.get("player_id") for body in bodies[1:3]] == [109, 107]
        assert bodies[3]["code"] == "football.corner"
        assert a.errors == [] and b.errors == []
    finally:
        await a.close()
        await b.close()


async def test_the_api_process_killed_mid_queue_loses_and_doubles_nothing(
    road: Road, browser: Browser, settings: Settings, database_url: str
) -> None:
    """10 taps queued; the first is in flight (its commit held on the fixture lock) when the API
    process is SIGKILLed. A new process starts on the same port: the desk resends the first key
    (answered `duplicate`: it had committed) and sends the other 9. Each is logged once, in order."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    api = ApiProcess(road_settings(settings), free_port())
    await api.start()
    desk = await DeskScreen.open(browser)
    blocker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await desk.sign_in(api.url, fixture_id, token)
        await desk.tap("Start first half")
        await desk.expect_version(1)
        held = blocker.transaction()
        await held.start()
        await blocker.execute("SELECT 1 FROM fixture WHERE id = $1 FOR UPDATE", fixture_id)
        for _ in range(10):
            await desk.tap("Corner", "home")
        await eventually(lambda: _lock_waiters(database_url), within=30)
        api.kill()
        await held.rollback()
        await api.start()

        # The resend waits out the outbox's backoff, which grew while the API was down: up to its
        # 8 s cap (sender.js RETRY) unless the stream reconnects first, then 10 commands in a row.
        await desk.expect_version(11, within_s=20)
        await expect(desk.page.locator("#banner")).to_have_attribute("data-waiting", "0")
        records = await outbox(desk, fixture_id)
        assert await _logged_keys(road, fixture_id) == [str(r["key"]) for r in records[1:]]
        assert [r["state"] for r in records[1:]] == ["duplicate"] + ["accepted"] * 9
        assert desk.errors == []
    finally:
        await desk.close()
        await blocker.close()
        api.kill()


async def _lock_waiters(database_url: str) -> int:
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        return int(
            await db.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
                make_url(database_url).database,
            )
        )
    finally:
        await db.close()


async def test_a_refused_tap_shows_the_reason_and_the_queue_moves_on(road: Road, browser: Browser) -> None:
    """Desk B taps a goal by a player desk A has just sent off (B had not seen it: its network
    was cut). The rules refuse it `sent_off`; B shows the reason and its next tap is logged."""
    fixture_id, a = await _started(road, browser)
    token = await road.desk(fixture_id)
    b = await DeskScreen.open(browser)
    try:
        await b.sign_in(road.url, fixture_id, token)
        await b.context.route("**/v1/matches/*/commands", _cut)
        await b.tap("Goal", "home")
        await b.choose("Scorer", "9 Home Player 9")
        await b.save()
        await b.tap("Corner", "home")
        await a.tap("Red card", "home")
        await a.choose("Player", "9 Home Player 9")
        await a.save()
        await b.expect_version(2)
        await b.context.unroute("**/v1/matches/*/commands", _cut)
        await b.expect_version(3)
        refused = b.page.locator("#log li.pending.refused")
        await expect(refused).to_contain_text("refused: that player has been sent off")
        await expect(b.page.locator("#announce")).to_have_text("Refused: that player has been sent off")
        await expect(b.page.locator("#log li[data-seq='3'] .log-text")).to_have_text("Corner, Riverside")
        await b.expect_score(0, 0)
        assert a.errors == [] and b.errors == []
    finally:
        await a.close()
        await b.close()
