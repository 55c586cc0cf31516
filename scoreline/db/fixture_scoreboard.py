"""A fixture with its scoreboard: the one join every reader of a match's stored state selects from.

It lives beside the tables rather than in the read model because its readers sit on both sides of
the import contracts (the worker's ingest, the workflow starter, the read model), and every one of
them may import `scoreline.db`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, func, select

from scoreline.db.tables import fixture, scoreboard

match_state = func.coalesce(scoreboard.c.state, fixture.c.state)
"""The scoreboard is the versioned fold of the log, so its state wins; the fixture's own state
covers a match with no log yet."""

stored_board: tuple[ColumnElement[Any], ...] = (
    scoreboard.c.version,
    scoreboard.c.state,
    scoreboard.c.home_score,
    scoreboard.c.away_score,
    scoreboard.c.body,
)
"""Where the match's log stands and what it adds up to: all NULL before its first entry."""

match_listing: tuple[ColumnElement[Any], ...] = (
    fixture.c.id,
    fixture.c.name,
    fixture.c.sport,
    fixture.c.starting_at,
    fixture.c.home_team,
    fixture.c.away_team,
    fixture.c.competition,
    fixture.c.league_id,
    fixture.c.season_id,
    match_state.label("state"),
    scoreboard.c.home_score,
    scoreboard.c.away_score,
)
"""What every list of matches shows of each: who, when, in what competition, its state and score."""


def select_fixture_with_scoreboard(*columns: ColumnElement[Any]) -> Select[Any]:
    """`columns` of every fixture, left-joined to its scoreboard (NULL until the first entry)."""
    return select(*columns).select_from(
        fixture.outerjoin(scoreboard, scoreboard.c.fixture_id == fixture.c.id)
    )
