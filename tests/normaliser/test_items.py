"""Events and timeline items: types, identity, de-duplication and order."""

from __future__ import annotations

import pytest

from activities.provider.normaliser import normalise_fixture
from domain.snapshot import Item, ItemType, Side, Stream
from tests.normaliser.samples import sample

pytestmark = pytest.mark.unit

T = ItemType

TYPE_TABLE = [
    (10, T.VAR),
    (14, T.GOAL),
    (15, T.OWN_GOAL),
    (16, T.PENALTY_GOAL),
    (17, T.MISSED_PENALTY),
    (18, T.SUBSTITUTION),
    (19, T.YELLOW_CARD),
    (20, T.RED_CARD),
    (21, T.SECOND_YELLOW),
    (22, T.PENALTY_SHOOTOUT_MISS),
    (23, T.PENALTY_SHOOTOUT_GOAL),
    (1697, T.VAR_CARD),
    (126, T.CORNER),
    (569, T.SHOT_ON_TARGET),
    (570, T.SHOT_OFF_TARGET),
    (1514, T.OFFSIDE),
    (132791, T.DELAY_START),
    (132792, T.DELAY_END),
]


def _event(fixture: dict[str, object], **changes: object) -> dict[str, object]:
    events = fixture["events"]
    assert isinstance(events, list)
    return {**events[0], **changes}


@pytest.mark.parametrize(("type_id", "item_type"), TYPE_TABLE)
def test_type_table(type_id: int, item_type: ItemType) -> None:
    """Each known provider type id maps to its domain type, keeping the provider id."""
    fixture = sample()
    fixture["events"] = [_event(fixture, type_id=type_id, type=None)]
    (item,) = normalise_fixture(fixture).events or ()
    assert (item.type, item.provider_type_id) == (item_type, type_id)


def test_unknown_type_is_other_and_kept() -> None:
    """An unknown type id becomes `other` with its provider type id; the item is not dropped."""
    fixture = sample()
    fixture["events"] = [_event(fixture, id=1, type_id=987654, type={"id": 987654, "name": "New"})]
    (item,) = normalise_fixture(fixture).events or ()
    assert (item.key, item.type, item.provider_type_id) == ((Stream.EVENTS, 1), T.OTHER, 987654)


def test_type_id_decides_not_the_type_include() -> None:
    """The `type` include is not needed (nor trusted): the type id decides."""
    fixture = sample()
    fixture["events"] = [_event(fixture, type_id=19, type="junk")]
    (item,) = normalise_fixture(fixture).events or ()
    assert item.type is T.YELLOW_CARD


def test_duplicate_id_keeps_the_last_occurrence() -> None:
    """An id listed twice in one response appears once, as its last occurrence."""
    fixture = sample()
    first = _event(fixture, id=42, minute=10, player_name="First")
    last = _event(fixture, id=42, minute=12, player_name="Last")
    fixture["events"] = [first, _event(fixture, id=43), last]
    events = normalise_fixture(fixture).events or ()
    assert [item.provider_id for item in events].count(42) == 1
    (item,) = [item for item in events if item.provider_id == 42]
    assert (item.minute, item.player_name) == (12, "Last")


def test_same_id_in_both_streams_are_two_items() -> None:
    """`events` and `timeline` are separate id spaces: the key includes the stream."""
    fixture = sample()
    fixture["events"] = [_event(fixture, id=7)]
    fixture["timeline"] = [_event(fixture, id=7, type_id=126)]
    snapshot = normalise_fixture(fixture)
    assert {item.key for item in snapshot.items()} == {(Stream.EVENTS, 7), (Stream.TIMELINE, 7)}


def test_order_is_canonical() -> None:
    """Items are ordered by match time then id, whatever order the provider used."""
    fixture = sample()
    fixture["events"] = [
        _event(fixture, id=5, minute=90, extra_minute=3),
        _event(fixture, id=4, minute=None, extra_minute=None),
        _event(fixture, id=3, minute=90, extra_minute=None),
        _event(fixture, id=2, minute=10, extra_minute=None),
        _event(fixture, id=1, minute=90, extra_minute=None),
    ]
    forward = normalise_fixture(fixture)
    assert [item.provider_id for item in forward.events or ()] == [2, 1, 3, 5, 4]
    fixture["events"].reverse()
    assert normalise_fixture(fixture) == forward


def test_item_fields() -> None:
    """A substitution carries both players, its side, minute, text fields and sort order."""
    fixture = sample()
    raw = _event(
        fixture,
        id=99,
        type_id=18,
        participant_id=9002,
        player_id=11,
        player_name="On",
        related_player_id=12,
        related_player_name="Off",
        minute=45,
        extra_minute=2,
        result=None,
        info="Tactical",
        addition="3rd Substitution",
        sort_order=3,
        rescinded=None,
    )
    fixture["events"] = [raw]
    (item,) = normalise_fixture(fixture).events or ()
    assert item == Item(
        stream=Stream.EVENTS,
        provider_id=99,
        type=T.SUBSTITUTION,
        provider_type_id=18,
        minute=45,
        extra_minute=2,
        side=Side.AWAY,
        participant_id=9002,
        player_id=11,
        player_name="On",
        related_player_id=12,
        related_player_name="Off",
        info="Tactical",
        addition="3rd Substitution",
        sort_order=3,
        rescinded=False,
    )


def test_rescinded_card_is_flagged() -> None:
    """A rescinded card stays in the stream with `rescinded=True`."""
    snapshot = normalise_fixture(sample("football-correction"))
    rescinded = [item for item in snapshot.events or () if item.rescinded]
    assert [(item.provider_id, item.type) for item in rescinded] == [(510005, T.RED_CARD)]


def test_minimal_item_fields_only() -> None:
    """Only `id` and `type_id` are required on an item."""
    fixture = sample()
    fixture["timeline"] = [{"id": 1, "type_id": 126}]
    (item,) = normalise_fixture(fixture).timeline or ()
    assert (item.minute, item.side, item.rescinded) == (None, None, False)
