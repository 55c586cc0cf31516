"""Random command sequences of both sports never break the rules' invariants.

Each run draws a match (mode, lineups known or not, competition rules) and then commands one by one,
aimed at the current state so that many are accepted (the next period, a player who is on the pitch,
the newest undoable seq…) and many are refused. After every command:

- a refused command leaves the state as it was, and `step` will not apply it;
- `step` is a pure function: run twice it gives equal states, and its input is not mutated;
- the new state round-trips through JSON to an equal state;
- the invariants hold (no negative score, at most 10 wickets, at most 6 legal balls an over, …);
- undoing the step at once gives back exactly the earlier state, and every `match.undo` in the
  sequence gives back exactly the state its target started from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain import rules
from domain.cricket.board import CricketBoard
from domain.cricket.desk_board import board_of
from domain.rules import (
    RULE_STATE,
    Actor,
    CommandShapeError,
    CricketRules,
    CricketState,
    FootballRules,
    FootballState,
    IllegalCommand,
    Mode,
)
from domain.rules.cricket import BALLS_PER_OVER, MAX_WICKETS
from domain.rules.football import next_periods
from tests.rules.play import LINEUPS

pytestmark = pytest.mark.unit

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

State = FootballState | CricketState
Body = dict[str, Any]
SIDES = st.sampled_from(["home", "away"])
MINUTES = st.integers(0, 125)
ACTORS: st.SearchStrategy[Actor] = st.sampled_from(["desk"] * 6 + ["operator"])
MODES: st.SearchStrategy[Mode] = st.sampled_from(["desk"] * 4 + ["provider"])


def _targets(state: State, seq: int) -> st.SearchStrategy[int]:
    """Seqs worth aiming at: the undo log (newest most often), goals and cards, and strays."""
    known = [entry.seq for entry in state.undo]
    if isinstance(state, FootballState):
        known += [goal.seq for goal in state.game.goals] + [card.seq for card in state.game.bookings]
    newest = [state.undo[-1].seq] * 3 if state.undo else []
    return st.sampled_from([*newest, *known, seq + 1, 1]) if known else st.integers(1, seq + 2)


def _shared(draw: st.DrawFn, code: str, state: State, seq: int) -> Body:
    if code == "match.undo":
        return {"target_seq": draw(_targets(state, seq))}
    if code == "match.var":
        return {
            "target_seq": draw(_targets(state, seq)),
            "decision": draw(st.sampled_from(["overturned", "confirmed"])),
        }
    if code == "match.set_mode":
        return {"mode": draw(st.sampled_from(["provider", "desk"]))}
    return {"text": draw(st.text(min_size=1, max_size=20))}


# --- football -------------------------------------------------------------------------------------

FOOTBALL_PLAYERS = st.sampled_from([1, 2, 3, 7, 9, 11, 12, 13, 16, 21, 22, 25, 31, 32, 36, 99])
FOOTBALL_CODES = [
    *["football.period_start"] * 4,
    *["football.period_end"] * 4,
    *["football.goal"] * 6,
    "football.missed_penalty",
    *["football.card"] * 4,
    *["football.substitution"] * 3,
    *["football.shootout_kick"] * 4,
    "football.corner",
    *["match.undo"] * 3,
    *["match.var"] * 2,
    "match.commentary",
    "match.set_mode",
]


@st.composite
def football_command(draw: st.DrawFn, state: FootballState, seq: int) -> tuple[str, Body]:
    game = state.game
    if draw(st.integers(0, 3)) == 0:
        return _football_progress(draw, state)
    code = draw(st.sampled_from(FOOTBALL_CODES))
    if code in ("football.period_start", "football.period_end"):
        usual = next_periods(state) if code == "football.period_start" else game.periods[-1:]
        choices = [*usual, *usual, "1H", "2H", "ET1", "ET2", "PEN"]
        return code, {"period": draw(st.sampled_from(choices))}
    side, minute, player = draw(SIDES), draw(MINUTES), draw(FOOTBALL_PLAYERS)
    if code == "football.goal":
        body: Body = {
            "side": side,
            "minute": minute,
            "kind": draw(st.sampled_from(["open_play", "penalty", "own_goal"])),
        }
        if draw(st.booleans()):
            body["player_id"] = player
        if draw(st.integers(0, 3)) == 0:
            body["assist_id"] = draw(FOOTBALL_PLAYERS)
        return code, body
    if code == "football.missed_penalty":
        return code, {"side": side, "minute": minute, "player_id": player}
    if code == "football.card":
        colors = ["yellow", "yellow", "second_yellow", "red"]
        return code, {
            "side": side,
            "minute": minute,
            "player_id": player,
            "color": draw(st.sampled_from(colors)),
        }
    if code == "football.substitution":
        return code, {
            "side": side,
            "minute": minute,
            "player_on": draw(FOOTBALL_PLAYERS),
            "player_off": player,
        }
    if code == "football.shootout_kick":
        return code, {"side": side, "scored": draw(st.booleans())}
    if code == "football.corner":
        return code, {"side": side, "minute": minute}
    return code, _shared(draw, code, state, seq)


def _football_progress(draw: st.DrawFn, state: FootballState) -> tuple[str, Body]:
    """The command that moves the match on: end the period, start the next, take the next kick."""
    game = state.game
    if game.current == "PEN" and not game.shootout.decided:
        taken = game.shootout.taken
        side = "away" if taken.home > taken.away else "home" if taken.away > taken.home else draw(SIDES)
        return "football.shootout_kick", {"side": side, "scored": draw(st.booleans())}
    if game.current is not None:
        return "football.period_end", {"period": game.current}
    upcoming = next_periods(state)
    return "football.period_start", {"period": draw(st.sampled_from(upcoming)) if upcoming else "1H"}


@st.composite
def football_match(draw: st.DrawFn) -> FootballState:
    match_rules = FootballRules(
        knockout=draw(st.sampled_from([None, True, False])),
        extra_time=draw(st.booleans()),
        max_substitutions=draw(st.sampled_from([3, 5])),
        undo_window=draw(st.sampled_from([3, 100])),
    )
    mode = draw(MODES)
    state = rules.initial_state("football", mode, draw(st.sampled_from([LINEUPS, None])), rules=match_rules)
    assert isinstance(state, FootballState)
    return state


def football_invariants(state: State) -> None:
    assert isinstance(state, FootballState)
    game, order = state.game, ["1H", "2H", "ET1", "ET2", "PEN"]
    assert game.score.home >= 0 and game.score.away >= 0
    indices = [order.index(period) for period in game.periods]
    assert indices == sorted(set(indices)) and (not indices or indices[0] == 0)
    assert "ET2" not in game.periods or "ET1" in game.periods
    for side in ("home", "away"):
        assert sum(1 for sub in game.substitutions if sub.side == side) <= state.rules.max_substitutions
    standing = [(b.side, b.player_id, b.color) for b in game.bookings if not b.overturned]
    assert len(standing) == len(set(standing)), "a card twice"
    sent_off = [(side, player) for side, player, color in standing if color != "yellow"]
    assert len(sent_off) == len(set(sent_off)), "sent off twice"
    shootout = game.shootout
    assert abs(shootout.taken.home - shootout.taken.away) <= 1
    assert shootout.scored.home <= shootout.taken.home and shootout.scored.away <= shootout.taken.away


# --- cricket --------------------------------------------------------------------------------------

CRICKET_PLAYERS = st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 21, 22, 23, 50])
CRICKET_CODES = [
    *["cricket.ball"] * 14,
    *["cricket.over_end"] * 2,
    *["cricket.bowler_change"] * 2,
    "cricket.innings_start",
    *["match.undo"] * 2,
    "match.commentary",
    "match.set_mode",
    "match.var",
]
WICKET_KINDS = st.sampled_from(
    ["bowled", "caught", "lbw", "run_out", "stumped", "hit_wicket", "obstructing_field", "hit_ball_twice"]
)


@st.composite
def cricket_ball(draw: st.DrawFn) -> Body:
    runs = draw(st.integers(0, 6))
    body: Body = {"runs": runs}
    if runs in (4, 6) and draw(st.booleans()):
        body["boundary"] = "four" if runs == 4 else "six"
    if draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(["wide", "no_ball", "bye", "leg_bye"]))
        body["extra"] = {"kind": kind, "runs": draw(st.integers(1 if kind in ("bye", "leg_bye") else 0, 4))}
        if kind != "no_ball":
            body["runs"] = 0
            body.pop("boundary", None)
    if draw(st.integers(0, 3)) == 0:
        wicket: Body = {
            "kind": draw(WICKET_KINDS),
            "batter_out": draw(st.sampled_from(["striker", "non_striker"])),
        }
        if draw(st.booleans()):
            wicket["new_batter_id"] = draw(CRICKET_PLAYERS)
        body["wicket"] = wicket
    return body


@st.composite
def cricket_command(draw: st.DrawFn, state: CricketState, seq: int) -> tuple[str, Body]:
    if draw(st.integers(0, 2)) == 0:
        return _cricket_progress(draw, state)
    if draw(st.integers(0, 40)) == 0:  # rare, or innings would seldom last to the tenth wicket
        code = draw(st.sampled_from(["cricket.innings_end", "cricket.declare"]))
    else:
        code = draw(st.sampled_from(CRICKET_CODES))
    if code == "cricket.ball":
        return code, draw(cricket_ball())
    if code == "cricket.bowler_change":
        return code, {"bowler_id": draw(CRICKET_PLAYERS)}
    if code == "cricket.innings_start":
        body: Body = {"batting": draw(SIDES)}
        for field in ("striker_id", "non_striker_id", "bowler_id"):
            if draw(st.booleans()):
                body[field] = draw(CRICKET_PLAYERS)
        return code, body
    if code == "cricket.innings_end":
        return code, {"match_over": draw(st.integers(0, 5)) == 0}
    if code in ("cricket.over_end", "cricket.declare"):
        return code, {}
    return code, _shared(draw, code, state, seq)


def _cricket_progress(draw: st.DrawFn, state: CricketState) -> tuple[str, Body]:
    """The command that moves the match on: a new innings, over or bowler, or a ball (often a wicket)."""
    game, max_overs = state.game, state.rules.max_overs
    if not game.in_play:
        batted = [done.batting for done in game.completed[-1:]]
        return "cricket.innings_start", {"batting": "away" if batted == ["home"] else "home"}
    if game.wickets == MAX_WICKETS or (max_overs is not None and game.overs == max_overs):
        return "cricket.innings_end", {}
    if game.balls == BALLS_PER_OVER:
        return "cricket.over_end", {}
    if game.bowler is None and game.last_over_bowler is not None:
        fielders = [21, 22, 23] if game.batting == "home" else [1, 2, 3]
        return "cricket.bowler_change", {"bowler_id": draw(st.sampled_from(fielders))}
    if draw(st.booleans()):
        return "cricket.ball", {
            "runs": 0,
            "wicket": {"kind": draw(st.sampled_from(["bowled", "caught", "lbw"]))},
        }
    return "cricket.ball", {"runs": draw(st.integers(0, 3))}


@st.composite
def cricket_match(draw: st.DrawFn) -> CricketState:
    match_rules = CricketRules(
        max_overs=draw(st.sampled_from([None, None, 1, 4])),
        max_innings=draw(st.sampled_from([2, 4])),
        undo_window=draw(st.sampled_from([4, 60])),
    )
    mode = draw(MODES)
    state = rules.initial_state("cricket", mode, draw(st.sampled_from([LINEUPS, None])), rules=match_rules)
    assert isinstance(state, CricketState)
    return state


def cricket_invariants(state: State) -> None:
    assert isinstance(state, CricketState)
    game, max_overs = state.game, state.rules.max_overs
    assert 0 <= game.wickets <= MAX_WICKETS
    assert 0 <= game.balls <= BALLS_PER_OVER <= BALLS_PER_OVER and game.balls <= game.deliveries
    assert game.runs >= game.extras.total >= 0
    assert min(game.extras.model_dump().values()) >= 0
    assert max_overs is None or game.overs < max_overs or (game.overs == max_overs and game.balls == 0)
    assert game.striker is None or game.striker != game.non_striker
    assert len(game.out) == len(set(game.out)) <= game.wickets
    assert not (game.in_play and game.finished)
    assert len(game.completed) <= state.rules.max_innings
    for done in game.completed:
        assert 0 <= done.wickets <= MAX_WICKETS and done.runs >= 0
        assert max_overs is None or done.legal_balls <= max_overs * BALLS_PER_OVER
    _board_invariants(state)


def _board_invariants(state: CricketState) -> None:
    """The desk's board agrees with the rule state, and its figures add up within the innings."""
    game, board = state.game, board_of(state)
    assert CricketBoard.model_validate(board.model_dump(mode="json")) == board
    assert len(board.innings) == len(game.completed) + (1 if game.in_play else 0)
    assert len(game.last_six) <= 6
    if game.in_play:
        assert sum(batter.runs for batter in game.batters) + game.extras.total <= game.runs
        assert sum(bowler.legal_balls for bowler in game.bowlers) <= game.overs * BALLS_PER_OVER + game.balls
        assert sum(bowler.wickets for bowler in game.bowlers) <= game.wickets
        current = board.current
        assert current is not None and current.side == game.batting
        assert (current.runs, current.wickets, current.extras.total) == (
            game.runs,
            game.wickets,
            game.extras.total,
        )
        assert current.legal_balls == game.overs * BALLS_PER_OVER + game.balls
    assert (board.result is not None) == game.finished


# --- the property ---------------------------------------------------------------------------------


def _window(state: State) -> int:
    return state.rules.undo_window


def _assert_restored(undone: State, before: State) -> None:
    """`undone` is `before` again: exactly, unless the undo window had to forget its oldest step."""
    if len(before.undo) < _window(before):
        assert undone == before
    else:
        event("undo window full")
        assert undone.game == before.game
        assert undone.undo == before.undo[1:]
        assert undone.model_copy(update={"undo": before.undo}) == before


def run(
    data: st.DataObject,
    state: State,
    commands: Callable[[State, int], st.SearchStrategy[tuple[str, Body]]],
    invariants: Callable[[State], None],
) -> None:
    seq = 0
    started_from: dict[int, State] = {}
    for _ in range(data.draw(st.integers(10, 90), label="length")):
        code, body = data.draw(commands(state, seq))
        try:
            command = rules.parse_command(code, body)
        except CommandShapeError:
            continue
        actor = data.draw(ACTORS)
        snapshot = state.model_dump(mode="json")
        refusal = rules.check(state, command, actor=actor)
        assert state.model_dump(mode="json") == snapshot
        if refusal is not None:
            assert refusal.message
            event(f"refused {code}: {refusal.code}")
            if rules.check(state, command, actor="operator") is not None:
                with pytest.raises(IllegalCommand):
                    rules.step(state, command, seq + 1)
            assert state.model_dump(mode="json") == snapshot
            continue
        seq += 1
        new = rules.step(state, command, seq)
        assert rules.step(state, command, seq) == new, "step is not a pure function"
        assert state.model_dump(mode="json") == snapshot, "step mutated its input"
        assert RULE_STATE.validate_python(new.model_dump(mode="json")) == new
        assert RULE_STATE.validate_json(new.model_dump_json()) == new
        invariants(new)
        if new.undo and new.undo[-1].seq == seq:
            started_from[seq] = state
            undone = rules.step(new, rules.parse_command("match.undo", {"target_seq": seq}), seq + 1)
            _assert_restored(undone, state)
        event(f"accepted {code}")
        if code == "match.undo":
            target = started_from[body["target_seq"]]
            assert new.game == target.game
            assert new.undo == target.undo[len(target.undo) - len(new.undo) :]
        state = new
    _milestones(state)


def _milestones(state: State) -> None:
    """Hypothesis statistics (`--hypothesis-show-statistics`) show how far the sequences got."""
    if isinstance(state, FootballState):
        event(f"periods played: {len(state.game.periods)}")
        event(f"goals standing: {min(state.game.score.home + state.game.score.away, 3)}+")
    else:
        wickets = max([state.game.wickets, *(done.wickets for done in state.game.completed)])
        event(f"most wickets in an innings: {wickets // 5 * 5}+")
        event(f"innings finished: {len(state.game.completed)}")


@PROPERTY
@given(data=st.data(), state=football_match())
def test_football_sequences_keep_the_invariants(data: st.DataObject, state: FootballState) -> None:
    """Any football command sequence keeps scores, cards, substitutions and undo sound."""
    run(data, state, football_command, football_invariants)  # type: ignore[arg-type]


@PROPERTY
@given(data=st.data(), state=cricket_match())
def test_cricket_sequences_keep_the_invariants(data: st.DataObject, state: CricketState) -> None:
    """Any cricket command sequence keeps runs, wickets, overs and undo sound."""
    run(data, state, cricket_command, cricket_invariants)  # type: ignore[arg-type]
