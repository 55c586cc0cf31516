"""What the fans' API answers: the match view, the event view and a page of events.

These are also the documents the cache holds, so the API can return a cached body as it is. They
are frozen: a view is a snapshot of one version, never edited in place.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

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
    """Goals for each side."""

    home: int
    away: int


class MatchView(_View):
    """One match as a fan sees it.

    `version` is the last log seq folded into the scoreboard (0 before the first entry), the same
    number the live stream carries, so a client can tell whether what it holds is current.
    `updated_at` moves whenever the view does, including clock-only changes that keep the version.
    """

    fixture: FixtureView
    state: MatchState
    score: ScoreView
    minute: int | None
    version: int
    updated_at: datetime


class MatchList(_View):
    """Matches ordered by kick-off. An object rather than a bare array so fields can be added."""

    matches: list[MatchView]


class PlayerView(_View):
    """A player named on an event; either part may be missing from the provider."""

    id: int | None
    name: str | None


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


class EventPage(_View):
    """Events in match-time order; `next_before` fetches the page before this one (null at the start)."""

    events: list[EventView]
    next_before: str | None
