"""What the documents say: the content that is hashed, without versions or timestamps of its own.

The fixture, event and score shapes are the fans' API views (`scoreline.readmodel.views`), so a
partner and an app read the same fields. The clock (`minute`) is left out on purpose: it moves
every minute without a log entry, so a document that carried it would either be stale or take a
new version every minute for nothing; partners get state, score and events, which only ever change
through the log.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict

from domain.snapshot import MatchState
from scoreline.readmodel.views import CricketPlay, EventView, FixtureView, ScoreView


class _Content(BaseModel):
    model_config = ConfigDict(frozen=True)


class Scoreboard(CricketPlay, _Content):
    """State and score as the log last folded them; `periods` is sport-specific (half scores …).

    A cricket match's innings, batters, bowler, last six, chase and result are the match view's
    own fields (`CricketPlay`), null for football, so a partner and an app read the same board.
    """

    state: MatchState
    score: ScoreView
    periods: dict[str, Any]
    finished_after: str | None


class MatchContent(_Content):
    """`match/{fixture_id}`: events in match-time order, retracted ones flagged rather than dropped."""

    competition_id: int | None
    fixture: FixtureView
    scoreboard: Scoreboard
    events: list[EventView]


class FixtureEntry(_Content):
    """One fixture of a day, as `fixtures/{date}` lists it."""

    competition_id: int | None
    fixture: FixtureView
    state: MatchState
    score: ScoreView


class FixturesContent(_Content):
    """`fixtures/{date}`: the fixtures kicking off that UTC day, by kick-off then id."""

    date: date
    fixtures: list[FixtureEntry]


def competition_of(fixture: FixtureView) -> int | None:
    """The competition a partner's grant is checked against.

    The fixture's `competition` object when the row has one; otherwise its league, which is what a
    SportMonks fixture belongs to (the ingest fills `league_id`, not `competition`).
    """
    if fixture.competition is not None:
        return fixture.competition.id
    return fixture.league_id
