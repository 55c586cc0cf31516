"""A desk's fifty and hundred are key moments, as a provider ball's milestone is: the alert a
follower gets must not depend on who scored the match."""

from __future__ import annotations

from typing import Any

import pytest

from domain import rules
from domain.desk import key_moments
from domain.moments import KeyMoment
from tests.rules.play import Step
from tests.rules.test_cricket import OPENERS, OVER_END, ball, bowler, cricket, desk

pytestmark = pytest.mark.unit

THIRTY_SIX = (OPENERS, *(ball(6) for _ in range(6)), OVER_END, bowler(22), ball(1))
"""Batter 1 hits six sixes (36), the over ends, batter 2 takes a single: 1 is on strike again."""


def moments_of(steps: tuple[Step, ...], code: str, body: dict[str, Any]) -> tuple[KeyMoment, ...]:
    state = cricket(desk(*steps))
    return key_moments(state, rules.parse_command(code, body))


def test_the_ball_that_takes_the_striker_to_fifty_is_a_fifty() -> None:
    steps = (*THIRTY_SIX, ball(6), ball(6))  # 48
    assert moments_of(steps, "cricket.ball", {"runs": 1}) == ()
    assert moments_of(steps, "cricket.ball", {"runs": 2}) == (KeyMoment(kind="fifty", side="home"),)
    assert moments_of((*steps, ball(2)), "cricket.ball", {"runs": 4, "boundary": "four"}) == ()


def test_a_hundred_and_a_wicket_are_told_apart() -> None:
    steps = (*THIRTY_SIX, *(ball(6) for _ in range(5)), OVER_END, bowler(21), ball(1))  # 1: 66, on strike
    more = (*(ball(6) for _ in range(5)), OVER_END, bowler(22), ball(1))  # 96, on strike again
    assert moments_of((*steps, *more), "cricket.ball", {"runs": 4, "boundary": "four"}) == (
        KeyMoment(kind="hundred", side="home"),
    )
    assert moments_of((*steps, *more), "cricket.ball", {"wicket": {"kind": "bowled"}}) == (
        KeyMoment(kind="wicket", side="home"),
    )
