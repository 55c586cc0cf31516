"""The demo's monitor on a cricket match: the batting line in place of the minute, a line per
wicket or over rather than per run, and Scoreline's ids for a cricket recording's fixtures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from devkit.devstack.monitor import MatchLine, fixture_ids, render
from domain.cricket.board import cricket_fixture_id
from scoreline.readmodel.views import MatchView


def _innings(scoreboard: str, runs: int, wickets: int, overs: str) -> dict[str, Any]:
    extras = {"wides": 0, "no_balls": 0, "byes": 0, "leg_byes": 0, "penalties": 0, "total": 0}
    number = int(scoreboard[1])
    return {
        "scoreboard": scoreboard,
        "number": number,
        "side": "away" if number == 1 else "home",
        "team_id": 8 if number == 1 else 2,
        "runs": runs,
        "wickets": wickets,
        "overs": overs,
        "extras": extras,
        "target": None,
        "super_over": False,
    }


def _view(*innings: dict[str, Any]) -> MatchView:
    return MatchView.model_validate(
        {
            "fixture": {
                "id": cricket_fixture_id(58328),
                "name": "Chennai Super Kings vs Royal Challengers Bengaluru",
                "sport": "cricket",
                "kickoff": None,
                "home": None,
                "away": None,
                "competition": None,
                "league_id": None,
                "season_id": None,
            },
            "state": "innings_2",
            "score": {"home": innings[-1]["runs"], "away": innings[0]["runs"]},
            "minute": None,
            "version": 140,
            "updated_at": "2024-03-22T17:00:00+00:00",
            "format": "T20",
            "innings": list(innings),
        }
    )


def test_a_cricket_line_shows_the_innings_and_fills_its_bar_ball_by_ball() -> None:
    line = MatchLine.of(_view(_innings("S1", 173, 6, "20.0"), _innings("S2", 61, 1, "6.4")), None)
    assert line.cricket == "61/1 (6.4)"
    assert line.balls == 120 + 40
    assert line.progress() == (120 + 40) / 240
    text = render(line, pushes=12)
    assert "Chennai Super Kings v Royal Challengers Bengaluru" in text and "61/1 (6.4)" in text


def test_a_run_is_no_news_but_a_wicket_or_an_over_is() -> None:
    before = MatchLine.of(_view(_innings("S1", 50, 1, "6.4")), None)
    run = MatchLine.of(_view(_innings("S1", 51, 1, "6.5")), before)
    wicket = MatchLine.of(_view(_innings("S1", 51, 2, "6.5")), before)
    over = MatchLine.of(_view(_innings("S1", 52, 1, "7.0")), before)
    assert run.news() == before.news()
    assert wicket.news() != before.news()
    assert over.news() != before.news()


def test_a_cricket_recording_announces_scoreline_ids(tmp_path: Path) -> None:
    recording = tmp_path / "cricket.jsonl.gz"
    header = {
        "recording": 1,
        "sport": "cricket",
        "name": "x",
        "start": "2024-03-22T13:53:01Z",
        "fixtures": [58328],
    }
    with gzip.open(recording, "wt") as out:
        out.write(json.dumps(header) + "\n")
    football = tmp_path / "football.jsonl"
    football.write_text(json.dumps({**header, "sport": "football", "fixtures": [81000001]}) + "\n")
    assert fixture_ids((recording, football)) == [cricket_fixture_id(58328), 81000001]
