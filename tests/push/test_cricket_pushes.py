"""What a cricket change tells a Live Activity: the line, the moments, the alert (pure logic)."""

from __future__ import annotations

from activities.push.payloads import FixtureNames, alert, variants
from domain.cricket.board import BatterFigures, BowlerFigures, CricketBoard, InningsTotal
from domain.cricket.live import line_of
from domain.moments import KeyMoment, entry_moment
from domain.push_plan import pace
from domain.pushes import LiveState, PushInput
from tests.push.composed import build

NAMES = FixtureNames(home="Chennai Super Kings", away="Royal Challengers Bengaluru", competition="IPL")


def chase() -> CricketBoard:
    """CSK chasing 174 at 150/4 after 16.2 overs of 20."""
    return CricketBoard(
        format="T20",
        scheduled_overs=20,
        innings=(
            InningsTotal(
                scoreboard="S1", number=1, team_id=8, side="away", runs=173, wickets=6, legal_balls=120
            ),
            InningsTotal(
                scoreboard="S2",
                number=2,
                team_id=2,
                side="home",
                runs=150,
                wickets=4,
                legal_balls=98,
                target=174,
            ),
        ),
        batting_side="home",
        striker=BatterFigures(id=4940, name="Shivam Dube", runs=34, balls=28),
        non_striker=BatterFigures(id=55, name="Ravindra Jadeja", runs=25, balls=17),
        bowler=BowlerFigures(id=115, name="Alzarri Joseph", legal_balls=22, runs=38),
        last_six=("1", "0", "4", "W", "1lb", "2wd", "6"),
        target=174,
    )


def test_the_line_of_a_chase_says_what_is_needed_from_how_many_balls() -> None:
    """24 needed from 22 balls is a required rate of 6.55 an over; the strip keeps the last six."""
    line = line_of(chase())
    assert (line.batting, line.runs, line.wickets, line.overs) == ("home", 150, 4, "16.2")
    assert line.other == "173/6"
    assert (line.target, line.need, line.balls_left, line.required_rate) == (174, 24, 22, 6.55)
    assert line.bowler == "Alzarri Joseph 3.4-0-38-0"
    assert line.last_six == ("0", "4", "W", "1lb", "2wd", "6")
    assert line.striker is not None and (line.striker.name, line.striker.runs) == ("Shivam Dube", 34)


def test_a_board_without_innings_is_an_empty_line() -> None:
    line = line_of(CricketBoard())
    assert (line.runs, line.wickets, line.overs, line.other, line.target) == (0, 0, "0.0", None, None)


def test_a_wicket_a_fifty_and_a_hundred_are_moments_and_a_dot_ball_is_not() -> None:
    """The log entry says it: a ball of type `wicket`, or a ball carrying a batter's milestone."""
    wicket = entry_moment("event", {"stream": "balls", "type": "wicket", "side": "away", "rescinded": False})
    fifty = entry_moment("event", {"stream": "balls", "type": "ball", "side": "home", "milestone": "fifty"})
    hundred = entry_moment(
        "event", {"stream": "balls", "type": "ball", "side": "home", "milestone": "hundred"}
    )
    dot = entry_moment("event", {"stream": "balls", "type": "ball", "side": "home"})
    assert wicket is not None and (wicket.kind, wicket.side, wicket.alerting) == ("wicket", "away", True)
    assert fifty is not None and fifty.kind == "fifty" and fifty.alerting
    assert hundred is not None and hundred.kind == "hundred" and hundred.alerting
    assert dot is None


def test_an_innings_ending_is_an_alert_and_a_lunch_break_is_not() -> None:
    """The state moving from an innings to a break, the next innings or the end closes the innings;
    lunch, tea and stumps only pause it (priority 10, no alert, as any state change)."""
    for after in ("innings_break", "innings_2", "finished"):
        paced = pace("innings_1", after, ())
        assert paced.alert and paced.moment is not None and paced.moment.kind == "innings_end", after
    for after in ("lunch", "tea", "stumps", "interrupted"):
        paced = pace("innings_1", after, ())
        assert (paced.priority, paced.alert) == (10, False), after


def test_a_wicket_off_the_last_ball_is_one_alert_that_names_both() -> None:
    """The ball's own moment is the alert; the title says the innings ended too."""
    paced = pace("innings_1", "innings_break", (KeyMoment(kind="wicket", side="away"),))
    assert paced.alert and paced.moment is not None and paced.moment.kind == "wicket"
    push = PushInput(
        fixture_id=2_000_000_058_328,
        event_key="v131",
        kind="update",
        priority=10,
        state=LiveState(home=0, away=173, state="innings_break", version=131, cricket=line_of(chase())),
        moment=paced.moment,
        alert=True,
        timestamp=1_700_000_000,
    )
    assert alert(push, NAMES)["title"] == "Wicket! Royal Challengers Bengaluru · End of innings"


def test_the_cricket_block_in_the_content_state_leaves_absent_fields_out() -> None:
    """camelCase keys for the app's decoder, and no `null` (a null breaks a Swift decode)."""
    state = LiveState(home=150, away=173, state="innings_2", version=240, cricket=line_of(chase()))
    push = PushInput(
        fixture_id=2_000_000_058_328, event_key="v240", kind="update", state=state, timestamp=1_700_000_000
    )
    block = build(push, NAMES)["aps"]["content-state"]["cricket"]
    assert block["runs"] == 150 and block["overs"] == "16.2" and block["need"] == 24
    assert block["ballsLeft"] == 22 and block["requiredRate"] == 6.55
    assert block["striker"] == {"name": "Shivam Dube", "runs": 34, "balls": 28}
    assert block["nonStriker"] == {"name": "Ravindra Jadeja", "runs": 25, "balls": 17}
    assert None not in block.values()
    first = build(
        push.model_copy(update={"state": state.model_copy(update={"cricket": line_of(CricketBoard())})}),
        NAMES,
    )
    assert "target" not in first["aps"]["content-state"]["cricket"]


def test_the_score_line_of_an_alert_is_the_batting_side_first() -> None:
    state = LiveState(home=150, away=173, state="innings_2", version=240, cricket=line_of(chase()))
    push = PushInput(fixture_id=1, event_key="v240", kind="end", state=state, timestamp=1, alert=True)
    message = alert(push, NAMES)
    assert message["title"] == "Result"
    assert message["body"] == "Chennai Super Kings 150/4 (16.2 ov) · Royal Challengers Bengaluru 173/6"


def test_a_cricket_payload_that_is_too_large_drops_the_cricket_block_last() -> None:
    """Trimming drops the least useful first: the moment, the detail, the minute, then the block."""
    state = LiveState(home=150, away=173, state="innings_2", version=240, cricket=line_of(chase()))
    push = PushInput(fixture_id=1, event_key="v240", kind="update", state=state, timestamp=1)
    payload = build(push, NAMES)
    full = variants(payload)[0]
    smallest = variants(payload, limit=len(full) - 1)
    assert smallest and b'"cricket"' not in smallest[-1]
