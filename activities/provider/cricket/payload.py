"""Strict pydantic models of the SportMonks Cricket v2 fixture JSON (cricket.md, provider-api.md §6).

The same rules as the football `activities.provider.payload`: only the fields the normaliser reads
are declared and everything else is ignored, so new provider fields never break validation; what
is declared is validated strictly (a bool is not an int, `"3"` is not 3), ids within Postgres
bigint, free text bounded and UTF-8 clean. Floats appear where the real responses have them:
`ball` (0.1) and `runs[].overs` (18.4, 20.0); they must be finite.

Stdlib and pydantic only: safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from activities.provider.payload import Count, LongText, ProviderDatetime, ProviderId, ShortText
from domain.cricket.board import CRICKET_FIXTURE_ID_BASE

# Scoreline stores a cricket fixture at CRICKET_FIXTURE_ID_BASE + id, which must stay a bigint.
CricketFixtureId = Annotated[int, Field(ge=0, le=2**63 - 1 - CRICKET_FIXTURE_ID_BASE)]
# over.ball and overs as floats ("18.4"); a Test innings can run to a few hundred overs.
Overs = Annotated[float, Field(ge=0, le=100_000, allow_inf_nan=False)]
Innings = Annotated[int, Field(ge=1, le=100)]


class _Raw(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class ScoreRow(_Raw):
    """One ball outcome of the `/scores` table, also embedded as a ball's `score`.

    Every column the arithmetic of a delivery needs is required (cricket.md §4): a row without
    them cannot be scored, and guessing a missing `ball` flag would miscount the overs.
    """

    id: ProviderId
    name: ShortText | None = None
    runs: Count
    four: bool = False
    six: bool = False
    bye: Count
    leg_bye: Count
    noball: Count
    noball_runs: Count
    is_wicket: bool
    ball: bool
    out: bool


class RawPlayer(_Raw):
    """An embedded `batsman` or `bowler`: only the name is read."""

    id: ProviderId
    fullname: ShortText | None = None


class RawTeam(_Raw):
    """The embedded `localteam` / `visitorteam`."""

    id: ProviderId
    name: ShortText | None = None
    code: ShortText | None = None
    image_path: LongText | None = None


class RawBall(_Raw):
    """One delivery of `balls`; `batsman_id` is the striker, `team_id` the batting side."""

    id: ProviderId
    team_id: ProviderId | None = None
    ball: Overs
    scoreboard: Literal["S1", "S2", "S3", "S4"]
    batsman_one_on_creeze_id: ProviderId | None = None
    batsman_two_on_creeze_id: ProviderId | None = None
    batsman_id: ProviderId | None = None
    bowler_id: ProviderId | None = None
    batsmanout_id: ProviderId | None = None
    catchstump_id: ProviderId | None = None
    runout_by_id: ProviderId | None = None
    score_id: ProviderId
    score: ScoreRow | None = None
    batsman: RawPlayer | None = None
    bowler: RawPlayer | None = None


class RawRuns(_Raw):
    """One row of the `runs` include: the provider's own total of one innings."""

    inning: Innings
    team_id: ProviderId | None = None
    score: Count | None = None
    wickets: Count | None = None
    overs: Overs | None = None


class RawCricketFixture(_Raw):
    """A fixture with whichever includes were asked for; an absent include stays `None`."""

    id: CricketFixtureId
    league_id: ProviderId | None = None
    season_id: ProviderId | None = None
    localteam_id: ProviderId | None = None
    visitorteam_id: ProviderId | None = None
    starting_at: ProviderDatetime | None = None
    type: ShortText | None = None
    status: ShortText | None = None
    note: LongText | None = None
    toss_won_team_id: ProviderId | None = None
    winner_team_id: ProviderId | None = None
    draw_noresult: ShortText | None = None
    total_overs_played: Count | None = None
    elected: ShortText | None = None
    super_over: bool | None = None
    rpc_target: Count | None = None
    rpc_overs: Overs | None = None
    localteam: RawTeam | None = None
    visitorteam: RawTeam | None = None
    runs: list[RawRuns] | None = None
    balls: list[RawBall] | None = None
