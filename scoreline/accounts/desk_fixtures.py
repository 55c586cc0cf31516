"""Fixtures no provider knows: an operator drafts one, the desks score it.

`FixtureDraft` is the one gate for a new fixture's shape: the API body and `scoreline fixtures
create` both go through it, so both refuse the same things. It is strict like the desk commands
("7" is not 7, 1 is not true, unknown fields are errors) and bounds every string and list, because
whatever passes ends up in the fixture row and in every desk's player picker.

Player ids: a player given without an `id` gets the smallest positive integer no player of the
fixture uses, in order (home players first, then away, each in list order). So a squad with no ids
at all is numbered 1, 2, 3 …, and ids given explicitly (say the provider's, for a fixture it
covers) are kept and never handed out twice. Ids must be unique across the whole fixture, because
a desk command names a player by id alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from itertools import count
from typing import Annotated, Any, Self

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.rules import Mode, Sport
from domain.rules.commands import MAX_ID, Side
from scoreline.db.tables import desk_fixture_id, fixture
from scoreline.logging import get_logger

MAX_PLAYERS = 40
"""A bound on the list's shape, checked first; the starting and bench limits below bind before it."""
MAX_STARTING = 11
MAX_BENCH = 23
"""The bench bound of `domain.rules.Lineup`: every squad we accept must become a valid lineup."""

log = get_logger("scoreline.accounts.desk_fixtures")

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
FixtureName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortCode = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=10)]
PlayerId = Annotated[int, Field(gt=0, le=MAX_ID)]
ShirtNumber = Annotated[int, Field(ge=0, le=999)]
LineupsJson = dict[str, dict[str, list[int]]]
"""`{"home": {"starting": [ids], "bench": [ids]}, ...}`, as `domain.rules.initial_state` takes it."""


def _iso_datetime(value: object) -> object:
    """JSON has no date type: take ISO 8601 text (API body, command line) or a datetime, not numbers."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError(
                "datetime_from_iso", "not an ISO 8601 date-time (e.g. 2026-03-14T15:00:00+00:00)"
            ) from None
    return value


Kickoff = Annotated[AwareDatetime, BeforeValidator(_iso_datetime)]


class _Draft(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class PlayerDraft(_Draft):
    """One player of a side's squad; `id` is assigned when left out (see the module docstring)."""

    id: PlayerId | None = None
    name: Name
    shirt_number: ShirtNumber
    starting: bool


class TeamDraft(_Draft):
    """One side: its name, an optional short code, and its squad (may be empty)."""

    name: Name
    short_code: ShortCode | None = None
    players: list[PlayerDraft] = Field(default_factory=list, max_length=MAX_PLAYERS)

    @field_validator("players")
    @classmethod
    def _one_squad(cls, players: list[PlayerDraft]) -> list[PlayerDraft]:
        _refuse_repeats("shirt number", (p.shirt_number for p in players))
        _refuse_repeats("player id", (p.id for p in players if p.id is not None))
        starting = sum(p.starting for p in players)
        if starting > MAX_STARTING:
            raise PydanticCustomError(
                "too_many_starting",
                "{count} starting players; at most {limit}",
                {"count": starting, "limit": MAX_STARTING},
            )
        if len(players) - starting > MAX_BENCH:
            raise PydanticCustomError(
                "too_many_on_bench",
                "{count} players on the bench; at most {limit}",
                {"count": len(players) - starting, "limit": MAX_BENCH},
            )
        return players


class SquadPlayer(BaseModel):
    """A player as the fixture row stores it: the id is always known."""

    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    shirt_number: int
    starting: bool


class Squads(BaseModel):
    """`fixture.squads`: both sides' players."""

    model_config = ConfigDict(frozen=True)

    home: tuple[SquadPlayer, ...] = ()
    away: tuple[SquadPlayer, ...] = ()


class FixtureDraft(_Draft):
    """A new fixture, as an operator describes it. `kickoff` must carry a UTC offset."""

    sport: Sport
    home: TeamDraft
    away: TeamDraft
    kickoff: Kickoff
    mode: Mode = "desk"
    competition: Name | None = None
    name: FixtureName | None = None

    @model_validator(mode="after")
    def _two_sides(self) -> Self:
        if self.home.name.casefold() == self.away.name.casefold():
            raise PydanticCustomError("same_teams", "home and away must be different teams")
        given = (p.id for team in (self.home, self.away) for p in team.players if p.id is not None)
        _refuse_repeats("player id", given)
        return self

    @property
    def title(self) -> str:
        """The fixture's name: the one given, else "Home vs Away"."""
        return self.name or f"{self.home.name} vs {self.away.name}"

    def squads(self) -> Squads:
        """Both squads with every id filled in; the same draft always gets the same ids."""
        taken = {p.id for team in (self.home, self.away) for p in team.players if p.id is not None}
        fresh: Iterator[int] = (i for i in count(1) if i not in taken)

        def numbered(team: TeamDraft) -> tuple[SquadPlayer, ...]:
            return tuple(
                SquadPlayer(
                    id=next(fresh) if p.id is None else p.id,
                    name=p.name,
                    shirt_number=p.shirt_number,
                    starting=p.starting,
                )
                for p in team.players
            )

        return Squads(home=numbered(self.home), away=numbered(self.away))


class SquadTeam(BaseModel):
    """One side of a fixture with its players, as a desk app shows it."""

    model_config = ConfigDict(frozen=True)

    id: int | None = None
    name: str | None = None
    short_code: str | None = None
    players: tuple[SquadPlayer, ...] = ()


class FixtureSquads(BaseModel):
    """`GET /v1/fixtures/{id}/squads`: a fixture's sides and players (none for a provider fixture)."""

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    sport: str
    mode: Mode
    home: SquadTeam
    away: SquadTeam


async def create_fixture(engine: AsyncEngine, draft: FixtureDraft) -> int:
    """Insert the draft as a scheduled desk fixture with an id from `desk_fixture_id`; return the id."""
    statement = (
        fixture.insert()
        .values(
            id=desk_fixture_id.next_value(),
            sport=draft.sport,
            name=draft.title,
            starting_at=draft.kickoff,
            home_team=_team_json(draft.home),
            away_team=_team_json(draft.away),
            competition=None if draft.competition is None else {"id": None, "name": draft.competition},
            state="scheduled",
            source="desk",
            scoring_mode=draft.mode,
            squads=draft.squads().model_dump(mode="json"),
        )
        .returning(fixture.c.id)
    )
    async with engine.begin() as conn:
        fixture_id: int = (await conn.execute(statement)).scalar_one()
    log.info("fixture.created", fixture_id=fixture_id, name=draft.title, sport=draft.sport, mode=draft.mode)
    return fixture_id


async def load_squads(engine: AsyncEngine, fixture_id: int) -> FixtureSquads | None:
    """The fixture's sides and squads, or None if there is no such fixture."""
    statement = select(
        fixture.c.sport, fixture.c.scoring_mode, fixture.c.home_team, fixture.c.away_team, fixture.c.squads
    ).where(fixture.c.id == fixture_id)
    async with engine.connect() as conn:
        row = (await conn.execute(statement)).one_or_none()
    if row is None:
        return None
    squads = Squads.model_validate(row.squads or {})
    return FixtureSquads(
        fixture_id=fixture_id,
        sport=row.sport,
        mode=row.scoring_mode,
        home=_squad_team(row.home_team, squads.home),
        away=_squad_team(row.away_team, squads.away),
    )


def lineups_of(squads: Mapping[str, Any] | None) -> LineupsJson:
    """The lineups `domain.rules.initial_state(..., lineups=...)` takes, from `fixture.squads`.

    Pure: the JSON in, the JSON out. A side with no starting players is left out (the rules then
    do not check that side's players); None (a provider fixture) gives `{}`.
    """
    parsed = Squads.model_validate(squads or {})
    lineups: LineupsJson = {}
    sides: tuple[tuple[Side, tuple[SquadPlayer, ...]], ...] = (("home", parsed.home), ("away", parsed.away))
    for side, players in sides:
        starting = [p.id for p in players if p.starting]
        if starting:
            lineups[side] = {"starting": starting, "bench": [p.id for p in players if not p.starting]}
    return lineups


def _team_json(team: TeamDraft) -> dict[str, Any]:
    """The `home_team`/`away_team` shape the provider's rows use; no provider id for our own."""
    return {"id": None, "name": team.name, "short_code": team.short_code}


def _squad_team(team: Mapping[str, Any] | None, players: tuple[SquadPlayer, ...]) -> SquadTeam:
    known = team or {}
    return SquadTeam(
        id=known.get("id"), name=known.get("name"), short_code=known.get("short_code"), players=players
    )


def _refuse_repeats(what: str, values: Iterable[int]) -> None:
    """Refuse repeated values; the error type (`duplicate_shirt_number`, …) is stable for clients."""
    repeated = sorted(value for value, n in Counter(values).items() if n > 1)
    if repeated:
        raise PydanticCustomError(
            f"duplicate_{what.replace(' ', '_')}",
            "{what} used more than once: {values}",
            {"what": what, "values": ", ".join(str(v) for v in repeated)},
        )
