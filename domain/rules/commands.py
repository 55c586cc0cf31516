"""Desk command codes, the shape of each command's input, and what each command touches.

`parse_command(code, input)` is the one gate for shapes: the HTTP API calls it to answer 422 and the
match workflow's update validator calls it to refuse before anything reaches history. Inputs are
strict: no coercion ("3" is not 3, 3.0 is not 3, true is not 1), no unknown fields, bounded numbers
and strings. Whether a well-shaped command makes sense *now* is the sport rules' business
(`domain.rules.check`).

This module imports only the stdlib and pydantic: it is safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

MAX_ID = 2**63 - 1
"""Ids and seqs are Postgres bigints."""

Side = Literal["home", "away"]
FootballPeriod = Literal["1H", "2H", "ET1", "ET2", "PEN"]
WicketKind = Literal[
    "bowled",
    "caught",
    "lbw",
    "run_out",
    "stumped",
    "hit_wicket",
    "obstructing_field",
    "hit_ball_twice",
]
"""Dismissals that happen on a delivery. Retired out and timed out happen between balls: not here."""

Id = Annotated[int, Field(gt=0, le=MAX_ID)]
Minute = Annotated[int, Field(ge=0, le=150)]
ExtraMinute = Annotated[int, Field(ge=0, le=30)]
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def is_storable(text: str) -> bool:
    """Whether Postgres can store `text`: its `text` and `jsonb` cannot hold NUL, and a lone
    surrogate has no UTF-8 encoding, so a write carrying either fails every time it runs."""
    return _UNSTORABLE.search(text) is None


def storable(text: str) -> str:
    """`text` if Postgres can store it (`is_storable`).

    Raises:
        ValueError: `text` holds a NUL or a lone surrogate.
    """
    if not is_storable(text):
        raise ValueError("text cannot contain NUL (U+0000) or a lone surrogate (U+D800-U+DFFF)")
    return text


StorableText = Annotated[str, AfterValidator(storable)]
"""Free text that goes into Postgres. Refused wherever it is validated: by the API, and by the
`submit` Update (its validator, or the decoding of its argument) before anything reaches history."""
CommentaryText = Annotated[StorableText, Field(min_length=1, max_length=1000)]


class Code(StrEnum):
    """Every command code a desk (or operator) may send."""

    FOOTBALL_PERIOD_START = "football.period_start"
    FOOTBALL_PERIOD_END = "football.period_end"
    FOOTBALL_GOAL = "football.goal"
    FOOTBALL_MISSED_PENALTY = "football.missed_penalty"
    FOOTBALL_CARD = "football.card"
    FOOTBALL_SUBSTITUTION = "football.substitution"
    FOOTBALL_SHOOTOUT_KICK = "football.shootout_kick"
    FOOTBALL_CORNER = "football.corner"
    MATCH_COMMENTARY = "match.commentary"
    MATCH_VAR = "match.var"
    MATCH_UNDO = "match.undo"
    MATCH_SET_MODE = "match.set_mode"
    CRICKET_INNINGS_START = "cricket.innings_start"
    CRICKET_BALL = "cricket.ball"
    CRICKET_OVER_END = "cricket.over_end"
    CRICKET_BOWLER_CHANGE = "cricket.bowler_change"
    CRICKET_INNINGS_END = "cricket.innings_end"
    CRICKET_DECLARE = "cricket.declare"


class Touch(StrEnum):
    """What a command changes; the workflow compares `saw` with the last seq that touched it."""

    SCORE = "score"
    CARDS = "cards"
    LINEUP = "lineup"
    PERIODS = "periods"
    STATS = "stats"
    SHOOTOUT = "shootout"
    INNINGS = "innings"
    MODE = "mode"


class CommandShapeError(ValueError):
    """An unknown code or a badly shaped input. `path` names the first bad field (`input.minute`)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


COMMAND_SHAPE_ERROR = CommandShapeError.__name__
"""The `ApplicationError` type the `submit` Update's validator refuses a bad shape with."""


class _Input(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    code: ClassVar[Code]


# --- football -------------------------------------------------------------------------------------


class FootballPeriodStart(_Input):
    """`football.period_start`: the referee starts a half, a half of extra time or the shootout."""

    code: ClassVar[Code] = Code.FOOTBALL_PERIOD_START
    period: FootballPeriod


class FootballPeriodEnd(_Input):
    """`football.period_end`: the running period ends."""

    code: ClassVar[Code] = Code.FOOTBALL_PERIOD_END
    period: FootballPeriod


class FootballGoal(_Input):
    """`football.goal`. `side` is the side the goal counts for, also for an own goal (then
    `player_id` is the opponent who put it in)."""

    code: ClassVar[Code] = Code.FOOTBALL_GOAL
    side: Side
    minute: Minute
    extra_minute: ExtraMinute | None = None
    player_id: Id | None = None
    assist_id: Id | None = None
    kind: Literal["open_play", "penalty", "own_goal"]


class FootballMissedPenalty(_Input):
    """`football.missed_penalty` (in play, not in the shootout). `side` is the side that missed."""

    code: ClassVar[Code] = Code.FOOTBALL_MISSED_PENALTY
    side: Side
    minute: Minute
    extra_minute: ExtraMinute | None = None
    player_id: Id | None = None


class FootballCard(_Input):
    """`football.card`. A `second_yellow` sends the player off, like a `red`."""

    code: ClassVar[Code] = Code.FOOTBALL_CARD
    side: Side
    minute: Minute
    extra_minute: ExtraMinute | None = None
    player_id: Id
    color: Literal["yellow", "second_yellow", "red"]


class FootballSubstitution(_Input):
    """`football.substitution`: `player_on` replaces `player_off`."""

    code: ClassVar[Code] = Code.FOOTBALL_SUBSTITUTION
    side: Side
    minute: Minute
    extra_minute: ExtraMinute | None = None
    player_on: Id
    player_off: Id


class FootballShootoutKick(_Input):
    """`football.shootout_kick`: one kick of the penalty shootout."""

    code: ClassVar[Code] = Code.FOOTBALL_SHOOTOUT_KICK
    side: Side
    player_id: Id | None = None
    scored: bool


class FootballCorner(_Input):
    """`football.corner`, awarded to `side`."""

    code: ClassVar[Code] = Code.FOOTBALL_CORNER
    side: Side
    minute: Minute
    extra_minute: ExtraMinute | None = None


# --- both sports ----------------------------------------------------------------------------------


class MatchCommentary(_Input):
    """`match.commentary`: a line of text; changes nothing else."""

    code: ClassVar[Code] = Code.MATCH_COMMENTARY
    text: CommentaryText
    minute: Minute | None = None
    extra_minute: ExtraMinute | None = None


class MatchVar(_Input):
    """`match.var`: the outcome of a VAR review of the goal or card logged at `target_seq`."""

    code: ClassVar[Code] = Code.MATCH_VAR
    target_seq: Id
    decision: Literal["overturned", "confirmed"]


class MatchUndo(_Input):
    """`match.undo`: take back the command logged at `target_seq` (it must be the newest undoable one).

    In cricket this is also "undo last ball".
    """

    code: ClassVar[Code] = Code.MATCH_UNDO
    target_seq: Id


class MatchSetMode(_Input):
    """`match.set_mode` (operators only): who owns the score from now on."""

    code: ClassVar[Code] = Code.MATCH_SET_MODE
    mode: Literal["provider", "desk"]


# --- cricket --------------------------------------------------------------------------------------


class CricketInningsStart(_Input):
    """`cricket.innings_start`: `batting` goes in; openers and bowler when the desk knows them."""

    code: ClassVar[Code] = Code.CRICKET_INNINGS_START
    batting: Side
    striker_id: Id | None = None
    non_striker_id: Id | None = None
    bowler_id: Id | None = None


class CricketExtra(_Input):
    """Extras on a delivery. A wide or no-ball adds its one-run penalty by itself; `runs` are the
    runs run (or the boundary) on top of it. Byes and leg byes need at least one run."""

    kind: Literal["wide", "no_ball", "bye", "leg_bye"]
    runs: int = Field(default=0, ge=0, le=7)

    @field_validator("runs")
    @classmethod
    def _byes_need_runs(cls, runs: int, info: ValidationInfo) -> int:
        if runs == 0 and info.data.get("kind") in ("bye", "leg_bye"):
            raise ValueError("byes and leg byes need at least one run")
        return runs


class CricketWicket(_Input):
    """A dismissal on a delivery. `batter_out` is the batter's role when the ball was bowled."""

    kind: WicketKind
    batter_out: Literal["striker", "non_striker"] = "striker"
    new_batter_id: Id | None = None
    fielder_id: Id | None = None


class CricketBall(_Input):
    """`cricket.ball`: one delivery. `runs` are off the bat (0..6); `boundary` says it was a four or
    a six; `extra` and `wicket` are optional."""

    code: ClassVar[Code] = Code.CRICKET_BALL
    runs: int = Field(default=0, ge=0, le=6)
    boundary: Literal["four", "six"] | None = None
    extra: CricketExtra | None = None
    wicket: CricketWicket | None = None

    @field_validator("boundary")
    @classmethod
    def _boundary_matches_runs(cls, boundary: str | None, info: ValidationInfo) -> str | None:
        expected = {"four": 4, "six": 6}
        if boundary is not None and info.data.get("runs") not in (None, expected[boundary]):
            raise ValueError(f"a {boundary} is {expected[boundary]} runs off the bat")
        return boundary

    @field_validator("extra")
    @classmethod
    def _no_bat_runs_on_wides_and_byes(
        cls, extra: CricketExtra | None, info: ValidationInfo
    ) -> CricketExtra | None:
        if extra is not None and extra.kind != "no_ball" and info.data.get("runs", 0) != 0:
            raise ValueError(f"no runs off the bat on a {extra.kind.replace('_', ' ')}")
        return extra

    @property
    def legal(self) -> bool:
        """Counts towards the six balls of the over (wides and no-balls do not)."""
        return self.extra is None or self.extra.kind in ("bye", "leg_bye")


class CricketOverEnd(_Input):
    """`cricket.over_end`: the umpire calls "over" after six legal balls."""

    code: ClassVar[Code] = Code.CRICKET_OVER_END


class CricketBowlerChange(_Input):
    """`cricket.bowler_change`: `bowler_id` bowls from now on (a new over, or finishing one)."""

    code: ClassVar[Code] = Code.CRICKET_BOWLER_CHANGE
    bowler_id: Id


class CricketInningsEnd(_Input):
    """`cricket.innings_end`: all out, overs used up, target reached… `match_over` ends the match
    early (an innings victory, or time)."""

    code: ClassVar[Code] = Code.CRICKET_INNINGS_END
    match_over: bool = False


class CricketDeclare(_Input):
    """`cricket.declare`: the batting captain closes the innings (multi-day matches only)."""

    code: ClassVar[Code] = Code.CRICKET_DECLARE


FootballCommand = (
    FootballPeriodStart
    | FootballPeriodEnd
    | FootballGoal
    | FootballMissedPenalty
    | FootballCard
    | FootballSubstitution
    | FootballShootoutKick
    | FootballCorner
)
CricketCommand = (
    CricketInningsStart
    | CricketBall
    | CricketOverEnd
    | CricketBowlerChange
    | CricketInningsEnd
    | CricketDeclare
)
MatchCommand = MatchCommentary | MatchVar | MatchUndo | MatchSetMode
Command = FootballCommand | CricketCommand | MatchCommand

COMMANDS: dict[Code, type[Command]] = {
    cls.code: cls
    for cls in (
        FootballPeriodStart,
        FootballPeriodEnd,
        FootballGoal,
        FootballMissedPenalty,
        FootballCard,
        FootballSubstitution,
        FootballShootoutKick,
        FootballCorner,
        MatchCommentary,
        MatchVar,
        MatchUndo,
        MatchSetMode,
        CricketInningsStart,
        CricketBall,
        CricketOverEnd,
        CricketBowlerChange,
        CricketInningsEnd,
        CricketDeclare,
    )
}
"""The input model of every code."""

ADDITIVE_CODES = frozenset({Code.MATCH_COMMENTARY})
"""Pure additions: they change no state, so they skip the version conflict check."""

_STATIC_TOUCHES: dict[Code, frozenset[Touch]] = {
    Code.FOOTBALL_PERIOD_START: frozenset({Touch.PERIODS}),
    Code.FOOTBALL_PERIOD_END: frozenset({Touch.PERIODS}),
    Code.FOOTBALL_GOAL: frozenset({Touch.SCORE}),
    Code.FOOTBALL_MISSED_PENALTY: frozenset({Touch.STATS}),
    Code.FOOTBALL_SUBSTITUTION: frozenset({Touch.LINEUP}),
    Code.FOOTBALL_SHOOTOUT_KICK: frozenset({Touch.SHOOTOUT}),
    Code.FOOTBALL_CORNER: frozenset({Touch.STATS}),
    Code.MATCH_COMMENTARY: frozenset(),
    Code.MATCH_SET_MODE: frozenset({Touch.MODE}),
    Code.CRICKET_INNINGS_START: frozenset({Touch.INNINGS}),
    Code.CRICKET_BALL: frozenset({Touch.SCORE, Touch.INNINGS}),
    Code.CRICKET_OVER_END: frozenset({Touch.INNINGS}),
    Code.CRICKET_BOWLER_CHANGE: frozenset({Touch.INNINGS}),
    Code.CRICKET_INNINGS_END: frozenset({Touch.INNINGS}),
    Code.CRICKET_DECLARE: frozenset({Touch.INNINGS}),
}


def command_touches(command: Command) -> frozenset[Touch]:
    """What `command` changes, as far as the command alone tells.

    `match.var` and `match.undo` touch whatever their target touched; that needs the rule state, so
    they give an empty set here: use `domain.rules.touches(state, command)`.
    """
    if isinstance(command, FootballCard):
        return card_touches(command.color)
    return _STATIC_TOUCHES.get(command.code, frozenset())


def card_touches(color: str) -> frozenset[Touch]:
    """A yellow changes the cards; a sending-off also changes who is on the pitch."""
    return frozenset({Touch.CARDS}) if color == "yellow" else frozenset({Touch.CARDS, Touch.LINEUP})


def parse_command(code: str, input: object) -> Command:
    """The command for `code` with `input` validated, or `CommandShapeError` naming the first bad field.

    Raises:
        CommandShapeError: `path` is `code` for an unknown code, else `input` or `input.<field>…`.
    """
    if not isinstance(code, str) or code not in COMMANDS:
        shown = repr(code) if not isinstance(code, str) or len(code) <= 60 else repr(code[:60] + "…")
        raise CommandShapeError("code", f"unknown command code {shown}")
    try:
        return COMMANDS[Code(code)].model_validate(input)
    except ValidationError as exc:
        first: Any = exc.errors(include_url=False, include_input=False)[0]
        raise CommandShapeError(_path(first["loc"]), first["msg"]) from None


def _path(loc: tuple[int | str, ...]) -> str:
    path = "input"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path
