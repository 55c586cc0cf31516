"""The cricket models shared by the normaliser, the ingest, the read views, the feeds and the pushes.

One ball is a `BallDetail` on an `Item` of the `balls` stream; the whole match at one moment is a
`CricketBoard` on the `Snapshot`. A desk-scored match is shown through the same board, so a club
match scored by a desk looks exactly like a provider match.

Everything here is derived from the balls (the `runs` include is only checked against them): the
balls are what the provider edits in place, so a board computed from them follows every edit.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

CRICKET_FIXTURE_ID_BASE = 2_000_000_000_000
"""Cricket fixture ids live above this in Scoreline's id space.

Football v3 and Cricket v2 number their fixtures independently (a cricket 58328 and a football
58328 can both exist), while a fixture row, a workflow id and every API path use one id. Desk
fixtures start at 10**12 (`scoreline.db.tables.desk_fixture_id`); cricket takes 2·10**12 upward."""


def cricket_fixture_id(provider_id: int) -> int:
    """Scoreline's id of the provider's cricket fixture `provider_id`."""
    return CRICKET_FIXTURE_ID_BASE + provider_id


def cricket_provider_id(fixture_id: int) -> int | None:
    """The provider's cricket fixture id, or None when `fixture_id` is not a cricket provider id."""
    if fixture_id < CRICKET_FIXTURE_ID_BASE:
        return None
    return fixture_id - CRICKET_FIXTURE_ID_BASE


class _Frozen(BaseModel):
    # Unknown keys are ignored: a board stored by a newer build must still be read by an older
    # one during a rolling deploy (the read views parse stored boards with these models).
    model_config = ConfigDict(frozen=True, extra="ignore")


class Dismissal(StrEnum):
    """How a batter got out; `OTHER` when the provider's score row names something else."""

    BOWLED = "bowled"
    CAUGHT = "caught"
    LBW = "lbw"
    STUMPED = "stumped"
    RUN_OUT = "run_out"
    HIT_WICKET = "hit_wicket"
    RETIRED = "retired"
    OTHER = "other"


BOWLER_CREDITED = frozenset(
    {Dismissal.BOWLED, Dismissal.CAUGHT, Dismissal.LBW, Dismissal.STUMPED, Dismissal.HIT_WICKET}
)
"""Dismissals that count as the bowler's wicket (the provider's `is_wicket` is true for all of them)."""

Milestone = Literal["fifty", "hundred"]
ResultKind = Literal["win", "tie", "no_result", "draw"]
Scoreboard = Literal["S1", "S2", "S3", "S4"]


class BallDetail(_Frozen):
    """One delivery as bowled (or as last edited).

    `over` is 0-based and `ball` the number the provider shows (a wide or no-ball repeats the next
    legal ball's number), so `notation` is "18.4" exactly as scorers write it. The extras columns
    count the runs of each kind on this delivery; `runs` is the delivery's total.
    """

    scoreboard: Scoreboard
    innings: int
    over: int
    ball: int
    batter_id: int | None = None
    non_striker_id: int | None = None
    bowler_id: int | None = None
    score_id: int
    outcome: str | None = None
    """The provider's name of the score row ("1 Leg Bye"); None for a score id it never described."""
    known: bool = True
    """False when the score id is one the provider never described: kept, counted as nothing."""
    runs: int = 0
    batter_runs: int = 0
    wides: int = 0
    no_balls: int = 0
    byes: int = 0
    leg_byes: int = 0
    legal: bool = True
    four: bool = False
    six: bool = False
    wicket: bool = False
    dismissal: Dismissal | None = None
    out_batter_id: int | None = None
    fielder_id: int | None = None
    bowler_wicket: bool = False
    milestone: Milestone | None = None
    """The striker reached fifty or a hundred with this ball."""

    @property
    def notation(self) -> str:
        return f"{self.over}.{self.ball}"

    @property
    def extras(self) -> int:
        return self.wides + self.no_balls + self.byes + self.leg_byes

    @property
    def strip(self) -> str:
        """The ball as the last-six strip shows it: `W`, `4`, `6`, `0`, `1lb`, `2wd`, `1nb` …"""
        if self.wicket:
            return "W"
        if self.wides:
            return f"{self.wides}wd"
        if self.no_balls:
            return f"{self.runs}nb"
        if self.leg_byes:
            return f"{self.leg_byes}lb"
        if self.byes:
            return f"{self.byes}b"
        return str(self.batter_runs)


class Extras(_Frozen):
    """An innings' extras by kind (a no-ball's penalty run is a no-ball extra)."""

    wides: int = 0
    no_balls: int = 0
    byes: int = 0
    leg_byes: int = 0
    penalties: int = 0

    @property
    def total(self) -> int:
        return self.wides + self.no_balls + self.byes + self.leg_byes + self.penalties


class InningsTotal(_Frozen):
    """One innings (S1…S4), computed from its balls.

    `provider_runs` / `provider_wickets` are the provider's own `runs` include for the innings, kept
    so a disagreement with the balls is visible (`agrees`); the balls win.
    """

    scoreboard: Scoreboard
    number: int
    team_id: int | None = None
    side: Literal["home", "away"] | None = None
    runs: int = 0
    wickets: int = 0
    legal_balls: int = 0
    extras: Extras = Extras()
    super_over: bool = False
    target: int | None = None
    """Runs the batting side needs to win, in a chase (revised when the provider says so)."""
    provider_runs: int | None = None
    provider_wickets: int | None = None

    @property
    def overs(self) -> str:
        """Completed overs and balls, "18.4"."""
        return f"{self.legal_balls // 6}.{self.legal_balls % 6}"

    @property
    def agrees(self) -> bool:
        """The balls and the provider's `runs` include say the same (or the provider said nothing)."""
        return self.provider_runs in (None, self.runs) and self.provider_wickets in (None, self.wickets)


class BatterFigures(_Frozen):
    """A batter at the crease: runs and balls faced this innings."""

    id: int
    name: str | None = None
    runs: int = 0
    balls: int = 0
    fours: int = 0
    sixes: int = 0


class BowlerFigures(_Frozen):
    """The bowler of the current (or last) over: overs-maidens-runs-wickets, `3.5-0-28-1`."""

    id: int
    name: str | None = None
    legal_balls: int = 0
    maidens: int = 0
    runs: int = 0
    wickets: int = 0

    @property
    def overs(self) -> str:
        return f"{self.legal_balls // 6}.{self.legal_balls % 6}"

    @property
    def figures(self) -> str:
        return f"{self.overs}-{self.maidens}-{self.runs}-{self.wickets}"


class CricketResult(_Frozen):
    """How the match ended; `text` is the provider's note, shown as is and never parsed."""

    kind: ResultKind
    winner_team_id: int | None = None
    side: Literal["home", "away"] | None = None
    text: str | None = None


class CricketBoard(_Frozen):
    """The whole match at one moment: every output (view, stream, feed, push) shows this."""

    format: str | None = None
    """The provider's type: `T20`, `T20I`, `ODI`, `Test` …"""
    scheduled_overs: int | None = None
    innings: tuple[InningsTotal, ...] = ()
    batting_side: Literal["home", "away"] | None = None
    striker: BatterFigures | None = None
    non_striker: BatterFigures | None = None
    bowler: BowlerFigures | None = None
    last_six: tuple[str, ...] = ()
    target: int | None = None
    target_overs: int | None = None
    """Overs the chase has when the target was revised (a rain-reduced match)."""
    revised: bool = False
    result: CricketResult | None = None
    stumps_day: int | None = None
    """The day that ended at stumps (`Stump Day 2` → 2), while the state is `stumps`."""
    super_over: bool = False
    toss_won_team_id: int | None = None
    elected: str | None = None

    def latest(self, side: Literal["home", "away"]) -> InningsTotal | None:
        """The side's latest innings (the super over's, once one is bowled)."""
        return next((innings for innings in reversed(self.innings) if innings.side == side), None)

    def runs_of(self, side: Literal["home", "away"]) -> int:
        """The side's runs in its latest innings: the `score` every output shows."""
        latest = self.latest(side)
        return latest.runs if latest is not None else 0

    @property
    def current(self) -> InningsTotal | None:
        return self.innings[-1] if self.innings else None

    def with_facts_of(self, fresh: CricketBoard) -> CricketBoard:
        """This board's ball-derived figures with `fresh`'s status-derived facts.

        For an answer that came without its balls: its innings are only the provider's `runs`
        include and it knows no batters, bowler or last six, so those stay as the balls showed
        them; the result, the revised target, stumps and the toss are the answer's own.
        """
        return self.model_copy(
            update={
                "format": fresh.format or self.format,
                "scheduled_overs": fresh.scheduled_overs or self.scheduled_overs,
                "target_overs": fresh.target_overs,
                "revised": fresh.revised,
                "target": fresh.target if fresh.revised else self.target,
                "result": fresh.result,
                "stumps_day": fresh.stumps_day,
                "super_over": fresh.super_over,
                "toss_won_team_id": fresh.toss_won_team_id,
                "elected": fresh.elected,
            }
        )
