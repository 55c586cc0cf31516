"""`parse_command` accepts every code's valid input and names the first bad field of anything else."""

from __future__ import annotations

from typing import Any

import pytest

from domain.rules import (
    ADDITIVE_CODES,
    COMMANDS,
    Code,
    CommandShapeError,
    Touch,
    command_touches,
    describe,
    parse_command,
)
from domain.rules.commands import MatchUndo

pytestmark = pytest.mark.unit

VALID: dict[str, dict[str, Any]] = {
    "football.period_start": {"period": "1H"},
    "football.period_end": {"period": "PEN"},
    "football.goal": {
        "side": "home",
        "minute": 90,
        "extra_minute": 4,
        "player_id": 7,
        "assist_id": 10,
        "kind": "open_play",
    },
    "football.missed_penalty": {"side": "away", "minute": 12, "player_id": 9},
    "football.card": {"side": "away", "minute": 33, "player_id": 4, "color": "second_yellow"},
    "football.substitution": {"side": "home", "minute": 60, "player_on": 14, "player_off": 9},
    "football.shootout_kick": {"side": "home", "scored": False},
    "football.corner": {"side": "home", "minute": 0},
    "match.commentary": {"text": "What a save!", "minute": 45, "extra_minute": 2},
    "match.var": {"target_seq": 12, "decision": "overturned"},
    "match.undo": {"target_seq": 1},
    "match.set_mode": {"mode": "provider"},
    "cricket.innings_start": {"batting": "away", "striker_id": 1, "non_striker_id": 2, "bowler_id": 30},
    "cricket.ball": {
        "runs": 1,
        "extra": {"kind": "no_ball", "runs": 1},
        "wicket": {"kind": "run_out", "batter_out": "non_striker", "new_batter_id": 5, "fielder_id": 40},
    },
    "cricket.over_end": {},
    "cricket.bowler_change": {"bowler_id": 31},
    "cricket.innings_end": {"match_over": True},
    "cricket.declare": {},
}


def test_every_code_has_a_valid_example() -> None:
    """The table above covers every code the rules know."""
    assert set(VALID) == {str(code) for code in COMMANDS}


@pytest.mark.parametrize("code", sorted(VALID))
def test_valid_input_parses_and_describes_itself(code: str) -> None:
    """A valid input parses to its code's model, and `describe` gives back the code and the input."""
    command = parse_command(code, VALID[code])
    assert command.code == code
    assert isinstance(command, COMMANDS[Code(code)])
    assert describe(command) == {"code": code, **VALID[code]}


@pytest.mark.parametrize(
    ("code", "body"),
    [
        ("football.goal", {"side": "home", "minute": 1, "kind": "penalty"}),
        ("football.shootout_kick", {"side": "away", "player_id": 3, "scored": True}),
        ("match.commentary", {"text": "x" * 1000}),
        ("cricket.ball", {}),
        ("cricket.ball", {"runs": 6, "boundary": "six"}),
        ("cricket.ball", {"extra": {"kind": "wide"}}),
        ("cricket.ball", {"extra": {"kind": "leg_bye", "runs": 4}}),
        ("cricket.ball", {"wicket": {"kind": "caught"}}),
        ("cricket.innings_start", {"batting": "home"}),
    ],
)
def test_optional_fields_may_be_left_out(code: str, body: dict[str, Any]) -> None:
    """Optional fields and their defaults are accepted as documented."""
    parse_command(code, body)


@pytest.mark.parametrize(
    ("code", "body", "path"),
    [
        # wrong types: no coercion at all
        ("football.goal", {"side": "home", "minute": "3", "kind": "open_play"}, "input.minute"),
        ("football.goal", {"side": "home", "minute": 3.0, "kind": "open_play"}, "input.minute"),
        ("football.goal", {"side": "home", "minute": True, "kind": "open_play"}, "input.minute"),
        ("football.goal", {"side": "HOME", "minute": 3, "kind": "open_play"}, "input.side"),
        ("football.goal", {"side": "home", "minute": 3, "kind": "header"}, "input.kind"),
        ("football.shootout_kick", {"side": "home", "scored": 1}, "input.scored"),
        ("football.shootout_kick", {"side": "home", "scored": "true"}, "input.scored"),
        ("football.period_start", {"period": "3H"}, "input.period"),
        ("match.commentary", {"text": 5}, "input.text"),
        ("match.set_mode", {"mode": None}, "input.mode"),
        ("cricket.ball", {"extra": {"kind": "wide", "runs": "1"}}, "input.extra.runs"),
        ("cricket.ball", {"wicket": {"kind": "handled_the_ball"}}, "input.wicket.kind"),
        ("cricket.ball", {"wicket": "bowled"}, "input.wicket"),
        # out of bounds
        ("football.goal", {"side": "home", "minute": 151, "kind": "open_play"}, "input.minute"),
        ("football.goal", {"side": "home", "minute": -1, "kind": "open_play"}, "input.minute"),
        (
            "football.goal",
            {"side": "home", "minute": 90, "extra_minute": 31, "kind": "open_play"},
            "input.extra_minute",
        ),
        ("football.card", {"side": "home", "minute": 1, "player_id": 0, "color": "red"}, "input.player_id"),
        (
            "football.card",
            {"side": "home", "minute": 1, "player_id": 2**63, "color": "red"},
            "input.player_id",
        ),
        ("match.undo", {"target_seq": -4}, "input.target_seq"),
        ("cricket.ball", {"runs": 7}, "input.runs"),
        ("cricket.ball", {"extra": {"kind": "bye", "runs": 8}}, "input.extra.runs"),
        # huge or empty strings
        ("match.commentary", {"text": "x" * 1001}, "input.text"),
        ("match.commentary", {"text": "x" * 5_000_000}, "input.text"),
        ("match.commentary", {"text": ""}, "input.text"),
        # missing fields
        ("football.goal", {"side": "home", "minute": 3}, "input.kind"),
        ("football.card", {"side": "home", "minute": 3, "color": "red"}, "input.player_id"),
        ("football.substitution", {"side": "home", "minute": 3, "player_on": 4}, "input.player_off"),
        ("match.var", {"decision": "confirmed"}, "input.target_seq"),
        ("cricket.bowler_change", {}, "input.bowler_id"),
        ("cricket.ball", {"extra": {"runs": 1}}, "input.extra.kind"),
        # extra fields
        ("football.corner", {"side": "home", "minute": 3, "taker": 7}, "input.taker"),
        ("cricket.over_end", {"bowler_id": 3}, "input.bowler_id"),
        ("cricket.ball", {"wicket": {"kind": "lbw", "umpire": "x"}}, "input.wicket.umpire"),
        # not an object at all
        ("cricket.declare", None, "input"),
        ("match.undo", [1], "input"),
        ("match.undo", "target_seq=1", "input"),
        # fields that contradict each other
        ("cricket.ball", {"runs": 3, "boundary": "four"}, "input.boundary"),
        ("cricket.ball", {"runs": 1, "extra": {"kind": "wide", "runs": 0}}, "input.extra"),
        ("cricket.ball", {"runs": 2, "extra": {"kind": "bye", "runs": 1}}, "input.extra"),
        ("cricket.ball", {"extra": {"kind": "bye", "runs": 0}}, "input.extra.runs"),
    ],
)
def test_bad_input_names_the_field(code: str, body: object, path: str) -> None:
    """Every kind of bad input raises `CommandShapeError` whose path is the first bad field."""
    with pytest.raises(CommandShapeError) as raised:
        parse_command(code, body)
    assert raised.value.path == path, raised.value
    assert raised.value.message
    assert len(str(raised.value)) < 300


@pytest.mark.parametrize(
    "code", ["football.dance", "", "FOOTBALL.GOAL", "match.undo ", "x" * 100_000, 7, None]
)
def test_unknown_code_is_a_shape_error_on_code(code: Any) -> None:
    """An unknown code is refused on the `code` path, and a huge one is not echoed back in full."""
    with pytest.raises(CommandShapeError) as raised:
        parse_command(code, {})
    assert raised.value.path == "code"
    assert len(str(raised.value)) < 200


def test_commands_are_frozen() -> None:
    """A parsed command cannot be changed after the fact."""
    command = parse_command("match.undo", {"target_seq": 3})
    assert isinstance(command, MatchUndo)
    with pytest.raises(ValueError, match="frozen"):
        command.target_seq = 4


def test_only_commentary_is_additive() -> None:
    """Commentary is the one pure addition; everything else goes through the version check."""
    assert ADDITIVE_CODES == {Code.MATCH_COMMENTARY}
    assert command_touches(parse_command("match.commentary", {"text": "hi"})) == frozenset()


@pytest.mark.parametrize(
    ("code", "body", "touched"),
    [
        ("football.period_start", {"period": "1H"}, {Touch.PERIODS}),
        ("football.goal", {"side": "home", "minute": 1, "kind": "open_play"}, {Touch.SCORE}),
        ("football.card", {"side": "home", "minute": 1, "player_id": 2, "color": "yellow"}, {Touch.CARDS}),
        (
            "football.card",
            {"side": "home", "minute": 1, "player_id": 2, "color": "red"},
            {Touch.CARDS, Touch.LINEUP},
        ),
        (
            "football.substitution",
            {"side": "home", "minute": 1, "player_on": 2, "player_off": 3},
            {Touch.LINEUP},
        ),
        ("football.corner", {"side": "home", "minute": 1}, {Touch.STATS}),
        ("football.shootout_kick", {"side": "home", "scored": True}, {Touch.SHOOTOUT}),
        ("match.set_mode", {"mode": "desk"}, {Touch.MODE}),
        ("cricket.ball", {"runs": 1}, {Touch.SCORE, Touch.INNINGS}),
        ("cricket.over_end", {}, {Touch.INNINGS}),
        ("match.undo", {"target_seq": 1}, set()),
    ],
)
def test_what_a_command_touches_by_itself(code: str, body: dict[str, Any], touched: set[Touch]) -> None:
    """Each command names what it changes (undo and VAR need the state: see the sport tests)."""
    assert command_touches(parse_command(code, body)) == touched
