"""Football rules: what each command does, and the reason a scorer reads when it is refused."""

from __future__ import annotations

from typing import Any

import pytest

from domain import rules
from domain.rules import FootballRules, FootballState, IllegalCommand, RefusalCode, Touch
from domain.rules.football import is_over, next_periods, player_status
from tests.rules.play import LINEUPS, Desk, Step

pytestmark = pytest.mark.unit


def start(p: str) -> Step:
    return ("football.period_start", {"period": p})


def end(p: str) -> Step:
    return ("football.period_end", {"period": p})


def goal(side: str, player: int | None = None, kind: str = "open_play", **more: Any) -> Step:
    body: dict[str, Any] = {"side": side, "minute": 10, "kind": kind, **more}
    if player is not None:
        body["player_id"] = player
    return ("football.goal", body)


def card(side: str, player: int, color: str) -> Step:
    return ("football.card", {"side": side, "minute": 20, "player_id": player, "color": color})


def sub(side: str, on: int, off: int) -> Step:
    return ("football.substitution", {"side": side, "minute": 60, "player_on": on, "player_off": off})


def kick(side: str, scored: bool = True, player: int | None = None) -> Step:
    body: dict[str, Any] = {"side": side, "scored": scored}
    if player is not None:
        body["player_id"] = player
    return ("football.shootout_kick", body)


FIRST_HALF = (start("1H"),)
HALF_TIME = (*FIRST_HALF, end("1H"))
SECOND_HALF = (*HALF_TIME, start("2H"))
LEVEL_AFTER_90 = (*SECOND_HALF, end("2H"))
SHOOTOUT = (*LEVEL_AFTER_90, start("PEN"))


def desk(*steps: Step, lineups: bool = True, **rule_args: Any) -> Desk:
    state = rules.initial_state(
        "football", "desk", LINEUPS if lineups else None, rules=FootballRules(**rule_args)
    )
    return Desk(state).play(*steps)


def football(d: Desk) -> FootballState:
    assert isinstance(d.state, FootballState)
    return d.state


OPERATOR_MAY = {RefusalCode.OPERATORS_ONLY, RefusalCode.PROVIDER_OWNED}
"""Refusals that depend on who sends the command; `step` (which trusts its caller) applies those."""

REFUSALS: list[tuple[str, tuple[Step, ...], Step, RefusalCode, str]] = [
    # periods
    ("goal before kickoff", (), goal("home"), RefusalCode.NOT_STARTED, "the match has not started"),
    (
        "goal at half time",
        HALF_TIME,
        goal("home"),
        RefusalCode.NOT_STARTED,
        "the second half has not started",
    ),
    (
        "goal after a decided 90 minutes",
        (*SECOND_HALF, goal("home"), end("2H")),
        goal("away"),
        RefusalCode.MATCH_OVER,
        "the match is over",
    ),
    (
        "goal in the shootout",
        SHOOTOUT,
        goal("home"),
        RefusalCode.SHOOTOUT_ON,
        "the penalty shootout is on: record shootout kicks",
    ),
    ("second half first", (), start("2H"), RefusalCode.PERIOD_ORDER, "the match starts with the first half"),
    (
        "half still running",
        FIRST_HALF,
        start("2H"),
        RefusalCode.PERIOD_RUNNING,
        "the first half is still running",
    ),
    (
        "half replayed",
        HALF_TIME,
        start("1H"),
        RefusalCode.PERIOD_PLAYED,
        "the first half has already been played",
    ),
    (
        "skipping a period",
        LEVEL_AFTER_90,
        start("ET2"),
        RefusalCode.PERIOD_ORDER,
        "the second half of extra time can't follow the second half",
    ),
    (
        "ending a half not started",
        FIRST_HALF,
        end("2H"),
        RefusalCode.NOT_STARTED,
        "the second half has not started",
    ),
    (
        "ending a half twice",
        HALF_TIME,
        end("1H"),
        RefusalCode.PERIOD_PLAYED,
        "the first half has already ended",
    ),
    (
        "ending an open shootout",
        SHOOTOUT,
        end("PEN"),
        RefusalCode.SHOOTOUT_UNDECIDED,
        "the shootout is not decided yet",
    ),
    # players in goals
    ("scorer unknown", FIRST_HALF, goal("home", 99), RefusalCode.NOT_ON_PITCH, "no such player on the pitch"),
    (
        "scorer of the other side",
        FIRST_HALF,
        goal("home", 21),
        RefusalCode.NOT_ON_PITCH,
        "no such player on the pitch",
    ),
    (
        "scorer on the bench",
        FIRST_HALF,
        goal("home", 12),
        RefusalCode.ON_BENCH,
        "that player is on the bench",
    ),
    (
        "scorer substituted",
        (*FIRST_HALF, sub("home", 12, 9)),
        goal("home", 9),
        RefusalCode.ALREADY_OFF,
        "that player is already off",
    ),
    (
        "scorer sent off",
        (*FIRST_HALF, card("home", 9, "red")),
        goal("home", 9),
        RefusalCode.SENT_OFF,
        "that player has been sent off",
    ),
    (
        "own goal by a player of the side it counts for",
        FIRST_HALF,
        goal("home", 4, "own_goal"),
        RefusalCode.NOT_ON_PITCH,
        "no such player on the pitch",
    ),
    (
        "own goal with an assist",
        FIRST_HALF,
        goal("home", 24, "own_goal", assist_id=7),
        RefusalCode.NO_ASSIST,
        "an own goal has no assist",
    ),
    (
        "assist by the scorer",
        FIRST_HALF,
        goal("home", 7, assist_id=7),
        RefusalCode.SAME_PLAYER,
        "a player can't assist their own goal",
    ),
    (
        "assist from the bench",
        FIRST_HALF,
        goal("home", 7, assist_id=13),
        RefusalCode.ON_BENCH,
        "that player is on the bench",
    ),
    (
        "missed penalty by a sent-off player",
        (*FIRST_HALF, card("away", 25, "red")),
        ("football.missed_penalty", {"side": "away", "minute": 30, "player_id": 25}),
        RefusalCode.SENT_OFF,
        "that player has been sent off",
    ),
    (
        "corner at half time",
        HALF_TIME,
        ("football.corner", {"side": "home", "minute": 45}),
        RefusalCode.NOT_STARTED,
        "the second half has not started",
    ),
    # cards
    (
        "card before kickoff",
        (),
        card("home", 3, "yellow"),
        RefusalCode.NOT_STARTED,
        "the match has not started",
    ),
    (
        "card to a stranger",
        FIRST_HALF,
        card("home", 50, "yellow"),
        RefusalCode.NOT_IN_SQUAD,
        "no such player in the home squad",
    ),
    (
        "second yellow without a first",
        FIRST_HALF,
        card("home", 3, "second_yellow"),
        RefusalCode.CARD_SEQUENCE,
        "that player has no yellow card yet",
    ),
    (
        "two plain yellows",
        (*FIRST_HALF, card("home", 3, "yellow")),
        card("home", 3, "yellow"),
        RefusalCode.CARD_SEQUENCE,
        "that player already has a yellow card: send a second yellow",
    ),
    (
        "carded again after a second yellow",
        (*FIRST_HALF, card("home", 3, "yellow"), card("home", 3, "second_yellow")),
        card("home", 3, "red"),
        RefusalCode.SENT_OFF,
        "that player has been sent off",
    ),
    # substitutions
    ("sub before kickoff", (), sub("home", 12, 1), RefusalCode.NOT_STARTED, "the match has not started"),
    (
        "sub for themself",
        FIRST_HALF,
        sub("home", 5, 5),
        RefusalCode.SAME_PLAYER,
        "a player can't replace themself",
    ),
    (
        "sub off a bench player",
        FIRST_HALF,
        sub("home", 12, 13),
        RefusalCode.ON_BENCH,
        "that player is on the bench",
    ),
    (
        "sub off a stranger",
        FIRST_HALF,
        sub("home", 12, 77),
        RefusalCode.NOT_ON_PITCH,
        "no such player on the pitch",
    ),
    (
        "sub off twice",
        (*FIRST_HALF, sub("home", 12, 9)),
        sub("home", 13, 9),
        RefusalCode.ALREADY_OFF,
        "that player is already off",
    ),
    (
        "sub on a starter",
        FIRST_HALF,
        sub("home", 2, 3),
        RefusalCode.ALREADY_ON,
        "that player is already on the pitch",
    ),
    (
        "sub back on",
        (*FIRST_HALF, sub("home", 12, 9)),
        sub("home", 9, 12),
        RefusalCode.ALREADY_OFF,
        "that player was substituted off and can't come back",
    ),
    (
        "sub off a sent-off player",
        (*FIRST_HALF, card("away", 22, "red")),
        sub("away", 33, 22),
        RefusalCode.SENT_OFF,
        "that player has been sent off",
    ),
    (
        "sub on a stranger",
        FIRST_HALF,
        sub("home", 40, 2),
        RefusalCode.NOT_IN_SQUAD,
        "no such player on the home bench",
    ),
    (
        "sixth substitution",
        (*FIRST_HALF, *(sub("home", 11 + i, i) for i in range(1, 6))),
        sub("home", 17, 6),
        RefusalCode.NO_SUBSTITUTIONS_LEFT,
        "home has used all 5 substitutions",
    ),
    (
        "sub in the shootout",
        SHOOTOUT,
        sub("home", 12, 1),
        RefusalCode.SHOOTOUT_ON,
        "no substitutions during the shootout",
    ),
    # shootout
    (
        "kick in play",
        SECOND_HALF,
        kick("home"),
        RefusalCode.NOT_STARTED,
        "the penalty shootout has not started",
    ),
    (
        "kick out of turn",
        (*SHOOTOUT, kick("home")),
        kick("home"),
        RefusalCode.SHOOTOUT_TURN,
        "away kicks next",
    ),
    (
        "kick after a decided shootout",
        (*SHOOTOUT, *(step for _ in range(3) for step in (kick("home"), kick("away", scored=False)))),
        kick("home"),
        RefusalCode.SHOOTOUT_DECIDED,
        "the shootout is decided",
    ),
    (
        "kick by a substituted player",
        (*SECOND_HALF, sub("home", 12, 9), end("2H"), start("PEN")),
        kick("home", player=9),
        RefusalCode.ALREADY_OFF,
        "that player is already off",
    ),
    # VAR and undo
    (
        "VAR on nothing",
        FIRST_HALF,
        ("match.var", {"target_seq": 9, "decision": "overturned"}),
        RefusalCode.TARGET_NOT_FOUND,
        "no goal or card at seq 9",
    ),
    (
        "VAR on a corner",
        (*FIRST_HALF, ("football.corner", {"side": "home", "minute": 3})),
        ("match.var", {"target_seq": 2, "decision": "overturned"}),
        RefusalCode.NOT_REVIEWABLE,
        "VAR reviews goals and cards only",
    ),
    (
        "VAR twice",
        (*FIRST_HALF, goal("home"), ("match.var", {"target_seq": 2, "decision": "overturned"})),
        ("match.var", {"target_seq": 2, "decision": "confirmed"}),
        RefusalCode.ALREADY_OVERTURNED,
        "that goal was already overturned",
    ),
    (
        "VAR on a yellow that a second yellow built on",
        (*FIRST_HALF, card("home", 3, "yellow"), card("home", 3, "second_yellow")),
        ("match.var", {"target_seq": 2, "decision": "overturned"}),
        RefusalCode.LATER_CARD,
        "that player has a later card: review that one first",
    ),
    (
        "undo of nothing",
        FIRST_HALF,
        ("match.undo", {"target_seq": 5}),
        RefusalCode.TARGET_NOT_FOUND,
        "nothing to undo at seq 5",
    ),
    (
        "undo of an older step",
        (*FIRST_HALF, goal("home"), goal("away")),
        ("match.undo", {"target_seq": 2}),
        RefusalCode.NOT_LAST,
        "only the last change can be undone: undo seq 3 first",
    ),
    # sport and mode
    (
        "cricket on a football match",
        FIRST_HALF,
        ("cricket.ball", {"runs": 1}),
        RefusalCode.WRONG_SPORT,
        "cricket.ball is not a football command",
    ),
    (
        "desk switches the mode",
        (),
        ("match.set_mode", {"mode": "provider"}),
        RefusalCode.OPERATORS_ONLY,
        "only an operator can switch the scoring mode",
    ),
]


@pytest.mark.parametrize(
    ("setup", "command", "code", "message"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals(setup: tuple[Step, ...], command: Step, code: RefusalCode, message: str) -> None:
    """Each impossible command is refused with its code and a message a scorer understands."""
    d = desk(*setup)
    refusal = d.refusal(*command)
    assert refusal is not None
    assert (refusal.code, refusal.message) == (code, message)
    if code not in OPERATOR_MAY:
        with pytest.raises(IllegalCommand):
            rules.step(d.state, rules.parse_command(*command), d.seq + 1)


@pytest.mark.parametrize(
    ("setup", "command", "code"),
    [
        ((*FIRST_HALF, card("home", 9, "red")), goal("home", 9), RefusalCode.SENT_OFF),
        ((*FIRST_HALF, card("home", 9, "red")), card("home", 9, "yellow"), RefusalCode.SENT_OFF),
        ((*FIRST_HALF, card("home", 9, "red")), sub("home", 12, 9), RefusalCode.SENT_OFF),
        ((*FIRST_HALF, sub("home", 12, 9)), goal("home", 9), RefusalCode.ALREADY_OFF),
        ((*FIRST_HALF, sub("home", 12, 9)), sub("home", 9, 4), RefusalCode.ALREADY_OFF),
        ((*FIRST_HALF, sub("home", 12, 9)), sub("home", 12, 4), RefusalCode.ALREADY_ON),
    ],
)
def test_without_lineups_only_what_the_log_proves_is_enforced(
    setup: tuple[Step, ...], command: Step, code: RefusalCode
) -> None:
    """Unknown lineups invent nobody, but sendings-off and substitutions in the log still count."""
    d = desk(*setup, lineups=False)
    refusal = d.refusal(*command)
    assert refusal is not None and refusal.code == code
    assert d.refusal(*goal("home", 4242)) is None


def test_goals_count_for_their_side_and_own_goals_for_the_opponent() -> None:
    """`side` is the side the goal counts for; an own goal's scorer plays for the other side."""
    d = desk(
        *FIRST_HALF, goal("home", 7, assist_id=10), goal("away", 4, "own_goal"), goal("away", 30, "penalty")
    )
    assert football(d).game.score.model_dump() == {"home": 1, "away": 2}
    assert rules.scoreboard(d.state)["score"] == {"home": 1, "away": 2}


def test_var_overturned_goal_takes_the_score_down_as_a_new_step() -> None:
    """An overturned goal stops counting; the goal's own record stays, flagged, and the VAR is undoable."""
    d = desk(*FIRST_HALF)
    scored = d.do(*goal("home", 9))
    confirmed = d.state
    d.do("match.var", {"target_seq": scored, "decision": "confirmed"})
    assert d.state == confirmed
    var = d.do("match.var", {"target_seq": scored, "decision": "overturned"})
    state = football(d)
    assert state.game.score.home == 0
    assert [(g.seq, g.overturned) for g in state.game.goals] == [(scored, True)]
    assert rules.touches(state, rules.parse_command("match.undo", {"target_seq": var})) == {Touch.SCORE}
    d.do("match.undo", {"target_seq": var})
    assert d.state == confirmed


def test_var_overturned_red_card_brings_the_player_back() -> None:
    """A rescinded sending-off puts the player back on the pitch; a rescinded second yellow leaves the first."""
    d = desk(*FIRST_HALF)
    red = d.do(*card("home", 9, "red"))
    d.do(*card("home", 8, "yellow"))
    second = d.do(*card("home", 8, "second_yellow"))
    assert player_status(football(d), "home", 9) == "sent_off"
    d.do("match.var", {"target_seq": red, "decision": "overturned"})
    d.do("match.var", {"target_seq": second, "decision": "overturned"})
    assert player_status(football(d), "home", 9) == "on"
    assert player_status(football(d), "home", 8) == "on"
    refusal = d.refusal(*card("home", 8, "yellow"))
    assert refusal is not None and refusal.code == RefusalCode.CARD_SEQUENCE
    d.do(*goal("home", 9))


def test_undo_walks_back_one_step_at_a_time_exactly() -> None:
    """Each undo gives back the state as it was before the newest remaining step."""
    d = desk()
    states = [d.state]
    seqs = []
    for step_ in (
        *FIRST_HALF,
        goal("home", 3),
        card("away", 22, "red"),
        sub("home", 12, 3),
        ("football.corner", {"side": "away", "minute": 9}),
    ):
        seqs.append(d.do(*step_))
        states.append(d.state)
    d.do("match.commentary", {"text": "not undoable, not in the way"})
    for seq, before in zip(reversed(seqs), reversed(states[:-1]), strict=True):
        d.do("match.undo", {"target_seq": seq})
        assert d.state == before
    refusal = d.refusal("match.undo", {"target_seq": seqs[0]})
    assert refusal is not None and refusal.code == RefusalCode.TARGET_NOT_FOUND


def test_undo_window_forgets_the_oldest_steps() -> None:
    """Only the newest `undo_window` steps can be undone; the game is still restored exactly."""
    d = desk(*FIRST_HALF, undo_window=2)
    corners = [d.do("football.corner", {"side": "home", "minute": m}) for m in (1, 2, 3)]
    assert [entry.seq for entry in d.state.undo] == corners[1:]
    d.do("match.undo", {"target_seq": corners[2]})
    d.do("match.undo", {"target_seq": corners[1]})
    assert football(d).game.corners.home == 1
    refusal = d.refusal("match.undo", {"target_seq": corners[0]})
    assert refusal is not None and refusal.code == RefusalCode.TARGET_NOT_FOUND


def test_undo_keeps_a_later_mode_switch() -> None:
    """The mode is not part of the game: undoing a goal after a switch keeps the switch."""
    d = desk(*FIRST_HALF)
    scored = d.do(*goal("home"))
    d.do("match.set_mode", {"mode": "provider"}, actor="operator")
    d.do("match.undo", {"target_seq": scored}, actor="operator")
    assert d.state.mode == "provider"
    assert football(d).game.score.home == 0


def test_provider_mode_refuses_desk_changes_but_not_commentary_or_operators() -> None:
    """In provider mode the provider owns the score: desks comment, operators still correct."""
    d = Desk(rules.initial_state("football", "provider"))
    refusal = d.refusal(*start("1H"))
    assert refusal is not None and refusal.code == RefusalCode.PROVIDER_OWNED
    assert refusal.message == "the data provider owns this match's score"
    d.do("match.commentary", {"text": "kick-off soon"})
    d.do(*start("1H"), actor="operator")
    scored = d.do(*goal("away"), actor="operator")
    refusal = d.refusal("match.undo", {"target_seq": scored})
    assert refusal is not None and refusal.code == RefusalCode.PROVIDER_OWNED
    refusal = d.refusal("match.set_mode", {"mode": "provider"}, actor="operator")
    assert refusal is not None and refusal.code == RefusalCode.SAME_MODE
    d.do("match.set_mode", {"mode": "desk"}, actor="operator")
    d.do(*goal("home"))


@pytest.mark.parametrize(
    ("knockout", "extra_time", "level", "allowed"),
    [
        (False, True, True, ()),
        (None, True, True, ("ET1", "PEN")),
        (None, True, False, ()),
        (True, True, True, ("ET1",)),
        (True, False, True, ("PEN",)),
        (True, True, False, ()),
    ],
)
def test_what_follows_ninety_minutes(
    knockout: bool | None, extra_time: bool, level: bool, allowed: tuple[str, ...]
) -> None:
    """A level knockout tie goes on as the competition says; otherwise the match is over."""
    steps = SECOND_HALF if level else (*SECOND_HALF, goal("away"))
    d = desk(*steps, end("2H"), knockout=knockout, extra_time=extra_time)
    state = football(d)
    assert next_periods(state) == allowed
    assert is_over(state) is (not allowed)


def test_a_full_knockout_match_to_the_shootout() -> None:
    """Extra time, then a shootout that ends after the fifth round; the match is then over."""
    d = desk(*LEVEL_AFTER_90, start("ET1"), end("ET1"), start("ET2"), end("ET2"), start("PEN"), knockout=True)
    for round_ in range(5):
        d.play(kick("home", player=1 + round_), kick("away", scored=round_ != 4))
    d.do(*end("PEN"))
    state = football(d)
    assert is_over(state)
    assert state.game.shootout.scored.model_dump() == {"home": 5, "away": 4}
    assert state.game.score.model_dump() == {"home": 0, "away": 0}
    refusal = d.refusal("match.commentary", {"text": "what a night"})
    assert refusal is None


def test_a_late_var_decision_can_reopen_a_tie() -> None:
    """The end of the match is derived: a goal overturned after the whistle makes the tie level again."""
    d = desk(*SECOND_HALF, knockout=True)
    scored = d.do(*goal("home"))
    d.do(*end("2H"))
    assert is_over(football(d))
    d.do("match.var", {"target_seq": scored, "decision": "overturned"})
    assert next_periods(football(d)) == ("ET1",)


@pytest.mark.parametrize(
    ("setup", "command", "touched"),
    [
        ((*FIRST_HALF, goal("home")), ("match.undo", {"target_seq": 2}), {Touch.SCORE}),
        (
            (*FIRST_HALF, card("home", 3, "red")),
            ("match.undo", {"target_seq": 2}),
            {Touch.CARDS, Touch.LINEUP},
        ),
        (
            (*FIRST_HALF, card("home", 3, "yellow")),
            ("match.var", {"target_seq": 2, "decision": "overturned"}),
            {Touch.CARDS},
        ),
        (
            (*FIRST_HALF, goal("home")),
            ("match.var", {"target_seq": 2, "decision": "confirmed"}),
            {Touch.SCORE},
        ),
        (FIRST_HALF, ("match.var", {"target_seq": 7, "decision": "overturned"}), set()),
        (FIRST_HALF, ("match.undo", {"target_seq": 7}), set()),
        (FIRST_HALF, ("match.commentary", {"text": "hi"}), set()),
    ],
)
def test_undo_and_var_touch_what_their_target_touched(
    setup: tuple[Step, ...], command: Step, touched: set[Touch]
) -> None:
    """The version check compares the target's categories; an unknown target touches nothing."""
    assert rules.touches(desk(*setup).state, rules.parse_command(*command)) == touched


def test_step_needs_increasing_seqs() -> None:
    """A seq at or before one already recorded is a caller bug, not a desk error."""
    d = desk(*FIRST_HALF)
    with pytest.raises(ValueError, match="not after"):
        rules.step(d.state, rules.parse_command(*goal("home")), d.seq)


def test_lineups_are_validated() -> None:
    """A lineup that names a player twice is rejected when the state is made."""
    with pytest.raises(ValueError, match="twice"):
        rules.initial_state("football", lineups={"home": {"starting": [1, 2], "bench": [2]}})
    with pytest.raises(TypeError):
        rules.initial_state("football", rules=rules.CricketRules())


@pytest.mark.parametrize(
    ("extra_time", "period", "message"),
    [
        (True, "PEN", "extra time comes before the shootout"),
        (False, "ET1", "this competition has no extra time"),
    ],
)
def test_knockout_periods_follow_the_competition(extra_time: bool, period: str, message: str) -> None:
    """A knockout tie goes to extra time or straight to penalties, as the competition says."""
    refusal = desk(*LEVEL_AFTER_90, knockout=True, extra_time=extra_time).refusal(*start(period))
    assert refusal is not None
    assert (refusal.code, refusal.message) == (RefusalCode.PERIOD_ORDER, message)
