"""The ingest's decision, pure: what one snapshot adds to a log, given what the log already holds."""

from __future__ import annotations

from typing import Any

import pytest

from activities.ingest.plan import MISSES_TO_RETRACT, Board, EventKey, KnownEvent, body_hash, item_body, plan
from domain.snapshot import Item, ItemType, MatchState, ScorePair, Scores, Snapshot, Sport, Stream

pytestmark = pytest.mark.unit

GOAL = Item(
    stream=Stream.EVENTS, provider_id=1, type=ItemType.GOAL, provider_type_id=14, minute=12, side="home"
)
CARD = Item(
    stream=Stream.EVENTS,
    provider_id=2,
    type=ItemType.YELLOW_CARD,
    provider_type_id=19,
    minute=30,
    side="away",
)


def snapshot(*events: Item, timeline: tuple[Item, ...] | None = None, **fields: Any) -> Snapshot:
    return Snapshot(
        sport=Sport.FOOTBALL,
        fixture_id=7,
        state=fields.pop("state", MatchState.LIVE_FIRST_HALF),
        events=events,
        timeline=timeline,
        **fields,
    )


def known(
    item: Item, *, id: int = 1, missing: int = 0, retracted: bool = False
) -> dict[EventKey, KnownEvent]:
    body = item_body(item)
    return {
        (item.stream.value, item.provider_id): KnownEvent(
            id=id,
            body=body,
            body_hash=body_hash(body),
            missing_count=missing,
            retracted=retracted,
            first_seq=1,
        )
    }


def test_new_items_are_inserts_and_the_provider_score_and_state_move_the_board() -> None:
    """Unknown ids are inserted; the board takes the provider's state and current score."""
    decided = plan(
        snapshot(GOAL, CARD, scores=Scores(current=ScorePair(home=1, away=0))),
        {},
        Board(version=3, state="scheduled"),
    )
    assert decided.inserts == [GOAL, CARD]
    assert (decided.board.state, decided.board.home, decided.board.away) == ("live_first_half", 1, 0)
    assert decided.state_changed and decided.score_changed


def test_a_material_change_is_an_amendment_and_anything_else_is_quiet() -> None:
    """A moved minute amends the event; a changed player name only updates it quietly."""
    moved = plan(snapshot(GOAL.model_copy(update={"minute": 13})), known(GOAL), Board())
    assert [(a.item.minute, a.changed) for a in moved.amendments] == [(13, ("minute",))]
    assert moved.quiet_updates == []
    renamed = plan(snapshot(GOAL.model_copy(update={"player_name": "N. Alvarez"})), known(GOAL), Board())
    assert renamed.amendments == [] and [a.changed for a in renamed.quiet_updates] == [()]


def test_an_item_missing_from_its_stream_is_retracted_only_on_the_second_listing() -> None:
    """One odd response counts a miss; the next one without the item retracts it."""
    first = plan(snapshot(CARD), known(GOAL), Board())
    assert [k.id for k in first.misses] == [1] and first.retractions == []
    second = plan(snapshot(CARD), known(GOAL, missing=MISSES_TO_RETRACT - 1), Board())
    assert [k.id for k in second.retractions] == [1] and second.misses == []


def test_an_absent_relation_never_counts_a_miss() -> None:
    """No `events` in the response (include dropped) is not an empty list: nothing is missed."""
    decided = plan(
        Snapshot(sport=Sport.FOOTBALL, fixture_id=7, state=MatchState.LIVE_FIRST_HALF), known(GOAL), Board()
    )
    assert decided.misses == [] and decided.retractions == []


def test_a_retracted_item_that_comes_back_is_restored_by_an_amendment() -> None:
    """The provider lists a retracted goal again: one amendment, marked restored."""
    decided = plan(snapshot(GOAL), known(GOAL, retracted=True), Board())
    assert [(a.restored, a.item) for a in decided.amendments] == [(True, GOAL)]


def test_a_snapshot_without_scores_keeps_the_stored_score() -> None:
    """No `scores` relation: the board keeps what it had; an empty current score is 0-0."""
    kept = plan(snapshot(), {}, Board(home=2, away=1))
    assert (kept.board.home, kept.board.away, kept.score_changed) == (2, 1, False)
    reset = plan(snapshot(scores=Scores()), {}, Board(home=2, away=1))
    assert (reset.board.home, reset.board.away) == (0, 0)
