"""Anything that is not a fixture is a `ProviderPayloadError` naming the first bad field."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest

from activities.provider.normaliser import (
    INTERNAL_ERROR,
    ProviderPayloadError,
    normalise_fixture,
    normalise_fixtures,
)
from activities.provider.payload import MAX_LONG_TEXT, MAX_SHORT_TEXT
from domain.snapshot import Snapshot
from tests.normaliser.samples import sample

pytestmark = pytest.mark.unit


def _error(payload: object) -> ProviderPayloadError:
    with pytest.raises(ProviderPayloadError) as caught:
        normalise_fixture(payload)
    assert caught.value.code != INTERNAL_ERROR
    return caught.value


@pytest.mark.parametrize("payload", [None, [], [sample()], "fixture", 7, 1.5, math.nan, True, {}])
def test_non_fixtures_fail_at_the_root_or_id(payload: object) -> None:
    """JSON values that are not fixture objects fail on the payload itself (or its missing id)."""
    assert _error(payload).path in ("", "id")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("minute", "12"),
        ("minute", True),
        ("minute", 12.0),
        ("minute", -1),
        ("minute", math.nan),
        ("minute", []),
    ],
)
def test_bad_event_field_is_named_by_its_path(field: str, value: object) -> None:
    """A bad field inside a relation is named as a dotted path, e.g. `events.3.minute`."""
    fixture = sample()
    fixture["events"][3][field] = value
    error = _error(fixture)
    assert error.path == f"events.3.{field}"
    assert error.fixture_id == 81000001
    assert str(error).startswith("events.3.minute: ")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("id",), "81000001"),
        (("id",), True),
        (("id",), 2**64),
        (("league_id",), 1.0),
        (("state_id",), False),
        (("starting_at",), "not a date"),
        (("starting_at",), "9" * 10_000),
        (("starting_at_timestamp",), 10**20),
        (("participants", 1, "id"), None),
        (("participants", 0, "meta"), "home"),
        (("scores", 0, "score", "goals"), -1),
        (("scores", 0, "score", "participant"), "HOME"),
        (("periods", 1, "started"), "1773504240"),
        (("timeline", 0, "type_id"), None),
        (("events",), {"0": {}}),
        (("events", 0, "rescinded"), 1),
    ],
)
def test_bad_field_paths(path: tuple[str | int, ...], value: object) -> None:
    """Type and range violations anywhere are reported at the exact field."""
    fixture = sample()
    target: Any = fixture
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    assert _error(fixture).path == ".".join(map(str, path))


def test_envelope_is_unwrapped_and_paths_say_so() -> None:
    """A `{"data": {...}}` response is accepted; its error paths start with `data.`."""
    fixture = sample()
    assert normalise_fixture({"data": fixture, "timezone": "UTC"}) == normalise_fixture(fixture)
    fixture["events"][0]["id"] = "x"
    assert _error({"data": fixture}).path == "data.events.0.id"


def test_no_result_envelope_is_an_error_for_one_fixture() -> None:
    """SportMonks' "No result(s)" body (no `data`) is an error for a single-fixture call."""
    error = _error({"message": "No result(s) found matching your request.", "timezone": "UTC"})
    assert (error.path, error.code) == ("data", "missing")


def test_unsupported_sport() -> None:
    """A sport other than football is refused by name."""
    fixture = sample()
    fixture["sport_id"] = 2
    error = _error(fixture)
    assert (error.path, error.code) == ("sport_id", "unsupported_sport")


def test_list_endpoint_isolates_bad_items() -> None:
    """One malformed fixture in a list spoils only itself, and says where it was."""
    bad = sample()
    bad["events"][1]["minute"] = "x"
    results = normalise_fixtures({"data": [sample(), bad, "junk", sample("football-correction")]})
    assert [type(result) for result in results] == [
        Snapshot,
        ProviderPayloadError,
        ProviderPayloadError,
        Snapshot,
    ]
    error = results[1]
    assert isinstance(error, ProviderPayloadError)
    assert (error.path, error.index, error.fixture_id) == ("data.1.events.1.minute", 1, 81000001)
    assert normalise_fixtures([sample()]) == [normalise_fixture(sample())]


@pytest.mark.parametrize("data", [{"message": "No result(s) found"}, {"data": []}, []])
def test_list_endpoint_empty_forms(data: object) -> None:
    """The empty list and the "No result(s)" body both mean no fixtures."""
    assert normalise_fixtures(data) == []


@pytest.mark.parametrize("data", [None, "x", 3, {"data": "x"}, {"foo": 1}])
def test_list_endpoint_bad_container(data: object) -> None:
    """A container that is not a list or an envelope raises `ProviderPayloadError`."""
    with pytest.raises(ProviderPayloadError):
        normalise_fixtures(data)


def test_error_pickles_and_serialises() -> None:
    """The error survives pickling (process pools) and has a JSON-ready form."""
    error = ProviderPayloadError("events.3.minute", "bad", "int_type", 2, 5)
    again = pickle.loads(pickle.dumps(error))
    assert (
        again.to_dict()
        == error.to_dict()
        == {
            "path": "events.3.minute",
            "reason": "bad",
            "code": "int_type",
            "index": 2,
            "fixture_id": 5,
        }
    )


def test_huge_strings_are_cut() -> None:
    """Free text is bounded, so a snapshot stays compact."""
    fixture = sample()
    fixture["name"] = "n" * 1_000_000
    fixture["events"][0]["info"] = "i" * 1_000_000
    snapshot = normalise_fixture(fixture)
    assert snapshot.name == "n" * MAX_SHORT_TEXT
    assert snapshot.events is not None
    assert {len(item.info or "") for item in snapshot.events} >= {MAX_LONG_TEXT}


def test_lone_surrogates_do_not_break_serialisation() -> None:
    """`"\\ud800"` is valid JSON; the snapshot must still serialise to JSON."""
    fixture = sample()
    fixture["events"][0]["player_name"] = "Jo\ud800e"
    snapshot = normalise_fixture(fixture)
    assert Snapshot.model_validate_json(snapshot.model_dump_json()) == snapshot
