"""The `fixture` row as the provider describes it: its facts, refreshed without taking a match's score.

Two writers refresh fixture rows from the provider:

- the ingest of one snapshot, which upserts its fixture first (and so takes the row lock every
  writer of that match's log takes). It reads the scoring mode back under that lock: while desks
  own the score (`desk` mode) only the fixture's facts (name, kickoff, league, teams) change — the
  state is the desks' to move, and the caller writes nothing else;
- the fixture sync, which lists a day's fixtures every minute. It writes them in one statement,
  only the rows that differ from what is stored, and never a fixture that already has a scoreboard:
  that match's own ingest keeps its row fresh, and the sync must not hold the lock a live ingest or
  a desk commit is waiting for.

A relation the provider left out (teams, league) keeps its stored value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, func, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.rules import Mode
from domain.snapshot import Snapshot, Team
from scoreline.db.tables import fixture


def fixture_values(snapshot: Snapshot) -> dict[str, Any]:
    """The columns a provider snapshot sets on its fixture row."""
    teams = snapshot.participants
    return {
        "id": snapshot.fixture_id,
        "sport": snapshot.sport.value,
        "league_id": snapshot.league_id,
        "season_id": snapshot.season_id,
        "name": snapshot.name or f"fixture {snapshot.fixture_id}",
        "starting_at": snapshot.kickoff,
        "state": snapshot.state.value,
        "provider_state_id": snapshot.provider_state_id,
        "home_team": _team(teams.home) if teams and teams.home else None,
        "away_team": _team(teams.away) if teams and teams.away else None,
    }


async def upsert_fixture(conn: AsyncConnection, snapshot: Snapshot) -> Mode:
    """Insert or refresh (and lock) the fixture row; returns who owns the score now.

    In `desk` mode the stored state and provider state id stay: only the facts are refreshed.
    """
    statement = insert(fixture).values(**fixture_values(snapshot))
    excluded = statement.excluded
    desk_owned = fixture.c.scoring_mode == "desk"
    mode = await conn.scalar(
        statement.on_conflict_do_update(
            index_elements=[fixture.c.id],
            set_={
                "name": excluded.name,
                "starting_at": func.coalesce(excluded.starting_at, fixture.c.starting_at),
                "state": case((desk_owned, fixture.c.state), else_=excluded.state),
                "provider_state_id": case(
                    (desk_owned, fixture.c.provider_state_id), else_=excluded.provider_state_id
                ),
                "league_id": func.coalesce(excluded.league_id, fixture.c.league_id),
                "season_id": func.coalesce(excluded.season_id, fixture.c.season_id),
                "home_team": func.coalesce(excluded.home_team, fixture.c.home_team),
                "away_team": func.coalesce(excluded.away_team, fixture.c.away_team),
                "updated_at": func.now(),
            },
        ).returning(fixture.c.scoring_mode)
    )
    return "desk" if mode == "desk" else "provider"


# Rows that differ from the stored ones and belong to no match with a scoreboard, inserted or
# updated in one statement. Filtering before the INSERT (not in ON CONFLICT … WHERE) matters: a
# conflicting row is locked even when the DO UPDATE condition is false.
_SYNC = text(
    """
    WITH listed AS (
        SELECT * FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(
            id bigint, sport text, league_id bigint, season_id bigint, name text,
            starting_at timestamptz, state text, provider_state_id integer,
            home_team jsonb, away_team jsonb)
    ), changed AS (
        SELECT r.* FROM listed r LEFT JOIN fixture f ON f.id = r.id
        WHERE NOT EXISTS (SELECT 1 FROM scoreboard s WHERE s.fixture_id = r.id)
          AND (f.id IS NULL OR (
                r.name, COALESCE(r.starting_at, f.starting_at),
                CASE WHEN f.scoring_mode = 'desk' THEN f.state ELSE r.state END,
                CASE WHEN f.scoring_mode = 'desk' THEN f.provider_state_id ELSE r.provider_state_id END,
                COALESCE(r.league_id, f.league_id), COALESCE(r.season_id, f.season_id),
                COALESCE(r.home_team, f.home_team), COALESCE(r.away_team, f.away_team)
              ) IS DISTINCT FROM (
                f.name, f.starting_at, f.state, f.provider_state_id,
                f.league_id, f.season_id, f.home_team, f.away_team)
          )
    )
    INSERT INTO fixture AS f (id, sport, league_id, season_id, name, starting_at, state,
                              provider_state_id, home_team, away_team)
    SELECT id, sport, league_id, season_id, name, starting_at, state, provider_state_id,
           home_team, away_team
    FROM changed
    ON CONFLICT (id) DO UPDATE SET
        name = excluded.name,
        starting_at = COALESCE(excluded.starting_at, f.starting_at),
        state = CASE WHEN f.scoring_mode = 'desk' THEN f.state ELSE excluded.state END,
        provider_state_id = CASE WHEN f.scoring_mode = 'desk' THEN f.provider_state_id
                                 ELSE excluded.provider_state_id END,
        league_id = COALESCE(excluded.league_id, f.league_id),
        season_id = COALESCE(excluded.season_id, f.season_id),
        home_team = COALESCE(excluded.home_team, f.home_team),
        away_team = COALESCE(excluded.away_team, f.away_team),
        updated_at = now()
    """
)


async def sync_fixtures(conn: AsyncConnection, snapshots: Sequence[Snapshot]) -> int:
    """Write a fixture list's changed rows in one statement; returns how many were written."""
    if not snapshots:
        return 0
    rows = [fixture_values(snapshot) for snapshot in snapshots]
    result = await conn.execute(_SYNC, {"rows": json.dumps(rows, default=_json_default)})
    return result.rowcount


def _team(team: Team) -> dict[str, Any]:
    return {"id": team.id, "name": team.name, "short_code": team.short_code, "image": team.image_path}


def _json_default(value: object) -> str:
    """Kickoffs are datetimes: ISO 8601, which `timestamptz` reads back exactly."""
    isoformat = getattr(value, "isoformat", None)
    if isoformat is None:
        raise TypeError(f"cannot send {type(value).__name__} as JSON")
    return str(isoformat())
