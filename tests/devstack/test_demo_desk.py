"""The demo's scripted desk: its match over the real command road, and a desk app's retry rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from devkit.devstack.demo_desk import (
    FINAL_SCORE,
    FULL_TIME_AT,
    SCRIPT,
    Desk,
    Step,
    create_desk_match,
    match_minute,
    play,
    player,
)
from devkit.devstack.monitor import AnnouncedMatches, MatchLine, all_over
from scoreline.accounts.store import create_desk
from scoreline.readmodel.views import MatchView
from tests.commands.harness import Road
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(180)


async def test_the_scripted_match_is_played_through_the_api_and_ends_as_scripted(
    road: Road, capsys: pytest.CaptureFixture[str]
) -> None:
    match = await create_desk_match(road.engine)
    announced = AnnouncedMatches(expected=1)

    sent = await play(
        Desk(road.http, match),
        minute_seconds=0.002,
        on_minute=lambda minute: announced.tick(match.fixture_id, minute),
    )

    assert [(s.step.code, s.outcome) for s in sent] == [(step.code, "accepted") for step in SCRIPT]
    assert [s.seq for s in sent] == list(range(1, len(SCRIPT) + 1))
    assert _desk_lines(capsys) == []  # nothing to report when every answer is as scripted

    async def final_view() -> dict[str, Any] | None:
        """The fans' read copy is refreshed just after each answer, so it may lag a moment."""
        view: dict[str, Any] = (await road.http.get(f"/v1/matches/{match.fixture_id}")).json()
        return view if view["version"] == len(SCRIPT) else None

    view = await eventually(final_view)
    assert view["fixture"]["name"] == "Oakwood School vs Brookside College"
    assert view["state"] == "finished"
    assert (view["score"]["home"], view["score"]["away"]) == FINAL_SCORE
    assert announced.clocks[match.fixture_id] == 90

    log = await road.log(match.fixture_id)
    bodies = [json.loads(row["body"]) for row in log]
    assert {row["origin"] for row in log} == {"desk"}
    equaliser = next(s for s in sent if s.step.label == "equaliser")
    var = next(body for body in bodies if body["code"] == "match.var")
    assert var["target_seq"] == equaliser.seq
    assert var["decision"] == "overturned"
    (squads,) = await road.rows("SELECT squads FROM fixture WHERE id = $1", match.fixture_id)
    stored = json.loads(squads["squads"])
    assert [len(stored[side]) for side in ("home", "away")] == [16, 16]
    assert stored["home"][8] == {"id": 109, "name": "Oscar Lund", "shirt_number": 9, "starting": True}


async def test_a_refused_command_is_reported_in_one_line_and_the_script_goes_on(
    road: Road, capsys: pytest.CaptureFixture[str]
) -> None:
    match = await create_desk_match(road.engine)
    script = (
        Step(0, "football.period_start", {"period": "1H"}),
        Step(0, "football.card", {"side": "home", "minute": 3, "player_id": 999, "color": "yellow"}),
        Step(0, "match.var", {"decision": "overturned"}, target="never-scored"),
        Step(0, "football.corner", {"side": "home", "minute": 4}),
    )

    sent = await play(Desk(road.http, match), minute_seconds=0.001, script=script)

    assert [s.outcome for s in sent] == ["accepted", "refused", "skipped", "accepted"]
    assert sent[1].reason is not None and sent[1].reason.startswith("not_in_squad")
    lines = _desk_lines(capsys)
    assert len(lines) == 2
    assert "desk: football.card refused (not_in_squad:" in lines[0]
    assert "desk: match.var skipped" in lines[1]


def _desk_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What the desk printed (the test run's structured logs share stdout)."""
    return [line for line in capsys.readouterr().out.splitlines() if "  desk: " in line]


async def test_a_desk_behind_another_desk_rereads_saw_from_the_conflict_and_sends_anew(road: Road) -> None:
    match = await create_desk_match(road.engine)
    _, other_token = await create_desk(road.engine, "demo desk colleague", [match.fixture_id])
    desk = Desk(road.http, match)
    kickoff = await desk.send(Step(0, "football.period_start", {"period": "1H"}), {"period": "1H"})
    other = await road.send(
        other_token,
        match.fixture_id,
        "football.goal",
        {"side": "away", "minute": 5, "player_id": player("away", 9), "kind": "open_play"},
        saw=kickoff.seq or 0,
    )
    assert other.json()["outcome"] == "accepted"
    goal_input = {"side": "home", "minute": 6, "player_id": player("home", 9), "kind": "open_play"}

    goal = await desk.send(Step(6, "football.goal", goal_input), goal_input)

    assert (goal.outcome, goal.seq, desk.saw) == ("accepted", 3, 3)
    commands = await road.rows(
        "SELECT outcome FROM command WHERE fixture_id = $1 AND sender LIKE 'desk:%' ORDER BY created_at",
        match.fixture_id,
    )
    assert [row["outcome"] for row in commands] == ["accepted", "accepted", "conflict", "accepted"]


def test_the_script_plays_in_about_two_minutes_at_60x_and_the_clock_reads_like_a_match() -> None:
    assert 100 <= FULL_TIME_AT <= 115
    assert [match_minute(at) for at in (0, 19.5, 45, 50, 61, 90, FULL_TIME_AT)] == [0, 19, 45, 45, 45, 74, 90]
    assert [step.at for step in SCRIPT] == sorted(step.at for step in SCRIPT)


def _view(fixture_id: int, state: str, minute: int | None) -> MatchView:
    return MatchView.model_validate(
        {
            "fixture": {
                "id": fixture_id,
                "name": "Oakwood School vs Brookside College",
                "sport": "football",
                "kickoff": None,
                "home": None,
                "away": None,
                "competition": None,
                "league_id": None,
                "season_id": None,
            },
            "state": state,
            "score": {"home": 1, "away": 0},
            "minute": minute,
            "version": 5,
            "updated_at": "2026-03-14T15:00:00+00:00",
        }
    )


def test_the_monitor_takes_the_desk_clock_when_the_view_has_no_minute() -> None:
    before = MatchLine.of(_view(7, "live_first_half", None), None, clock=30)
    assert before.minute == 30
    assert MatchLine.of(_view(7, "live_first_half", 33), before, clock=30).minute == 33
    assert MatchLine.of(_view(7, "half_time", None), before).minute == 30


def test_all_matches_are_over_only_once_the_announced_ones_are_over_too() -> None:
    finished = MatchLine.of(_view(1, "finished", 90), None)
    live = MatchLine.of(_view(2, "live_second_half", 70), None)
    announced = AnnouncedMatches(expected=1)

    assert not all_over([1], {1: finished}, announced)  # the desk has not announced its match yet
    announced.announce(2)
    announced.close()
    assert not all_over([1, 2], {1: finished}, announced)
    assert not all_over([1, 2], {1: finished, 2: live}, announced)
    assert all_over([1, 2], {1: finished, 2: MatchLine.of(_view(2, "finished", 90), None)}, announced)
    assert all_over([1], {1: finished}, None)
