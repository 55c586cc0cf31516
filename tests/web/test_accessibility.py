"""Accessibility basics of the desk on a phone: touch targets, labelled controls, a scoreboard
that moves nothing when the score changes."""

from __future__ import annotations

from playwright.async_api import Browser

from tests.commands.harness import Road
from tests.web.browser import PHONE, DeskScreen

TOUCH_PX = 44

SMALL_TARGETS = """(touch) => [...document.querySelectorAll("button, input, summary")]
  .filter((el) => el.offsetParent !== null)
  .map((el) => ({ name: el.textContent.trim() || el.id, box: el.getBoundingClientRect() }))
  .filter(({ box }) => box.height < touch || box.width < touch)
  .map(({ name, box }) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`)"""

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
        pad_before = await page.locator("#pad").bounding_box()
        await desk.tap("Goal", "away")
        assert await page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        assert await page.evaluate(UNLABELLED) == []
        await desk.choose("Scorer", "11 Away Player 11")
        await desk.save()
        await desk.expect_score(0, 1)
        await desk.expect_version(2)
        assert await page.locator("#pad").bounding_box() == pad_before
        assert desk.errors == []
    finally:
        await desk.close()
