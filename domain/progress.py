"""Where a match stands, and what one logged change did: the values the match workflow moves on.

Both cross the workflow boundary (activity results, continue-as-new input), so they stay compact
and only ever gain fields with defaults, so old histories keep decoding.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from domain.cricket.live import CricketLine
from domain.moments import KeyMoment
from domain.snapshot import MatchState

FixtureSource = Literal["provider", "desk"]
"""Who knows the fixture: a data provider, or only the desks (a match no provider covers)."""


class MatchProgress(BaseModel):
    """Where a match stands, as the workflow knows it: carried across continue-as-new."""

    model_config = ConfigDict(frozen=True)

    version: int = 0
    state: MatchState = MatchState.SCHEDULED
    home: int = 0
    away: int = 0
    minute: int | None = None
    cricket: CricketLine | None = None
    """A cricket match's line (batting side, batters, bowler, last six, the chase)."""


class IngestSummary(BaseModel):
    """What one logged change did (an ingest transaction, a desk commit), or that nothing changed."""

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    version: int
    previous_version: int
    entries: int = 0
    state: MatchState
    home: int
    away: int
    minute: int | None = None
    kickoff: datetime | None = None
    key_moments: tuple[KeyMoment, ...] = ()
    """The changes that deserve a push at once (a goal, a red card, a retraction), in log order."""
    pending_misses: int = 0
    trace_id: str | None = None
    """The trace id the change was logged with (a provider poll's own, or the desk request's)."""
    desk_owned: bool = False
    """Desks own the score: the snapshot refreshed only the fixture's facts, nothing was logged."""
    cricket: CricketLine | None = None

    @property
    def progress(self) -> MatchProgress:
        return MatchProgress(
            version=self.version,
            state=self.state,
            home=self.home,
            away=self.away,
            minute=self.minute,
            cricket=self.cricket,
        )
