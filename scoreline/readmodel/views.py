"""What the fans' API answers: the match view, the event view and a page of events.

These are also the documents the cache holds, so the API can return a cached body as it is. They
are frozen: a view is a snapshot of one version, never edited in place.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from domain.cricket.board import Dismissal, Milestone, ResultKind, Scoreboard
from domain.snapshot import ItemType, MatchState, Side, Stream


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class TeamView(_View):
    """A participant as the fixture row stores it; a desk-made fixture's teams have no provider id."""

    id: int | None = None
    name: str | None = None
    short_code: str | None = None
    image: str | None = None


class CompetitionView(_View):
    """The competition a fixture belongs to; a desk-made fixture's competition has no provider id."""

    id: int | None = None
    name: str | None = None


class FixtureView(_View):
    """The fixture's fixed facts; they change only when the provider reschedules or renames."""

    id: int
    name: str
    sport: str
    kickoff: datetime | None
    home: TeamView | None
    away: TeamView | None
    competition: CompetitionView | None
    league_id: int | None
    season_id: int | None


class ScoreView(_View):
    """Goals for each side; in cricket, each side's runs in its latest innings."""

    home: int
    away: int


class ExtrasView(_View):
    """An innings' extras by kind, and their sum."""

    wides: int
    no_balls: int
    byes: int
    leg_byes: int
    penalties: int
    total: int


class InningsView(_View):
    """One innings (S1…S4) as the board computed it from the balls; `overs` is "18.4"."""

    scoreboard: Scoreboard
    number: int
    side: Side | None
    team_id: int | None
    runs: int
    wickets: int
    overs: str
    extras: ExtrasView
    target: int | None
    super_over: bool


class BatterView(_View):
    """A batter at the crease: runs and balls faced this innings."""

    id: int
    name: str | None
    runs: int
    balls: int
    fours: int
    sixes: int
    on_strike: bool


class BowlerView(_View):
    """The bowler of the current (or last) over; `overs` is "3.5"."""

    id: int
    name: str | None
    overs: str
    maidens: int
    runs: int
    wickets: int


class ResultView(_View):
    """How a cricket match ended; `text` is the provider's note, shown as is."""

    kind: ResultKind
    winner_team_id: int | None
    side: Side | None
    text: str | None


class CricketPlay(_View):
    """The cricket part of a match, every field None for football (and for a cricket match whose
    scoreboard holds no board yet).

    Shared by the match view and the partner feeds' scoreboard, so both say the same. In a chase
    that is still open, `need` is the runs still wanted and, when the innings has an overs limit,
    `balls_left` and `required_rate` (runs per over) follow from it; otherwise they are None.
    """

    format: str | None = None
    innings: list[InningsView] | None = None
    batting_side: Side | None = None
    batters: list[BatterView] | None = None
    """Striker first."""
    bowler: BowlerView | None = None
    last_six: list[str] | None = None
    """The last six balls as the strip shows them, oldest first: `W`, `4`, `1lb`, `2wd` …"""
    target: int | None = None
    need: int | None = None
    balls_left: int | None = None
    required_rate: float | None = None
    stumps_day: int | None = None
    result: ResultView | None = None

    def play_fields(self) -> dict[str, Any]:
        """These fields alone, to build another `CricketPlay` from this one."""
        return {name: getattr(self, name) for name in CricketPlay.model_fields}


class _MatchFacts(_View):
    fixture: FixtureView
    state: MatchState
    score: ScoreView
    minute: int | None
    version: int
    updated_at: datetime


class MatchView(CricketPlay, _MatchFacts):
    """One match as a fan sees it.

    `version` is the last log seq folded into the scoreboard (0 before the first entry), the same
    number the live stream carries, so a client can tell whether what it holds is current.
    `updated_at` moves whenever the view does, including clock-only changes that keep the version.
    (Pydantic puts the last base's fields first, so the JSON starts with the match's facts and
    ends with the cricket ones.)
    """


class MatchList(_View):
    """Matches ordered by kick-off. An object rather than a bare array so fields can be added."""

    matches: list[MatchView]


class PlayerView(_View):
    """A player named on an event; either part may be missing from the provider."""

    id: int | None
    name: str | None


class BallExtrasView(_View):
    """A delivery's extras by kind, and their sum."""

    wides: int
    no_balls: int
    byes: int
    leg_byes: int
    total: int


class WicketView(_View):
    """The dismissal on a ball; `bowler_credited` says whether it counts as the bowler's wicket."""

    kind: Dismissal | None
    batter_id: int | None
    fielder_id: int | None
    bowler_credited: bool


class BallView(_View):
    """One delivery, on an event of the `balls` stream.

    `over` is 0-based and `ball` the number the provider shows, so `notation` is "18.4" as scorers
    write it; `strip` is the ball as the last-six strip shows it.
    """

    scoreboard: Scoreboard
    innings: int
    over: int
    ball: int
    notation: str
    batter: PlayerView | None
    bowler: PlayerView | None
    non_striker_id: int | None
    runs: int
    batter_runs: int
    extras: BallExtrasView
    legal: bool
    four: bool
    six: bool
    wicket: WicketView | None
    outcome: str | None
    strip: str
    milestone: Milestone | None


def player_view(player_id: int | None, name: str | None) -> PlayerView | None:
    """The player named by a stored body, or None when it names no one."""
    return None if player_id is None and name is None else PlayerView(id=player_id, name=name)


class EventView(_View):
    """One provider event, corrections included.

    `seq` is the log entry that first recorded the event (null only if the log has none), so it
    never changes when a later correction amends or retracts the event; `amended` and `retracted`
    say that one did. Retracted events stay in the list, flagged, because the log is append-only and
    a client that showed one must be told to grey it out.
    """

    seq: int | None
    stream: Stream
    provider_event_id: int
    type: ItemType
    provider_type_id: int | None
    minute: int | None
    extra_minute: int | None
    sort_order: int | None
    side: Side | None
    player: PlayerView | None
    related_player: PlayerView | None
    result: str | None
    info: str | None
    retracted: bool
    amended: bool
    ball: BallView | None = None
    """The delivery, on a cricket ball (None for every other event)."""


class EventPage(_View):
    """Events in match-time order; `next_before` fetches the page before this one (null at the start)."""

    events: list[EventView]
    next_before: str | None
