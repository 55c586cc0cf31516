"""Whatever the provider sends, the normaliser returns a `Snapshot` or a `ProviderPayloadError`."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from activities.provider.normaliser import (
    INTERNAL_ERROR,
    ProviderPayloadError,
    normalise_fixture,
    normalise_fixtures,
)
from domain.snapshot import Snapshot
from tests.normaliser.samples import sample, sample_names

pytestmark = pytest.mark.unit

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "home",
            "away",
            "HOME",
            "CURRENT",
            "2026-03-14 15:00:00",
            "0001-01-01T00:00:00+01:00",
            "\ud800",
            "NaN",
        ]
    ),
    st.just("x" * 200_000),
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
# Field names the normaliser reads, so inserted junk lands where it is validated.
FIELD_NAMES = st.sampled_from(
    """
    id sport_id league_id season_id state_id name starting_at starting_at_timestamp result_info
    participants state scores periods events timeline meta location winner developer_name type_id
    participant_id description score goals participant started ended ticking sort_order minutes seconds
    time_added player_id player_name related_player_id related_player_name result info addition minute
    extra_minute rescinded data message
    """.split()
)

Path = tuple[str | int, ...]


def _paths(node: Any, path: Path = ()) -> list[Path]:
    found = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found.extend(_paths(child, (*path, index)))
    return found


def _get(doc: Any, path: Path) -> Any:
    # `doc` is a JSON tree; each part indexes the dict or list it walks into.
    for part in path:
        doc = doc[part]
    return doc


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> Any:
    """A real recording fixture with one to six random mutations applied."""
    doc: Any = sample(draw(st.sampled_from(sample_names())))
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        path = draw(st.sampled_from(_paths(doc)))
        operation = draw(st.sampled_from(["delete", "replace", "insert", "duplicate", "reorder"]))
        if not path:
            if operation == "replace":
                doc = draw(JSON_VALUES)
            continue
        parent, last = _get(doc, path[:-1]), path[-1]
        if operation == "delete":
            del parent[last]
        elif operation == "replace":
            parent[last] = draw(JSON_VALUES)
        elif operation == "insert" and isinstance(parent[last], dict):
            parent[last][draw(FIELD_NAMES)] = draw(JSON_VALUES)
        elif operation == "duplicate" and isinstance(parent, list) and isinstance(last, int):
            parent.insert(draw(st.integers(0, len(parent))), copy.deepcopy(parent[last]))
        elif operation == "reorder" and isinstance(parent[last], list):
            parent[last] = draw(st.permutations(parent[last]))
    return doc


def _check(result: Snapshot | ProviderPayloadError, payload: object) -> None:
    event(f"error {result.code}" if isinstance(result, ProviderPayloadError) else "snapshot")
    if isinstance(result, ProviderPayloadError):
        assert result.code != INTERNAL_ERROR, result
        assert isinstance(result.path, str) and isinstance(result.reason, str)
        return
    assert isinstance(result, Snapshot)
    assert Snapshot.model_validate_json(result.model_dump_json()) == result
    assert normalise_fixture(payload) == result  # deterministic


def _normalise(payload: object) -> Snapshot | ProviderPayloadError:
    try:
        return normalise_fixture(payload)
    except ProviderPayloadError as error:
        return error


@FUZZ
@given(mutated_fixtures())
def test_mutated_fixtures(payload: Any) -> None:
    """Mutated real fixtures give a snapshot or a typed error, never another exception."""
    _check(_normalise(payload), payload)


@settings(FUZZ, max_examples=200)
@given(JSON_VALUES)
def test_arbitrary_json(payload: Any) -> None:
    """Any JSON value at all gives a snapshot or a typed error."""
    _check(_normalise(payload), payload)


@settings(FUZZ, max_examples=100)
@given(st.lists(mutated_fixtures(), max_size=3), st.booleans())
def test_mutated_lists(items: list[Any], enveloped: bool) -> None:
    """A list endpoint answers item by item, each a snapshot or a typed error."""
    results = normalise_fixtures({"data": items} if enveloped else items)
    assert len(results) == len(items)
    for result, item in zip(results, items, strict=True):
        _check(result, item)
