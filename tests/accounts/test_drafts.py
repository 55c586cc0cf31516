"""FixtureDraft: the one gate for a new fixture's shape; squads get ids; lineups fit the sport rules."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from domain.rules import FootballState, Lineup, initial_state
from scoreline.accounts.desk_fixtures import MAX_BENCH, MAX_STARTING, FixtureDraft, lineups_of
from tests.accounts.bodies import draft, player

pytestmark = pytest.mark.unit


def errors(body: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as refused:
        FixtureDraft.model_validate(body)
    return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in refused.value.errors()]


def test_a_draft_without_ids_is_numbered_home_first() -> None:
    """Players without ids get 1, 2, 3 … in order, home then away; the title defaults to "Home vs Away"."""
    parsed = FixtureDraft.model_validate(draft())
    squads = parsed.squads()
    assert [p.id for p in squads.home] == [1, 2]
    assert [p.id for p in squads.away] == [3]
    assert parsed.title == "Harbour FC vs Quarry Town"
    assert parsed.mode == "desk"


def test_given_ids_are_kept_and_never_handed_out_again() -> None:
    """Assigned ids skip the ids already given anywhere in the fixture, and the same draft numbers the same way."""
    body = draft(
        home={"name": "Harbour FC", "players": [player(1, id=2), player(2)]},
        away={"name": "Quarry Town", "players": [player(1), player(2, id=1), player(3)]},
    )
    parsed = FixtureDraft.model_validate(body)
    assert [p.id for p in parsed.squads().home] == [2, 3]
    assert [p.id for p in parsed.squads().away] == [4, 1, 5]
    assert parsed.squads() == parsed.squads()


def test_the_same_shirt_number_is_fine_on_opposite_sides() -> None:
    """Shirt numbers are unique per side only."""
    assert FixtureDraft.model_validate(draft()).home.players[0].shirt_number == 1


def test_a_full_squad_is_accepted() -> None:
    """11 starting and 23 on the bench per side: the most a lineup holds."""
    squad = [player(n, starting=n <= MAX_STARTING) for n in range(1, MAX_STARTING + MAX_BENCH + 1)]
    parsed = FixtureDraft.model_validate(
        draft(home={"name": "A", "players": squad}, away={"name": "B", "players": squad})
    )
    assert len(parsed.squads().away) == 34


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        ({"sport": "golf"}, "sport", "'football' or 'cricket'"),
        ({"sport": 1}, "sport", "'football' or 'cricket'"),
        ({"kickoff": "2026-03-14T15:00:00"}, "kickoff", "timezone"),
        ({"kickoff": 1773500400}, "kickoff", "valid datetime"),
        ({"kickoff": "next saturday"}, "kickoff", "ISO 8601"),
        ({"mode": "auto"}, "mode", "'provider' or 'desk'"),
        ({"referee": "Mr X"}, "referee", "Extra inputs"),
        ({"name": "x" * 201}, "name", "at most 200"),
        ({"competition": ""}, "competition", "at least 1"),
        ({"home": {"name": "   "}}, "home.name", "at least 1"),
        ({"home": {"name": "x" * 101}}, "home.name", "at most 100"),
        ({"home": {"name": "A", "short_code": "x" * 11}}, "home.short_code", "at most 10"),
        ({"home": {"name": "A", "colour": "red"}}, "home.colour", "Extra inputs"),
        (
            {"home": {"name": "A", "players": [player(1, position="GK")]}},
            "home.players.0.position",
            "Extra inputs",
        ),
        ({"home": {"name": "A", "players": [player("7")]}}, "home.players.0.shirt_number", "valid integer"),
        ({"home": {"name": "A", "players": [player(7.0)]}}, "home.players.0.shirt_number", "valid integer"),
        (
            {"home": {"name": "A", "players": [player(1000)]}},
            "home.players.0.shirt_number",
            "less than or equal",
        ),
        (
            {"home": {"name": "A", "players": [player(1, starting=1)]}},
            "home.players.0.starting",
            "valid boolean",
        ),
        ({"home": {"name": "A", "players": [player(1, id=0)]}}, "home.players.0.id", "greater than 0"),
        ({"home": {"name": "A", "players": [player(1, id="9")]}}, "home.players.0.id", "valid integer"),
        (
            {"home": {"name": "A", "players": [player(1, name="x" * 101)]}},
            "home.players.0.name",
            "at most 100",
        ),
        (
            {"home": {"name": "A", "players": [player(7), player(7)]}},
            "home.players",
            "shirt number used more than once: 7",
        ),
        (
            {"home": {"name": "A", "players": [player(1, id=5), player(2, id=5)]}},
            "home.players",
            "player id used more than once: 5",
        ),
        (
            {"home": {"name": "A", "players": [player(n) for n in range(12)]}},
            "home.players",
            "12 starting players",
        ),
        (
            {"home": {"name": "A", "players": [player(n, starting=False) for n in range(24)]}},
            "home.players",
            "24 players on the bench",
        ),
        (
            {"home": {"name": "A", "players": [player(n, starting=False) for n in range(41)]}},
            "home.players",
            "at most 40",
        ),
        ({"home": {"name": "quarry town"}}, "", "home and away must be different teams"),
        (
            {
                "home": {"name": "A", "players": [player(1, id=9)]},
                "away": {"name": "B", "players": [player(2, id=9)]},
            },
            "",
            "player id used more than once: 9",
        ),
    ],
)
def test_bad_shapes_are_refused_with_their_path(changes: dict[str, Any], path: str, message: str) -> None:
    """Each bad field is reported at its own path with a message that says what is wrong."""
    found = errors(draft(**changes))
    assert any(p == path and message in m for p, m in found), found


def test_lineups_of_gives_the_rules_their_lineups() -> None:
    """Starting players and the bench per side, as `initial_state` takes them; the state checks those players."""
    squads = FixtureDraft.model_validate(draft()).squads().model_dump(mode="json")
    lineups = lineups_of(squads)
    assert lineups == {"home": {"starting": [1], "bench": [2]}, "away": {"starting": [3], "bench": []}}
    state = initial_state("football", lineups=lineups)
    assert isinstance(state, FootballState)
    assert state.lineups.home == Lineup(starting=(1,), bench=(2,))


def test_a_side_without_starters_is_left_out() -> None:
    """A side whose players are all on the bench (or with no players) is not checked by the rules."""
    squads = {"home": [{"id": 4, "name": "Sub", "shirt_number": 12, "starting": False}], "away": []}
    assert lineups_of(squads) == {}
    assert lineups_of(None) == {}
    assert lineups_of({}) == {}


@pytest.mark.parametrize("sport", ["football", "cricket"])
def test_every_accepted_squad_makes_a_valid_lineup(sport: str) -> None:
    """The largest squads a draft accepts still fit the rules' Lineup bounds, in both sports."""
    squad = [player(n, starting=n <= MAX_STARTING) for n in range(1, MAX_STARTING + MAX_BENCH + 1)]
    parsed = FixtureDraft.model_validate(
        draft(sport=sport, home={"name": "A", "players": squad}, away={"name": "B", "players": squad})
    )
    state = initial_state(parsed.sport, lineups=lineups_of(parsed.squads().model_dump(mode="json")))
    assert state.lineups.away is not None
    assert len(state.lineups.away.bench) == MAX_BENCH
