"""The messages of the fixture sync: its window, the fixtures its listing found due, its result."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class FixtureSyncInput(BaseModel):
    """A date window around today (UTC); every field has a default for the UI form."""

    model_config = ConfigDict(frozen=True)

    days_back: int = 0
    days_ahead: int = 1
    horizon_minutes: int = 15
    """Start the MatchWorkflow of a fixture that kicks off within this many minutes (or is live)."""


class DueFixture(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    kickoff: datetime | None = None


class DueFixtures(BaseModel):
    """What `sync_fixtures` found: how many rows it upserted, and which matches need watching."""

    model_config = ConfigDict(frozen=True)

    fixtures_seen: int
    due: tuple[DueFixture, ...]


class FixtureSyncResult(BaseModel):
    """What one run of FixtureSyncWorkflow listed, found due and started."""

    model_config = ConfigDict(frozen=True)

    fixtures_seen: int = 0
    due: tuple[int, ...] = ()
    started: tuple[int, ...] = ()
