"""Sport rules for desk commands: pure, deterministic, and safe inside the Temporal workflow sandbox.

The command road (design §4) uses them in this order::

    command = parse_command(code, input)            # shape: CommandShapeError → 422 / validator
    changed = touches(state, command)               # version check, unless code in ADDITIVE_CODES
    refusal = check(state, command, actor="desk")   # a rule's no → answer `refused` with it
    state = step(state, command, seq)               # the new state, once the seq is known
    body = describe(command)                        # the log entry's body

States are frozen pydantic models that round-trip through JSON; read one back with
`RULE_STATE.validate_python(...)` (the `sport` field tells the two sports apart).

Undo and VAR, in short: `match.undo` takes back the newest undoable step (any state-changing
command, VAR overturns included; not commentary, mode switches or undos) and restores the game
exactly as it was; older steps are undone one after the other, within the sport's `undo_window`.
`match.var` overturned marks a goal or card as overturned as a new step (the original log entry
stays; the score goes down, a sent-off player comes back); `confirmed` changes nothing. Both refuse
targets they cannot find with `target_not_found`.

Modules here import only the stdlib, pydantic and `domain.rules` (tests/foundation/test_purity.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, JsonValue, TypeAdapter

from domain.rules import cricket, football
from domain.rules.commands import (
    ADDITIVE_CODES,
    COMMAND_SHAPE_ERROR,
    COMMANDS,
    Code,
    Command,
    CommandShapeError,
    Touch,
    command_touches,
    parse_command,
)
from domain.rules.common import Actor, IllegalCommand, Lineup, Lineups, Mode, Refusal, RefusalCode
from domain.rules.cricket import CricketRules, CricketState
from domain.rules.football import FootballRules, FootballState

RuleState = Annotated[FootballState | CricketState, Field(discriminator="sport")]
"""The rule state of one match, whichever the sport."""

RULE_STATE: TypeAdapter[FootballState | CricketState] = TypeAdapter(RuleState)
"""Reads a `RuleState` back from its JSON form."""

Sport = Literal["football", "cricket"]


def initial_state(
    sport: Sport,
    mode: Mode = "desk",
    lineups: Lineups | Mapping[str, object] | None = None,
    *,
    rules: FootballRules | CricketRules | None = None,
) -> FootballState | CricketState:
    """The state of a match before it starts.

    Args:
        sport: `football` or `cricket`.
        mode: who owns the score: `provider` or `desk`.
        lineups: the sides' known players (`{"home": {"starting": [...], "bench": [...]}}`); a side
            left out is not checked. In cricket `starting` is the XI.
        rules: the competition's rules; the sport's defaults when None.
    """
    known = Lineups.model_validate(lineups) if isinstance(lineups, Mapping) else lineups
    if sport == "football":
        if rules is not None and not isinstance(rules, FootballRules):
            raise TypeError("football needs FootballRules")
        return football.initial_state(mode, known, rules)
    if sport == "cricket":
        if rules is not None and not isinstance(rules, CricketRules):
            raise TypeError("cricket needs CricketRules")
        return cricket.initial_state(mode, known, rules)
    raise ValueError(f"no rules for sport {sport!r}")


def check(state: FootballState | CricketState, command: Command, *, actor: Actor = "desk") -> Refusal | None:
    """Why `command` cannot be applied now (a `Refusal`), or None when it can."""
    if isinstance(state, FootballState):
        return football.check(state, command, actor=actor)
    return cricket.check(state, command, actor=actor)


def step(state: FootballState | CricketState, command: Command, seq: int) -> FootballState | CricketState:
    """The state after `command`, logged at `seq`: a pure function of its arguments.

    Call it only for a command `check` accepted. `seq` must be after every seq the state has seen.

    Raises:
        IllegalCommand: the command is refused even for an operator.
    """
    if isinstance(state, FootballState):
        return football.step(state, command, seq)
    return cricket.step(state, command, seq)


def touches(state: FootballState | CricketState, command: Command) -> frozenset[Touch]:
    """What `command` would change in `state`: compare with the last seq that touched each of them.

    Commentary touches nothing; `match.undo` and `match.var` touch what their target touched (empty
    when the target is unknown: `check` then refuses it with `target_not_found`).
    """
    if isinstance(state, FootballState):
        return football.touches(state, command)
    return cricket.touches(state, command)


def describe(command: Command) -> dict[str, JsonValue]:
    """The compact body of the log entry for an accepted command: its code and its set fields."""
    return {"code": str(command.code), **command.model_dump(mode="json", exclude_none=True)}


def scoreboard(state: FootballState | CricketState) -> dict[str, JsonValue]:
    """The public view of where the match stands."""
    if isinstance(state, FootballState):
        return football.scoreboard(state)
    return cricket.scoreboard(state)


__all__ = [
    "ADDITIVE_CODES",
    "COMMANDS",
    "COMMAND_SHAPE_ERROR",
    "RULE_STATE",
    "Actor",
    "Code",
    "Command",
    "CommandShapeError",
    "CricketRules",
    "CricketState",
    "FootballRules",
    "FootballState",
    "IllegalCommand",
    "Lineup",
    "Lineups",
    "Mode",
    "Refusal",
    "RefusalCode",
    "RuleState",
    "Sport",
    "Touch",
    "check",
    "command_touches",
    "describe",
    "initial_state",
    "parse_command",
    "scoreboard",
    "step",
    "touches",
]
