"""The domain view of one provider fixture: what the ingest compares poll after poll.

A `Snapshot` is built by `activities.provider.normaliser.normalise_fixture` from a SportMonks fixture. It is
frozen, compact and JSON-serialisable (`model_dump(mode="json")` and back with `model_validate`), so
it can cross a Temporal activity or workflow boundary with the pydantic data converter.

Relations are tri-state on purpose: a relation the provider did not include (an include it did not
honour) is `None`, an included but empty one is an empty tuple. The ingest must never retract
anything on the strength of a `None`.

This module imports only the stdlib and pydantic: it is safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime

from domain.cricket.board import BallDetail, CricketBoard
from domain.frozen import Frozen


class Sport(StrEnum):
    """The sports Scoreline covers: SportMonks Football v3 and Cricket v2."""

    FOOTBALL = "football"
    CRICKET = "cricket"


class MatchState(StrEnum):
    """The normalised fixture state; the provider's own id and name travel beside it."""

    SCHEDULED = "scheduled"
    TO_BE_ANNOUNCED = "to_be_announced"
    LIVE_FIRST_HALF = "live_first_half"
    HALF_TIME = "half_time"
    LIVE_SECOND_HALF = "live_second_half"
    EXTRA_TIME_BREAK = "extra_time_break"
    EXTRA_TIME = "extra_time"
    PENALTIES_BREAK = "penalties_break"
    PENALTIES = "penalties"
    FINISHED = "finished"
    AWARDED = "awarded"
    POSTPONED = "postponed"
    CANCELLED = "cancelled"
    ABANDONED = "abandoned"
    SUSPENDED = "suspended"
    DELAYED = "delayed"
    INTERRUPTED = "interrupted"
    AWAITING_UPDATES = "awaiting_updates"
    PENDING = "pending"
    DELETED = "deleted"
    UNKNOWN = "unknown"
    # cricket (the shared ones above: scheduled, delayed, interrupted, finished, abandoned,
    # cancelled, postponed)
    INNINGS_1 = "innings_1"
    INNINGS_2 = "innings_2"
    INNINGS_3 = "innings_3"
    INNINGS_4 = "innings_4"
    INNINGS_BREAK = "innings_break"
    LUNCH = "lunch"
    TEA = "tea"
    DINNER = "dinner"
    STUMPS = "stumps"
    """Close of a day's play in a multi-day match; the day is on the board (`stumps_day`)."""


class FinishedAfter(StrEnum):
    """How a finished match was decided; set only when the state is `finished`."""

    REGULAR_TIME = "regular_time"
    EXTRA_TIME = "extra_time"
    PENALTIES = "penalties"


class Side(StrEnum):
    """Which participant something belongs to."""

    HOME = "home"
    AWAY = "away"


class Stream(StrEnum):
    """The provider's id spaces: football's `events` and curated `timeline`, cricket's `balls`."""

    EVENTS = "events"
    TIMELINE = "timeline"
    BALLS = "balls"


class ItemType(StrEnum):
    """Domain type of an event or timeline item. `OTHER` keeps the provider type id on the item."""

    GOAL = "goal"
    OWN_GOAL = "own_goal"
    PENALTY_GOAL = "penalty_goal"
    MISSED_PENALTY = "missed_penalty"
    YELLOW_CARD = "yellow_card"
    RED_CARD = "red_card"
    SECOND_YELLOW = "second_yellow"
    SUBSTITUTION = "substitution"
    VAR = "var"
    VAR_CARD = "var_card"
    PENALTY_SHOOTOUT_GOAL = "penalty_shootout_goal"
    PENALTY_SHOOTOUT_MISS = "penalty_shootout_miss"
    CORNER = "corner"
    SHOT_ON_TARGET = "shot_on_target"
    SHOT_OFF_TARGET = "shot_off_target"
    OFFSIDE = "offside"
    DELAY_START = "delay_start"
    DELAY_END = "delay_end"
    BALL = "ball"
    WICKET = "wicket"
    """A ball on which a batter was dismissed."""
    OTHER = "other"


class PeriodKind(StrEnum):
    """Domain kind of a played period."""

    FIRST_HALF = "first_half"
    SECOND_HALF = "second_half"
    EXTRA_TIME = "extra_time"
    EXTRA_TIME_FIRST_HALF = "extra_time_first_half"
    EXTRA_TIME_SECOND_HALF = "extra_time_second_half"
    PENALTIES = "penalties"
    OTHER = "other"


class Team(Frozen):
    """A participant as the provider names it."""

    id: int
    name: str | None = None
    short_code: str | None = None
    image_path: str | None = None
    winner: bool | None = None


class Participants(Frozen):
    """Home and away; either is `None` when no participant carried that location."""

    home: Team | None = None
    away: Team | None = None


class ScorePair(Frozen):
    """Goals for each side. Built only when the provider sent a row for both sides."""

    home: int
    away: int


class Scores(Frozen):
    """The running score and the period scores; each is `None` when the provider sent no such rows.

    `current` includes extra time and excludes the shootout. `second_half` is the provider's
    `2ND_HALF` row (believed cumulative at 90'); `second_half_only` counts goals in that half.
    """

    current: ScorePair | None = None
    first_half: ScorePair | None = None
    second_half: ScorePair | None = None
    second_half_only: ScorePair | None = None
    extra_time: ScorePair | None = None
    penalties: ScorePair | None = None


class Period(Frozen):
    """One played (or running) period; `minute` is the cumulative match minute."""

    provider_id: int
    kind: PeriodKind
    provider_type_id: int
    started_at: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None
    ticking: bool = False
    minute: int | None = None
    second: int | None = None
    time_added: int | None = None


class Item(Frozen):
    """One event or timeline record, identified by `key` = `(stream, provider_id)`.

    For a substitution `player_*` is the player coming on and `related_player_*` the one going off;
    for a goal `related_player_*` is the assist. `side` is `None` when the participant is unknown.
    """

    stream: Stream
    provider_id: int
    type: ItemType
    provider_type_id: int
    minute: int | None = None
    extra_minute: int | None = None
    side: Side | None = None
    participant_id: int | None = None
    player_id: int | None = None
    player_name: str | None = None
    related_player_id: int | None = None
    related_player_name: str | None = None
    result: str | None = None
    info: str | None = None
    addition: str | None = None
    sort_order: int | None = None
    rescinded: bool = False
    ball: BallDetail | None = None
    """The delivery, on an item of the `balls` stream (player = striker, related player = bowler)."""

    @property
    def key(self) -> tuple[Stream, int]:
        """The identity the ingest stores the item under."""
        return (self.stream, self.provider_id)


class Snapshot(Frozen):
    """One fixture as the provider showed it at one moment, in domain terms.

    `events` and `timeline` are de-duplicated by provider id (the last occurrence wins) and ordered
    canonically (match minute, extra minute, provider id; items without a minute last), so two
    responses that differ only in order give equal snapshots.
    """

    sport: Sport
    fixture_id: int
    league_id: int | None = None
    season_id: int | None = None
    name: str | None = None
    kickoff: AwareDatetime | None = None
    state: MatchState
    finished_after: FinishedAfter | None = None
    provider_state_id: int | None = None
    provider_state: str | None = None
    result_info: str | None = None
    minute: int | None = None
    participants: Participants | None = None
    scores: Scores | None = None
    periods: tuple[Period, ...] | None = None
    events: tuple[Item, ...] | None = None
    timeline: tuple[Item, ...] | None = None
    balls: tuple[Item, ...] | None = None
    """Cricket: every ball, in bowling order (by provider id)."""
    cricket: CricketBoard | None = None
    """Cricket: the innings, the batters and bowler, the target and the result, from the balls."""

    def items(self) -> tuple[Item, ...]:
        """Every present item of every stream (absent relations contribute nothing)."""
        return (self.events or ()) + (self.timeline or ()) + (self.balls or ())

    def present_streams(self) -> frozenset[Stream]:
        """The streams whose relation was in the payload; only these may be diffed for removals."""
        present = set()
        if self.events is not None:
            present.add(Stream.EVENTS)
        if self.timeline is not None:
            present.add(Stream.TIMELINE)
        if self.balls is not None:
            present.add(Stream.BALLS)
        return frozenset(present)


__all__ = [
    "FinishedAfter",
    "Item",
    "ItemType",
    "MatchState",
    "Participants",
    "Period",
    "PeriodKind",
    "ScorePair",
    "Scores",
    "Side",
    "Snapshot",
    "Sport",
    "Stream",
    "Team",
]
