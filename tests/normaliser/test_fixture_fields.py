"""Fixture base fields, scores and periods."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from activities.provider.normaliser import normalise_fixture
from domain.snapshot import PeriodKind, ScorePair, Scores, Sport
from tests.normaliser.samples import sample

pytestmark = pytest.mark.unit


def _score(
    description: str, type_id: int, participant_id: int, side: str | None, goals: int
) -> dict[str, object]:
    return {
        "id": type_id * 100_000 + participant_id,
        "fixture_id": 81000001,
        "type_id": type_id,
        "participant_id": participant_id,
        "score": {"goals": goals, "participant": side},
        "description": description,
    }


def test_base_fields() -> None:
    """Id, sport, league, season, name and kickoff come from the base fields."""
    snapshot = normalise_fixture(sample())
    assert (snapshot.fixture_id, snapshot.sport, snapshot.league_id, snapshot.season_id) == (
        81000001,
        Sport.FOOTBALL,
        501,
        23001,
    )
    assert snapshot.kickoff == datetime(2026, 3, 14, 15, 2, tzinfo=UTC)
    assert snapshot.name == "Riverside FC vs Harbour United"


def test_kickoff_prefers_the_timestamp() -> None:
    """The unix timestamp wins over `starting_at` (which follows the response timezone)."""
    fixture = sample()
    fixture["starting_at"] = "2026-03-14 17:02:00"
    assert normalise_fixture(fixture).kickoff == datetime(2026, 3, 14, 15, 2, tzinfo=UTC)


def test_kickoff_from_starting_at_is_utc() -> None:
    """Without a timestamp, `starting_at` is read as UTC (or converted when it has an offset)."""
    fixture = sample()
    del fixture["starting_at_timestamp"]
    assert normalise_fixture(fixture).kickoff == datetime(2026, 3, 14, 15, 2, tzinfo=UTC)
    fixture["starting_at"] = "2026-03-14T17:02:00+02:00"
    assert normalise_fixture(fixture).kickoff == datetime(2026, 3, 14, 15, 2, tzinfo=UTC)
    fixture["starting_at"] = None
    assert normalise_fixture(fixture).kickoff is None


def test_current_and_period_scores() -> None:
    """CURRENT is the score; the period rows and the shootout are separate pairs."""
    fixture = sample()
    fixture["scores"] = [
        _score("CURRENT", 1525, 9001, "home", 3),
        _score("CURRENT", 1525, 9002, "away", 3),
        _score("1ST_HALF", 1, 9001, "home", 1),
        _score("1ST_HALF", 1, 9002, "away", 0),
        _score("2ND_HALF", 2, 9001, "home", 2),
        _score("2ND_HALF", 2, 9002, "away", 2),
        _score("2ND_HALF_ONLY", 48996, 9001, "home", 1),
        _score("2ND_HALF_ONLY", 48996, 9002, "away", 2),
        _score("ET", 3, 9001, "home", 1),
        _score("ET", 3, 9002, "away", 1),
        _score("PENALTY_SHOOTOUT", 5, 9001, "home", 4),
        _score("PENALTY_SHOOTOUT", 5, 9002, "away", 2),
    ]
    assert normalise_fixture(fixture).scores == Scores(
        current=ScorePair(home=3, away=3),
        first_half=ScorePair(home=1, away=0),
        second_half=ScorePair(home=2, away=2),
        second_half_only=ScorePair(home=1, away=2),
        extra_time=ScorePair(home=1, away=1),
        penalties=ScorePair(home=4, away=2),
    )


def test_score_side_falls_back_on_participant_and_type_id() -> None:
    """Without `score.participant` or a description, participant id and type id decide."""
    fixture = sample()
    fixture["scores"] = [
        _score("", 1525, 9002, None, 1),
        _score("", 1525, 9001, None, 2),
        _score("SOMETHING_NEW", 777, 9001, "home", 9),
    ]
    assert normalise_fixture(fixture).scores == Scores(current=ScorePair(home=2, away=1))


def test_one_sided_score_is_not_invented() -> None:
    """A score type with a row for only one side is left out rather than completed with 0."""
    fixture = sample()
    fixture["scores"] = [_score("CURRENT", 1525, 9001, "home", 2)]
    scores = normalise_fixture(fixture).scores
    assert scores is not None and scores.current is None


def test_periods_and_running_minute() -> None:
    """Periods are kept in order; the minute is the ticking period's cumulative minute."""
    snapshot = normalise_fixture(sample("football-basic-live"))
    assert [period.kind for period in snapshot.periods or ()] == [
        PeriodKind.FIRST_HALF,
        PeriodKind.SECOND_HALF,
    ]
    assert snapshot.minute == 63
    first = (snapshot.periods or ())[0]
    assert first.started_at == datetime(2026, 3, 14, 15, 2, tzinfo=UTC) and first.ticking is False
    assert normalise_fixture(sample()).minute is None


def test_normalising_is_deterministic() -> None:
    """The same payload always gives an equal snapshot and equal JSON."""
    for name in ("football-basic", "football-correction", "football-basic-live"):
        first, second = normalise_fixture(sample(name)), normalise_fixture(sample(name))
        assert first == second and first.model_dump_json() == second.model_dump_json()
