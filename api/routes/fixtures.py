"""Desk-scored fixtures: an operator creates one; its desks read the squads to pick players from.

Creating a fixture writes only the fixture row (no match data), so it is done here, not through a
workflow; the match workflow takes the fixture from there like any other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict

from api.auth import OperatorDep, SenderDep, require_fixture
from api.deps import EngineDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from domain.rules import Mode, Sport
from domain.rules.commands import MAX_ID
from scoreline.accounts.desk_fixtures import (
    FixtureDraft,
    FixtureSquads,
    SquadTeam,
    create_fixture,
    load_squads,
)

router = APIRouter(prefix="/v1/fixtures", tags=["fixtures"], route_class=TokenFirstRoute)

FixtureId = Annotated[int, Path(ge=1, le=MAX_ID, description="The fixture id.")]

_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or an unknown or revoked one."},
    403: {"description": "The token may not do this."},
}


class CreatedFixture(BaseModel):
    """The new fixture, with every player's id (assigned ones included) for the desks."""

    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    sport: Sport
    mode: Mode
    kickoff: datetime
    competition: str | None
    home: SquadTeam
    away: SquadTeam


@router.post("", status_code=201, response_model=CreatedFixture, responses=_AUTH_ERRORS)
async def create(*, draft: FixtureDraft, engine: EngineDep, operator: OperatorDep) -> CreatedFixture:
    fixture_id = await create_fixture(engine, draft)
    squads = draft.squads()
    return CreatedFixture(
        id=fixture_id,
        name=draft.title,
        sport=draft.sport,
        mode=draft.mode,
        kickoff=draft.kickoff,
        competition=draft.competition,
        home=SquadTeam(name=draft.home.name, short_code=draft.home.short_code, players=squads.home),
        away=SquadTeam(name=draft.away.name, short_code=draft.away.short_code, players=squads.away),
    )


@router.get(
    "/{fixture_id}/squads",
    response_model=FixtureSquads,
    responses={**_AUTH_ERRORS, 404: {"description": "No such fixture."}},
)
async def squads(*, fixture_id: FixtureId, engine: EngineDep, sender: SenderDep) -> FixtureSquads:
    require_fixture(sender, fixture_id)
    found = await load_squads(engine, fixture_id)
    if found is None:
        raise ApiError(404, "fixture_not_found", f"no fixture with id {fixture_id}")
    return found
