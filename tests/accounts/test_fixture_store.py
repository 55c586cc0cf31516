"""create_fixture and load_squads against Postgres: the row a desk fixture gets, and its squads."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture, lineups_of, load_squads
from scoreline.db.tables import fixture
from tests.accounts.bodies import draft

DESK_IDS_START = 1_000_000_000_000


async def test_a_desk_fixture_row_has_everything_the_match_needs(engine: AsyncEngine) -> None:
    """Id from the desk sequence, source desk, scheduled, teams without provider ids, squads with every id."""
    parsed = FixtureDraft.model_validate(draft(competition="Harbour Cup"))
    fixture_id = await create_fixture(engine, parsed)
    async with engine.connect() as conn:
        row = (await conn.execute(select(fixture).where(fixture.c.id == fixture_id))).one()
    assert fixture_id >= DESK_IDS_START
    assert (row.source, row.scoring_mode, row.state, row.sport) == ("desk", "desk", "scheduled", "football")
    assert row.name == "Harbour FC vs Quarry Town"
    assert row.starting_at == datetime(2026, 3, 14, 15, tzinfo=UTC)
    assert row.home_team == {"id": None, "name": "Harbour FC", "short_code": "HAR"}
    assert row.away_team == {"id": None, "name": "Quarry Town", "short_code": None}
    assert row.competition == {"id": None, "name": "Harbour Cup"}
    assert row.squads == {
        "home": [
            {"id": 1, "name": "Player 1", "shirt_number": 1, "starting": True},
            {"id": 2, "name": "Player 2", "shirt_number": 2, "starting": False},
        ],
        "away": [{"id": 3, "name": "Player 1", "shirt_number": 1, "starting": True}],
    }
    assert lineups_of(row.squads) == {
        "home": {"starting": [1], "bench": [2]},
        "away": {"starting": [3], "bench": []},
    }


async def test_each_fixture_gets_a_new_id_and_its_mode(engine: AsyncEngine) -> None:
    """Two fixtures, two ids; a fixture may start provider-scored; the name given wins."""
    first = await create_fixture(engine, FixtureDraft.model_validate(draft()))
    second = await create_fixture(
        engine, FixtureDraft.model_validate(draft(mode="provider", name="Cup final"))
    )
    assert second > first
    async with engine.connect() as conn:
        row = (await conn.execute(select(fixture).where(fixture.c.id == second))).one()
    assert (row.scoring_mode, row.source, row.name, row.competition) == (
        "provider",
        "desk",
        "Cup final",
        None,
    )


async def test_load_squads_reads_desk_and_provider_fixtures(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """A desk fixture's players come back as stored; a provider fixture has its teams and no players."""
    parsed = FixtureDraft.model_validate(draft())
    fixture_id = await create_fixture(engine, parsed)
    desk_squads = await load_squads(engine, fixture_id)
    assert desk_squads is not None
    assert desk_squads.home.name == "Harbour FC"
    assert desk_squads.home.players == parsed.squads().home
    assert desk_squads.mode == "desk"

    provider_squads = await load_squads(engine, provider_fixtures[0])
    assert provider_squads is not None
    assert (provider_squads.home.id, provider_squads.home.players, provider_squads.mode) == (
        19,
        (),
        "provider",
    )
    assert await load_squads(engine, 5) is None
