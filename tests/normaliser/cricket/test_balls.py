"""Each provider ball becomes one `balls` item whose `BallDetail` follows cricket.md §1/§3/§4."""

from __future__ import annotations

from typing import Any

import pytest

from activities.provider.cricket.normaliser import (
    ProviderPayloadError,
    normalise_cricket_fixture,
    normalise_cricket_fixtures,
    parse_score_rows,
)
from domain.cricket.board import BallDetail, Dismissal
from domain.snapshot import Item, ItemType, Side, Snapshot, Stream
from tests.normaliser.cricket.samples import AWAY, HOME, ball, fixture, score_row, score_rows

pytestmark = pytest.mark.unit

D = Dismissal

# cricket.md §4: score id → runs, batter_runs, wides, no_balls, byes, leg_byes, legal, strip.
ARITHMETIC = [
    (82, 0, 0, 0, 0, 0, 0, True, "0"),
    (69, 1, 1, 0, 0, 0, 0, True, "1"),
    (74, 6, 6, 0, 0, 0, 0, True, "6"),
    (47, 4, 4, 0, 0, 0, 0, True, "4"),
    (1, 1, 0, 0, 0, 1, 0, True, "1b"),
    (41, 4, 0, 0, 0, 4, 0, True, "4b"),
    (4, 1, 0, 0, 0, 0, 1, True, "1lb"),
    (43, 4, 0, 0, 0, 0, 4, True, "4lb"),
    (17, 1, 0, 1, 0, 0, 0, False, "1wd"),
    (52, 5, 0, 5, 0, 0, 0, False, "5wd"),
    (7, 1, 0, 0, 1, 0, 0, False, "1nb"),
    (9, 3, 2, 0, 1, 0, 0, False, "3nb"),
    (13, 5, 4, 0, 1, 0, 0, False, "5nb"),
    (16, 7, 6, 0, 1, 0, 0, False, "7nb"),
    (14, 2, 0, 0, 1, 0, 1, False, "2nb"),
    (15, 5, 0, 0, 1, 4, 0, False, "5nb"),
]


def _one(payload: dict[str, Any], scores: dict[int, Any] | None = None) -> Item:
    snapshot = normalise_cricket_fixture(fixture([payload]), scores)
    assert snapshot.balls is not None
    (item,) = snapshot.balls
    return item


def _detail(payload: dict[str, Any]) -> BallDetail:
    detail = _one(payload).ball
    assert detail is not None
    return detail


@pytest.mark.parametrize(
    ("score_id", "runs", "batter", "wides", "no_balls", "byes", "leg_byes", "legal", "strip"), ARITHMETIC
)
def test_delivery_arithmetic(
    score_id: int,
    runs: int,
    batter: int,
    wides: int,
    no_balls: int,
    byes: int,
    leg_byes: int,
    legal: bool,
    strip: str,
) -> None:
    """Wides count in full, the no-ball penalty is a no-ball extra, byes ride beside `runs`."""
    detail = _detail(ball(1, score_id))
    assert (detail.runs, detail.batter_runs, detail.wides, detail.no_balls) == (runs, batter, wides, no_balls)
    assert (detail.byes, detail.leg_byes, detail.legal, detail.strip) == (byes, leg_byes, legal, strip)
    assert detail.runs == detail.batter_runs + detail.extras
    assert detail.known and not detail.wicket and detail.dismissal is None


def test_item_fields() -> None:
    """Striker is the player, bowler the related player, the batting team the participant."""
    item = _one(ball(9, 47, over="18.4", scoreboard="S2", team_id=HOME, striker=5, other=6, bowler=7))
    assert item.key == (Stream.BALLS, 9) and item.type is ItemType.BALL
    assert (item.provider_type_id, item.result, item.minute) == (47, "FOUR", None)
    assert (item.side, item.participant_id) == (Side.HOME, HOME)
    assert (item.player_id, item.player_name) == (5, "Batter 5")
    assert (item.related_player_id, item.related_player_name) == (7, "Bowler 7")
    detail = item.ball
    assert detail is not None
    assert (detail.scoreboard, detail.innings, detail.over, detail.ball, detail.notation) == (
        "S2",
        2,
        18,
        4,
        "18.4",
    )
    assert (detail.batter_id, detail.non_striker_id, detail.bowler_id, detail.four) == (5, 6, 7, True)


@pytest.mark.parametrize(("value", "over", "number"), [(0.1, 0, 1), (19.6, 19, 6), (9.3, 9, 3), (5, 5, 0)])
def test_over_and_ball_survive_binary_floats(value: float, over: int, number: int) -> None:
    """`ball` is a float: 0.1 and 19.6 are read on tenths, not truncated."""
    payload = ball(1, 69)
    payload["ball"] = value
    detail = _detail(payload)
    assert (detail.over, detail.ball) == (over, number)


@pytest.mark.parametrize(
    ("score_id", "dismissal", "bowler_wicket"),
    [
        (54, D.CAUGHT, True),
        (79, D.BOWLED, True),
        (83, D.LBW, True),
        (56, D.STUMPED, True),
        (21, D.STUMPED, True),
        (63, D.RUN_OUT, False),
        (65, D.RUN_OUT, False),
    ],
)
def test_dismissals(score_id: int, dismissal: Dismissal, bowler_wicket: bool) -> None:
    """The kind comes from the score row's name; run-outs are not the bowler's wicket."""
    item = _one(ball(1, score_id, out=46, fielder=99))
    detail = item.ball
    assert detail is not None and item.type is ItemType.WICKET
    assert (detail.wicket, detail.dismissal, detail.bowler_wicket) == (True, dismissal, bowler_wicket)
    assert (detail.out_batter_id, detail.fielder_id, detail.strip) == (46, 99, "W")


def test_stumped_off_a_wide_is_a_wide_and_a_wicket() -> None:
    """A stumping off a wide: one wide, not a legal ball, the bowler's wicket."""
    detail = _detail(ball(1, 21, out=46))
    assert (detail.wides, detail.legal, detail.runs, detail.wicket) == (1, False, 1, True)


def test_clean_bowled_without_batsmanout_falls_back_to_the_striker() -> None:
    """A real "Clean Bowled" came with `batsmanout_id` null: tolerated, the striker is out."""
    detail = _detail(ball(1, 79, striker=630, out=None))
    assert (detail.dismissal, detail.out_batter_id, detail.fielder_id) == (D.BOWLED, 630, None)


def test_run_out_without_batsmanout_names_nobody() -> None:
    """A run-out can take either batter: without `batsmanout_id` nobody is guessed."""
    detail = _detail(ball(1, 63, out=None))
    assert detail.wicket and detail.out_batter_id is None


def test_run_out_of_the_non_striker() -> None:
    """`batsmanout_id` can be the non-striker; `runout_by_id` stands in for `catchstump_id`."""
    payload = ball(1, 63, striker=275, other=9921, out=9921)
    payload["runout_by_id"] = 274
    detail = _detail(payload)
    assert (detail.batter_id, detail.out_batter_id, detail.fielder_id) == (275, 9921, 274)


def test_retired_hurt_is_not_a_wicket() -> None:
    """A "1 Bye + Retired Hurt" row names the retirement but takes no wicket."""
    item = _one(ball(1, 2, out=46))
    detail = item.ball
    assert detail is not None and item.type is ItemType.BALL
    assert (detail.wicket, detail.dismissal, detail.byes, detail.strip) == (False, D.RETIRED, 1, "1b")


def test_unknown_dismissal_name_is_other() -> None:
    """An out row with a name we do not know is `other`, still a wicket."""
    payload = ball(1, 54)
    payload["score"]["name"] = "Obstructing the field"
    detail = _detail(payload)
    assert (detail.wicket, detail.dismissal, detail.bowler_wicket) == (True, D.OTHER, False)


def test_score_from_the_scores_table() -> None:
    """A ball with only a `score_id` is scored from the `/scores` table."""
    table = parse_score_rows({"data": score_rows()})
    item = _one(ball(1, 16, embed=False), table)
    assert item.ball is not None and item.result == "1 No Ball + Six"
    assert (item.ball.batter_runs, item.ball.no_balls, item.ball.six) == (6, 1, True)


def test_unknown_score_id_is_kept_as_an_unknown_outcome() -> None:
    """A score id found nowhere is kept: known False, no outcome, counting as nothing."""
    snapshot = normalise_cricket_fixture(fixture([ball(1, 69), ball(4, 999, embed=False)]))
    assert snapshot.balls is not None and [item.provider_id for item in snapshot.balls] == [1, 4]
    unknown = snapshot.balls[1]
    assert unknown.ball is not None and unknown.type is ItemType.BALL
    assert (unknown.provider_type_id, unknown.result, unknown.ball.outcome) == (999, None, None)
    assert (unknown.ball.known, unknown.ball.legal, unknown.ball.runs) == (False, False, 0)
    board = snapshot.cricket
    assert board is not None and (board.innings[0].runs, board.innings[0].legal_balls) == (1, 1)
    assert board.last_six == ("1",)


def test_embedded_score_for_another_id_is_not_trusted() -> None:
    """`score_id` is the reference: an embedded row for another id defers to the table."""
    payload = ball(1, 47)
    payload["score"] = score_row(69)
    assert _detail(payload).known is False
    item = _one(payload, parse_score_rows(score_rows()))
    assert item.ball is not None and item.result == "FOUR"


def test_balls_absent_empty_and_present() -> None:
    """No `balls` key is None (never a retraction), `[]` is an empty stream."""
    payload = fixture()
    del payload["balls"]
    absent = normalise_cricket_fixture(payload)
    assert absent.balls is None and Stream.BALLS not in absent.present_streams()
    empty = normalise_cricket_fixture(fixture([]))
    assert empty.balls == () and Stream.BALLS in empty.present_streams()


def test_balls_are_deduplicated_by_id_and_ordered_by_id() -> None:
    """Wides repeat the ball number, so the id orders; a repeated id keeps its last version."""
    balls = [
        ball(7, 69, over="0.2"),
        ball(1, 17, over="0.1"),
        ball(4, 82, over="0.1"),
        ball(7, 47, over="0.2"),
    ]
    snapshot = normalise_cricket_fixture(fixture(balls))
    assert snapshot.balls is not None
    assert [(item.provider_id, item.result) for item in snapshot.balls] == [
        (1, "1 Wide"),
        (4, "No Run"),
        (7, "FOUR"),
    ]


def test_non_striker_is_the_other_batter_at_the_crease() -> None:
    """The crease slots are in fixed order; the non-striker is the one that is not striking."""
    payload = ball(1, 69, striker=46, other=75)
    payload["batsman_one_on_creeze_id"], payload["batsman_two_on_creeze_id"] = 46, 75
    assert _detail(payload).non_striker_id == 75
    payload["batsman_one_on_creeze_id"] = 12
    assert _detail(payload).non_striker_id is None


def test_away_batting_side() -> None:
    """The ball's team against localteam/visitorteam gives the batting side."""
    assert _one(ball(1, 69, team_id=AWAY)).side is Side.AWAY
    assert _one(ball(1, 69, team_id=12345)).side is None


@pytest.mark.parametrize(
    ("path", "value", "error_path"),
    [
        (("id",), "58328", "id"),
        (("super_over",), 0, "super_over"),
        (("balls", 0, "score", "runs"), True, "balls.0.score.runs"),
        (("balls", 0, "score", "ball"), None, "balls.0.score.ball"),
        (("balls", 0, "ball"), "0.1", "balls.0.ball"),
        (("balls", 0, "ball"), float("nan"), "balls.0.ball"),
        (("balls", 0, "scoreboard"), "S5", "balls.0.scoreboard"),
        (("balls", 0, "id"), -1, "balls.0.id"),
        (("runs",), {}, "runs"),
        (("runs", 0, "overs"), "20.0", "runs.0.overs"),
        (("starting_at",), "soon", "starting_at"),
    ],
)
def test_strict_types_are_typed_errors(path: tuple[str | int, ...], value: object, error_path: str) -> None:
    """A bool is not an int, text is not a number: a `ProviderPayloadError` with the field's path."""
    payload = fixture([ball(1, 69)], runs=[{"inning": 1, "team_id": AWAY, "score": 1, "overs": 0.1}])
    target: Any = payload
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    with pytest.raises(ProviderPayloadError) as caught:
        normalise_cricket_fixture(payload)
    assert caught.value.path == error_path and caught.value.fixture_id == (None if path == ("id",) else 58328)


def test_errors_in_an_envelope_are_prefixed() -> None:
    """Inside `{"data": ...}` a path starts with `data.`; an envelope without data is an error."""
    with pytest.raises(ProviderPayloadError) as caught:
        normalise_cricket_fixture({"data": fixture([{"id": 1}])})
    assert caught.value.path.startswith("data.balls.0.")
    with pytest.raises(ProviderPayloadError) as caught:
        normalise_cricket_fixture({"message": "No result(s) found"})
    assert caught.value.code == "missing"


def test_text_is_bounded_and_utf8_clean() -> None:
    """A huge or lone-surrogate note still gives a serialisable snapshot."""
    snapshot = normalise_cricket_fixture(fixture(note="\ud800" + "x" * 10_000))
    assert snapshot.result_info is not None and len(snapshot.result_info) <= 2000
    assert Snapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_list_endpoint_spoils_only_the_bad_item() -> None:
    """`normalise_cricket_fixtures` answers item by item, like the football one."""
    results = normalise_cricket_fixtures({"data": [fixture([ball(1, 69)]), {"id": "x"}]})
    assert isinstance(results[0], Snapshot)
    assert isinstance(results[1], ProviderPayloadError) and results[1].path == "data.1.id"
    assert results[1].index == 1
    assert normalise_cricket_fixtures({"message": "No result(s) found"}) == []
    with pytest.raises(ProviderPayloadError):
        normalise_cricket_fixtures("nope")


def test_parse_score_rows() -> None:
    """The `/scores` answer becomes a table by id; a bad row is a typed error with its index."""
    table = parse_score_rows(score_rows())
    assert table[17].name == "1 Wide" and not table[17].ball
    with pytest.raises(ProviderPayloadError) as caught:
        parse_score_rows({"data": [score_row(17), {**score_row(69), "noball": "0"}]})
    assert caught.value.path == "data.1.noball"
    with pytest.raises(ProviderPayloadError):
        parse_score_rows({"data": {}})
