"""The operator console against the real stack: live rows, the mode switch, replays, desk tokens."""

from __future__ import annotations

import httpx
from playwright.async_api import Browser, expect

from tests.commands.harness import Road
from tests.web.browser import PHONE, ConsoleScreen, DeskScreen


async def test_the_console_shows_a_desk_goal_live(road: Road, browser: Browser) -> None:
    """A match the desk is scoring moves on the console's row as the desk taps, without a reload."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    console = await ConsoleScreen.open(browser)
    desk = await DeskScreen.open(browser)
    try:
        await desk.sign_in(road.url, fixture_id, token)
        await desk.tap("Start first half")
        await desk.expect_version(1)
        await console.sign_in(road.url, road.operator_token)
        row = console.row(fixture_id)
        await expect(row.locator(".version")).to_have_text("v1")
        await expect(row.locator(".mode")).to_have_text("desk")
        await desk.tap("Goal", "home")
        await desk.choose("Scorer", "10 Home Player 10")
        await desk.save()
        await expect(row.locator(".score")).to_have_text("1\u20130")
        await expect(row.locator(".version")).to_have_text("v2")
        await expect(row.locator(".state")).to_have_text("live first half")
        await console.row(fixture_id).get_by_role("button", name="Manage").click()
        await expect(console.detail(fixture_id).locator(".desks li")).to_have_count(1)
        await console.screenshot("console-laptop")
        phone = await ConsoleScreen.open(browser, viewport=PHONE, mobile=True)
        await phone.sign_in(road.url, road.operator_token)
        await expect(phone.row(fixture_id).locator(".version")).to_have_text("v2")
        await phone.screenshot("console-phone")
        await phone.close()
        assert console.errors == [] and desk.errors == []
    finally:
        await console.close()
        await desk.close()


async def test_an_operator_makes_and_revokes_a_desk_token_switches_the_mode_and_starts_a_replay(
    road: Road, browser: Browser
) -> None:
    """From one match's panel: a new desk token that a desk signs in with, then revoked; a
    provider-scored match handed to the desks; a replay started (answered with its workflow)."""
    fixture_id = await road.fixture(mode="provider")
    console = await ConsoleScreen.open(browser)
    desk = await DeskScreen.open(browser)
    try:
        await console.sign_in(road.url, road.operator_token)
        await console.row(fixture_id).get_by_role("button", name="Manage").click()
        panel = console.detail(fixture_id)
        await panel.get_by_label("New desk").fill("north stand")
        await panel.get_by_role("button", name="Create token").click()
        token = await panel.locator("[data-role=new-token]").text_content()
        assert token is not None and token.startswith("sl_desk_")
        await desk.sign_in(road.url, fixture_id, token)

        await panel.get_by_role("button", name="Hand to the desks").click()
        await expect(console.row(fixture_id).locator(".mode")).to_have_text("desk")
        await expect(panel.locator(".note")).to_have_text("Scoring handed to the desks.")
        await desk.expect_version(1)

        await panel.get_by_role("button", name="Start a replay").click()
        await expect(panel.locator(".note")).to_contain_text(f"Replay started: replay-{fixture_id}-")

        await panel.get_by_role("button", name="Revoke north stand").click()
        await expect(panel.locator("li[data-revoked=true]")).to_contain_text("north stand")
        async with httpx.AsyncClient(base_url=road.url) as http:
            refused = await http.get("/v1/console/matches", headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "operators_only"
        assert console.errors == [] and desk.errors == []
    finally:
        await console.close()
        await desk.close()


async def test_a_cricket_row_reads_like_a_scoreboard(road: Road, browser: Browser) -> None:
    """A live cricket match shows the batting side's runs/wickets (overs), and the target in a
    chase, on loading and as balls come in. Failed before: the row read `16-0` (home runs, away runs)."""
    fixture_id = await road.fixture(sport="cricket")
    token = await road.desk(fixture_id)
    seq = 0

    async def score(code: str, body: dict[str, object] | None = None) -> None:
        nonlocal seq
        answer = await road.send(token, fixture_id, code, body or {}, saw=seq)
        assert answer.json()["outcome"] == "accepted", answer.text
        seq = answer.json()["seq"]

    await score(
        "cricket.innings_start",
        {"batting": "home", "striker_id": 101, "non_striker_id": 102, "bowler_id": 211},
    )
    for runs in (6, 4, 0, 1, 4):
        await score("cricket.ball", {"runs": runs, **({"boundary": "six"} if runs == 6 else {})})
    await score("cricket.ball", {"wicket": {"kind": "bowled", "new_batter_id": 103}})
    await score("cricket.over_end")
    await score("cricket.bowler_change", {"bowler_id": 210})
    await score("cricket.ball", {"runs": 1})
    console = await ConsoleScreen.open(browser)
    try:
        await console.sign_in(road.url, road.operator_token)
        cell = console.row(fixture_id).locator(".score")
        await expect(cell).to_have_text("16/1 (1.1)")
        await score("cricket.innings_end")
        await score(
            "cricket.innings_start",
            {"batting": "away", "striker_id": 201, "non_striker_id": 202, "bowler_id": 111},
        )
        await score("cricket.ball", {"runs": 4, "boundary": "four"})
        await score("cricket.ball", {"wicket": {"kind": "caught", "fielder_id": 105, "new_batter_id": 203}})
        await expect(cell).to_have_text("4/1 (0.2) \u00b7 target 17")
        await console.screenshot("console-cricket-laptop")
        assert console.errors == []
    finally:
        await console.close()
