"""Accessibility basics of the desk on a phone: touch targets, labelled controls, a scoreboard
that moves nothing when the score changes."""

from __future__ import annotations

import asyncio

from playwright.async_api import Browser, Route, expect

from tests.commands.harness import Road
from tests.web.browser import PHONE, DeskScreen

TOUCH_PX = 44

SMALL_TARGETS = """(touch) => [...document.querySelectorAll("button, input, summary")]
  .filter((el) => el.offsetParent !== null)
  .map((el) => ({ name: el.textContent.trim() || el.id, box: el.getBoundingClientRect() }))
  .filter(({ box }) => box.height < touch || box.width < touch)
  .map(({ name, box }) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`)"""

PAD_ON_THE_PAGE = """() => {
  const box = document.querySelector("#pad").getBoundingClientRect();
  return { x: box.x + window.scrollX, y: box.y + window.scrollY, width: box.width, height: box.height };
}"""
"""Where the pad sits on the page, wherever it is scrolled: a tap near the fold scrolls it."""

UNLABELLED = """() => [...document.querySelectorAll("input, select, textarea")]
  .filter((el) => el.offsetParent !== null && el.labels.length === 0 && !el.getAttribute("aria-label"))
  .map((el) => el.id || el.outerHTML)"""


async def test_the_phone_desk_has_big_labelled_controls_and_a_steady_board(
    road: Road, browser: Browser
) -> None:
    """Every visible control is at least 44x44 px and every field has a label, on the pad and in
    the goal dialog; a goal changes the digits, not where the pad or the log sit."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    desk = await DeskScreen.open(browser, viewport=PHONE, mobile=True)
    page = desk.page
    try:
        await desk.sign_in(road.url, fixture_id, token)
        await desk.tap("Start first half")
        await desk.expect_version(1)
        assert await page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        assert await page.evaluate(UNLABELLED) == []
        pad_before = await page.evaluate(PAD_ON_THE_PAGE)
        await desk.tap("Goal", "away")
        assert await page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        assert await page.evaluate(UNLABELLED) == []
        await desk.choose("Scorer", "11 Away Player 11")
        await desk.save()
        await desk.expect_score(0, 1)
        await desk.expect_version(2)
        assert await page.evaluate(PAD_ON_THE_PAGE) == pad_before
        assert desk.errors == []
    finally:
        await desk.close()


async def test_a_tap_waiting_to_be_sent_moves_nothing_on_the_phone(road: Road, browser: Browser) -> None:
    """The "Sending 1 tap…" line took a band of its own above the board only while a tap waited, so
    every slow answer pushed the pad 41 px down under the scorer's thumb (CI caught it as the goal
    test's pad moving, when the stream's v2 came before the command's answer). The band is now
    always there; holding the command's answer shows the line without moving the pad."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    desk = await DeskScreen.open(browser, viewport=PHONE, mobile=True)
    page = desk.page
    answer_held = asyncio.Event()
    release = asyncio.Event()

    async def hold(route: Route) -> None:
        answer_held.set()
        await release.wait()
        await route.continue_()

    try:
        await desk.sign_in(road.url, fixture_id, token)
        await desk.tap("Start first half")
        await desk.expect_version(1)
        await expect(page.locator("#banner")).to_have_attribute("data-waiting", "0")
        pad_before = await page.evaluate(PAD_ON_THE_PAGE)
        await desk.context.route("**/v1/matches/*/commands", hold)
        await desk.tap("Corner", "home")
        await answer_held.wait()
        await expect(page.locator("#banner")).to_have_attribute("data-kind", "sending")
        await expect(page.locator("#banner")).to_have_text("Sending 1 tap…")
        assert await page.evaluate(PAD_ON_THE_PAGE) == pad_before
        release.set()
        await desk.expect_version(2)
        await expect(page.locator("#banner")).to_have_attribute("data-waiting", "0")
        assert await page.evaluate(PAD_ON_THE_PAGE) == pad_before
        assert desk.errors == []
    finally:
        release.set()
        await desk.close()
