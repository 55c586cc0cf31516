"""An absent relation (include not honoured) is told apart from an empty one."""

from __future__ import annotations

import pytest

from activities.provider.normaliser import normalise_fixture
from domain.snapshot import Side, Stream, Team
from tests.normaliser.samples import sample

pytestmark = pytest.mark.unit

RELATIONS = ["participants", "scores", "periods", "events", "timeline"]


@pytest.mark.parametrize("relation", RELATIONS)
def test_absent_relation_is_none(relation: str) -> None:
    """A relation missing from the payload is `None` on the snapshot."""
    fixture = sample()
    del fixture[relation]
    assert getattr(normalise_fixture(fixture), relation) is None


@pytest.mark.parametrize("relation", RELATIONS)
def test_null_relation_is_treated_as_absent(relation: str) -> None:
    """A `null` relation is absent too: it must never look like "everything was removed"."""
    fixture = sample()
    fixture[relation] = None
    assert getattr(normalise_fixture(fixture), relation) is None


@pytest.mark.parametrize("relation", ["periods", "events", "timeline"])
def test_empty_relation_is_an_empty_tuple(relation: str) -> None:
    """An included but empty relation is `()`, which the ingest may diff against."""
    fixture = sample()
    fixture[relation] = []
    assert getattr(normalise_fixture(fixture), relation) == ()


def test_empty_scores_and_participants_are_present_but_empty() -> None:
    """Empty `scores` and `participants` are present, with nothing in them."""
    fixture = sample()
    fixture["scores"] = []
    fixture["participants"] = []
    snapshot = normalise_fixture(fixture)
    assert snapshot.scores is not None and snapshot.scores.current is None
    assert snapshot.participants is not None and snapshot.participants.home is None


def test_present_streams_names_only_included_streams() -> None:
    """`present_streams` says which streams may be diffed for removals."""
    fixture = sample()
    del fixture["timeline"]
    snapshot = normalise_fixture(fixture)
    assert snapshot.present_streams() == {Stream.EVENTS}
    assert all(item.stream is Stream.EVENTS for item in snapshot.items())
    fixture["events"] = []
    assert normalise_fixture(fixture).present_streams() == {Stream.EVENTS}


def test_participants_by_location() -> None:
    """Home and away come from `meta.location`, with id, name, short code and image."""
    snapshot = normalise_fixture(sample())
    assert snapshot.participants is not None
    assert snapshot.participants.home == Team(
        id=9001,
        name="Riverside FC",
        short_code="RIV",
        image_path="https://cdn.example.invalid/teams/9001.png",
        winner=True,
    )
    assert snapshot.participants.away is not None and snapshot.participants.away.id == 9002


def test_participant_without_location_gives_no_side() -> None:
    """Without a location nobody is home, and items of that team have no side."""
    fixture = sample()
    for participant in fixture["participants"]:
        participant["meta"] = {"location": None}
    snapshot = normalise_fixture(fixture)
    assert snapshot.participants is not None and snapshot.participants.home is None
    assert snapshot.events and all(item.side is None for item in snapshot.events)
    assert all(item.participant_id is not None for item in snapshot.events)


def test_sides_without_participants_include() -> None:
    """Events keep their participant id but have no side when participants are absent."""
    fixture = sample()
    del fixture["participants"]
    snapshot = normalise_fixture(fixture)
    assert snapshot.events and {item.side for item in snapshot.events} == {None}
    with_participants = normalise_fixture(sample())
    assert with_participants.events and {item.side for item in with_participants.events} == {
        Side.HOME,
        Side.AWAY,
    }
