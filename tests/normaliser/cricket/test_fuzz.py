"""Whatever the provider sends, the cricket normaliser returns a `Snapshot` or a typed error."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from activities.provider.cricket.normaliser import (
    ProviderPayloadError,
    normalise_cricket_fixture,
    normalise_cricket_fixtures,
    parse_score_rows,
)
from activities.provider.cricket.payload import ScoreRow
from activities.provider.normaliser import INTERNAL_ERROR
from domain.snapshot import Snapshot
from tests.normaliser.cricket.samples import final_fixture, score_rows

pytestmark = pytest.mark.unit

FUZZ = settings(
    max_examples=100,
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
            "S1",
            "S3",
            "S5",
            "T20",
            "Test",
            "Finished",
            "Aban.",
            "Stump Day 2",
            "draw",
            "no-result",
            "Run Out",
            "2024-03-22T14:30:00.000000Z",
            "0001-01-01T00:00:00+01:00",
            "\ud800",
        ]
    ),
    st.sampled_from([0.1, 19.6, 18.4, 5.65, 1e300, -0.1, 0, 1, 2**63]),
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
    id league_id season_id localteam_id visitorteam_id starting_at type status note toss_won_team_id
    winner_team_id draw_noresult total_overs_played elected super_over rpc_target rpc_overs localteam
    visitorteam runs balls inning team_id score wickets overs ball scoreboard batsman_one_on_creeze_id
    batsman_two_on_creeze_id batsman_id bowler_id batsmanout_id catchstump_id runout_by_id score_id
    batsman bowler fullname name code image_path four six bye leg_bye noball noball_runs is_wicket out
    data message
    """.split()
)

Path = tuple[str | int, ...]


@cache
def _base() -> dict[str, Any]:
    # The real final fixture cut to a few balls of each kind, so an example stays cheap.
    fixture = final_fixture()
    balls = fixture["balls"]
    kinds = {ball["score"]["name"]: ball for ball in balls}
    fixture["balls"] = [*balls[:3], *kinds.values(), *balls[-3:]]
    return fixture


@cache
def _table() -> dict[int, ScoreRow]:
    return parse_score_rows(score_rows())


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
    for part in path:
        doc = doc[part]
    return doc


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> Any:
    """The real fixture with one to six random mutations: drop keys, change types, nulls, junk."""
    doc: Any = copy.deepcopy(_base())
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        path = draw(st.sampled_from(_paths(doc)))
        operation = draw(st.sampled_from(["delete", "replace", "null", "insert", "duplicate", "reorder"]))
        if not path:
            if operation == "replace":
                doc = draw(JSON_VALUES)
            continue
        parent, last = _get(doc, path[:-1]), path[-1]
        if operation == "delete":
            del parent[last]
        elif operation == "replace":
            parent[last] = draw(JSON_VALUES)
        elif operation == "null":
            parent[last] = None
        elif operation == "insert" and isinstance(parent[last], dict):
            parent[last][draw(FIELD_NAMES)] = draw(JSON_VALUES)
        elif operation == "duplicate" and isinstance(parent, list) and isinstance(last, int):
            parent.insert(draw(st.integers(0, len(parent))), copy.deepcopy(parent[last]))
        elif operation == "reorder" and isinstance(parent[last], list):
            parent[last] = draw(st.permutations(parent[last]))
    return doc


def _normalise(payload: object, scores: dict[int, ScoreRow] | None) -> Snapshot | ProviderPayloadError:
    try:
        return normalise_cricket_fixture(payload, scores)
    except ProviderPayloadError as error:
        return error


def _check(
    result: Snapshot | ProviderPayloadError, payload: object, scores: dict[int, ScoreRow] | None
) -> None:
    event(f"error {result.code}" if isinstance(result, ProviderPayloadError) else "snapshot")
    if isinstance(result, ProviderPayloadError):
        assert result.code != INTERNAL_ERROR, result
        assert isinstance(result.path, str) and isinstance(result.reason, str)
        return
    assert isinstance(result, Snapshot)
    assert Snapshot.model_validate(result.model_dump(mode="json")) == result
    assert Snapshot.model_validate_json(result.model_dump_json()) == result
    assert normalise_cricket_fixture(payload, scores) == result  # deterministic


@FUZZ
@given(mutated_fixtures(), st.booleans())
def test_mutated_fixtures(payload: Any, with_table: bool) -> None:
    """Mutated real fixtures give a snapshot or a typed error, never another exception."""
    scores = _table() if with_table else None
    _check(_normalise(payload, scores), payload, scores)


@settings(FUZZ, max_examples=60)
@given(JSON_VALUES)
def test_arbitrary_json(payload: Any) -> None:
    """Any JSON value at all gives a snapshot or a typed error."""
    _check(_normalise(payload, None), payload, None)


@settings(FUZZ, max_examples=25)
@given(st.lists(mutated_fixtures(), max_size=3), st.booleans())
def test_mutated_lists(items: list[Any], enveloped: bool) -> None:
    """A list endpoint answers item by item, each a snapshot or a typed error."""
    results = normalise_cricket_fixtures({"data": items} if enveloped else items)
    assert len(results) == len(items)
    for result, item in zip(results, items, strict=True):
        _check(result, item, None)


@settings(FUZZ, max_examples=60)
@given(st.lists(st.one_of(st.sampled_from(score_rows()), JSON_VALUES), max_size=4))
def test_score_rows_parse_or_raise_typed(rows: list[Any]) -> None:
    """The `/scores` answer parses to a table or raises a typed error, nothing else."""
    try:
        table = parse_score_rows(rows)
    except ProviderPayloadError as error:
        assert error.path and error.code != INTERNAL_ERROR
        return
    assert all(row.id == score_id for score_id, row in table.items())
