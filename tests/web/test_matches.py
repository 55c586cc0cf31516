"""Whole matches scored through the pads, ending with the right board and log; their screenshots
(laptop and phone) are saved for the README."""

from __future__ import annotations

import json

from playwright.async_api import Browser, expect

from tests.commands.harness import Road
from tests.web.browser import PHONE, DeskScreen, outbox


async def test_a_scripted_football_match_through_the_pad(road: Road, browser: Browser) -> None:
    """Kick-off to full time with every kind of tap (keyboard shortcuts included); the board, the
    log and the stored entries agree at the end."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    desk = await DeskScreen.open(browser)
    phone = await DeskScreen.open(browser, viewport=PHONE, mobile=True)
    page = desk.page
    try:
        await desk.sign_in(road.url, fixture_id, token)
        await page.keyboard.press("k")  # kick-off
        await desk.expect_version(1)
        await page.keyboard.press("c")  # home corner
        await page.keyboard.press("Shift+C")  # away corner
        await desk.expect_version(3)
        await desk.tap("Goal", "home")
        await desk.choose("Scorer", "9 Home Player 9")
        await desk.choose("Assist", "7 Home Player 7")
        await desk.save()
        await desk.tap("Yellow card", "away")
        await desk.choose("Player", "4 Away Player 4")
        await desk.save()
        await desk.expect_version(5)
        await desk.tap("Yellow card", "away")  # the same player again: a second yellow
        await desk.choose("Player", "4 Away Player 4")
        await desk.save()
        await desk.tap("Substitution", "away")
        await desk.choose("Off", "7 Away Player 7")
        await desk.choose("On", "14 Away Player 14")
        await desk.save()
        await page.get_by_label("Commentary").fill("Away down to ten")
        await page.get_by_role("button", name="Send note").click()
        await desk.expect_version(8)
        await desk.tap("End first half")
        await desk.expect_version(9)
        await desk.tap("Start second half")
        await desk.expect_version(10)
        await desk.tap("Goal", "away")
        await desk.choose("Scorer", "9 Away Player 9")
        await desk.save()
        await desk.expect_score(1, 1)
        await desk.tap("VAR review")
        await desk.choose("Decision reviewed", "Goal Harbour, Away Player 9 46'")
        await desk.save()
        await desk.expect_score(1, 0)
        await desk.tap("Own goal", "home")
        await desk.choose("Own goal by (Harbour)", "5 Away Player 5")
        await desk.save()
        await desk.expect_score(2, 0)
        await desk.tap("Undo last")  # the own goal was wrong
        await desk.expect_score(1, 0)
        await desk.tap("Penalty missed", "away")
        await desk.choose("Taker", "10 Away Player 10")
        await desk.save()
        await desk.tap("Penalty scored", "home")
        await desk.choose("Scorer", "10 Home Player 10")
        await desk.save()
        await desk.expect_score(2, 0)
        await desk.expect_version(16)
        await phone.sign_in(road.url, fixture_id, token)
        await phone.expect_version(16)
        await desk.screenshot("desk-football-laptop")
        await phone.screenshot("desk-football-phone")
        await desk.tap("End second half")
        await desk.expect_version(17)
        await expect(page.locator("#match-state")).to_have_text("finished")
        await expect(page.locator("#pad-periods")).to_have_text("Full time")

        logged = await desk.logged_texts()
        assert logged == [
            "First half starts",
            "Corner, Riverside",
            "Corner, Harbour",
            "Goal Riverside: Home Player 9, assist Home Player 7",
            "Yellow card, Harbour: Away Player 4",
            "Second yellow, Harbour: Away Player 4",
            "Substitution, Harbour: Away Player 14 on for Away Player 7",
            "\u201cAway down to ten\u201d",
            "First half ends",
            "Second half starts",
            "Goal Harbour: Away Player 9",
            "VAR: entry 11 overturned",
            "Goal Riverside (own goal): Away Player 5",
            "Undo entry 13",
            "Penalty missed, Harbour: Away Player 10",
            "Goal Riverside (penalty): Home Player 10",
            "Second half ends",
        ]
        await expect(page.locator("#log li[data-seq='11']")).to_have_class("log-row overturned")
        await expect(page.locator("#log li[data-seq='13']")).to_have_class("log-row undone")
        (board,) = await road.rows(
            "SELECT state, home_score, away_score, version FROM scoreboard WHERE fixture_id = $1", fixture_id
        )
        assert dict(board) == {"state": "finished", "home_score": 2, "away_score": 0, "version": 17}
        assert all(r["state"] == "accepted" for r in await outbox(desk, fixture_id))
        assert desk.errors == [] and phone.errors == []
    finally:
        await desk.close()
        await phone.close()


async def test_a_cricket_innings_through_the_pad(road: Road, browser: Browser) -> None:
    """Openers and bowler, a full over with a wide, the next bowler, a wicket with the new batter;
    the strike the pad shows follows every run and the over's end, as the server's rules do."""
    fixture_id = await road.fixture(sport="cricket")
    token = await road.desk(fixture_id)
    desk = await DeskScreen.open(browser)
    page = desk.page
    striker = page.locator("[data-role=striker]")
    try:
        await desk.sign_in(road.url, fixture_id, token)
        await desk.tap("Start innings 1")
        await desk.choose("Batting", "Riverside")
        await page.locator("#form-dialog").get_by_role("button", name="Next").click()
        await desk.choose("Striker", "1 Home Player 1")
        await desk.choose("Non-striker", "2 Home Player 2")
        await desk.choose("Bowler", "11 Away Player 11")
        await desk.save()
        await desk.expect_version(1)
        await expect(striker).to_have_text("Home Player 1*")
        await page.keyboard.press("1")
        await desk.expect_version(2)
        await expect(striker).to_have_text("Home Player 2*")
        await desk.tap("Dot")
        await desk.tap("FOUR")
        await desk.tap("Wide")
        await desk.choose("Runs run", "0")
        await desk.save()
        await desk.tap("2")
        await desk.tap("SIX")
        await desk.tap("1")
        await desk.expect_version(8)
        await expect(striker).to_have_text("Home Player 1*")
        await expect(page.locator(".this-over")).to_have_text("This over: 1 \u2022 4 wd 2 6 1")
        await desk.tap("End over")
        await desk.choose("Bowler", "10 Away Player 10")
        await desk.save()
        await desk.expect_version(10)
        await expect(striker).to_have_text("Home Player 2*")
        await expect(page.locator("[data-role=bowler]")).to_have_text("Away Player 10")
        await desk.tap("Wicket")
        await desk.choose("How out", "Caught")
        await desk.choose("Fielder", "5 Away Player 5")
        await desk.choose("New batter", "3 Home Player 3")
        await desk.save()
        await desk.expect_version(11)
        await expect(striker).to_have_text("Home Player 3*")
        await expect(page.locator("#detail")).to_have_text("Riverside 15/1 (1.1 ov)")
        await desk.screenshot("desk-cricket-laptop")
        await desk.tap("End innings")
        await page.locator("#form-dialog").get_by_role("button", name="End innings").click()
        await desk.expect_version(12)
        await expect(page.locator("#pad-periods")).to_contain_text("Start innings 2")

        rows = await road.rows(
            "SELECT body FROM timeline_item WHERE fixture_id = $1 ORDER BY seq", fixture_id
        )
        wicket = json.loads(rows[10]["body"])
        assert wicket["wicket"] == {
            "kind": "caught",
            "batter_out": "striker",
            "fielder_id": 205,
            "new_batter_id": 103,
        }
        (board,) = await road.rows(
            "SELECT home_score, version FROM scoreboard WHERE fixture_id = $1", fixture_id
        )
        assert dict(board) == {"home_score": 15, "version": 12}
        assert desk.errors == []
    finally:
        await desk.close()
