"""How one delivery changes the innings: the total, the extras, the crease, the figures and the strip.

This module imports only the stdlib and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from domain.rules.commands import CricketBall
from domain.rules.cricket_state import BALLS_PER_OVER, BatterTally, BowlerTally, CricketGame

_BOWLER_CREDITED = frozenset({"bowled", "caught", "lbw", "stumped", "hit_wicket"})
"""Dismissals credited to the bowler (as `domain.cricket.board.BOWLER_CREDITED` for the provider's)."""
_LAST_BALLS = 6


def apply_ball(game: CricketGame, ball: CricketBall) -> CricketGame:
    """The game after `ball`: the total and extras, who is on strike, the figures and the strip."""
    extra = ball.extra
    extra_runs = extra.runs if extra is not None else 0
    penalty = 1 if extra is not None and extra.kind in ("wide", "no_ball") else 0
    extras = game.extras
    if extra is not None:
        field = {"wide": "wides", "no_ball": "no_balls", "bye": "byes", "leg_bye": "leg_byes"}[extra.kind]
        extras = extras.model_copy(update={field: getattr(extras, field) + penalty + extra_runs})
    ran = (0 if ball.boundary else ball.runs) + extra_runs
    striker, non_striker = game.striker, game.non_striker
    crossed = ran % 2 == 1
    if crossed:
        striker, non_striker = non_striker, striker
    wickets, out, gone = game.wickets, game.out, None
    if ball.wicket is not None:
        wickets += 1
        gone = game.striker if ball.wicket.batter_out == "striker" else game.non_striker
        if gone is not None:
            out = (*out, gone)
        # The incoming batter takes the dismissed batter's end (after any runs were crossed).
        on_strike_end = (ball.wicket.batter_out == "striker") != crossed
        if on_strike_end:
            striker = ball.wicket.new_batter_id
        else:
            non_striker = ball.wicket.new_batter_id
    charged = ball.runs + (penalty + extra_runs if penalty else 0)
    balls = game.balls + (1 if ball.legal else 0)
    over_charged = game.over_charged + charged
    maiden = balls == BALLS_PER_OVER and over_charged == 0 and not game.over_shared
    return game.model_copy(
        update={
            "runs": game.runs + ball.runs + penalty + extra_runs,
            "wickets": wickets,
            "balls": balls,
            "deliveries": game.deliveries + 1,
            "extras": extras,
            "striker": striker,
            "non_striker": non_striker,
            "out": out,
            "batters": _faced(game.batters, game.striker, ball, gone),
            "bowlers": _bowled(game.bowlers, game.bowler, ball, charged, maiden),
            "last_six": (*game.last_six, _strip(ball))[-_LAST_BALLS:],
            "over_charged": over_charged,
        }
    )


def _faced(
    batters: tuple[BatterTally, ...], striker: int | None, ball: CricketBall, gone: int | None
) -> tuple[BatterTally, ...]:
    """The figures at the crease after `ball`: the striker's runs off the bat, and the ball unless
    a wide; the batter `gone` (out on it) leaves."""
    if striker is not None:
        tally = next((each for each in batters if each.id == striker), BatterTally(id=striker))
        wide = ball.extra is not None and ball.extra.kind == "wide"
        batters = _replaced(
            batters,
            tally._replace(
                runs=tally.runs + ball.runs,
                balls=tally.balls + (0 if wide else 1),
                fours=tally.fours + (ball.boundary == "four"),
                sixes=tally.sixes + (ball.boundary == "six"),
            ),
        )
    return tuple(each for each in batters if each.id != gone)


def _bowled(
    bowlers: tuple[BowlerTally, ...], bowler: int | None, ball: CricketBall, charged: int, maiden: bool
) -> tuple[BowlerTally, ...]:
    """The bowlers' figures after `ball`, which completed a maiden over when `maiden`."""
    if bowler is None:
        return bowlers
    tally = next((each for each in bowlers if each.id == bowler), BowlerTally(id=bowler))
    credited = ball.wicket is not None and ball.wicket.kind in _BOWLER_CREDITED
    new = tally._replace(
        legal_balls=tally.legal_balls + ball.legal,
        maidens=tally.maidens + maiden,
        runs=tally.runs + charged,
        wickets=tally.wickets + credited,
    )
    return _replaced(bowlers, new)


class _Tally(Protocol):
    @property
    def id(self) -> int: ...


Tally = TypeVar("Tally", bound=_Tally)


def _replaced(tallies: tuple[Tally, ...], new: Tally) -> tuple[Tally, ...]:
    """`tallies` with `new` in place of the player's old figures, or appended for a first ball."""
    if any(each.id == new.id for each in tallies):
        return tuple(new if each.id == new.id else each for each in tallies)
    return (*tallies, new)


def _strip(ball: CricketBall) -> str:
    """The delivery as a scoreboard's strip shows it (as `BallDetail.strip` does a provider's ball)."""
    extra = ball.extra
    if ball.wicket is not None:
        return "W"
    if extra is None:
        return str(ball.runs)
    suffix = {"wide": "wd", "no_ball": "nb", "bye": "b", "leg_bye": "lb"}[extra.kind]
    penalty = 1 if extra.kind in ("wide", "no_ball") else 0
    return f"{penalty + extra.runs + ball.runs}{suffix}"
