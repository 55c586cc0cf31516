"""The small messages that cross the workflow boundary for one match.

Everything here is pure pydantic and goes into Temporal history, so it stays compact: counts,
versions and a few short strings, never a provider payload. Fields are only ever added, with
defaults, so old histories keep decoding.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from workflows.snapshot import MatchState

OVER_STATES = frozenset(
    {MatchState.FINISHED, MatchState.CANCELLED, MatchState.ABANDONED, MatchState.AWARDED, MatchState.DELETED}
)
"""States after which nothing more will happen to a match."""

BREAK_STATES = frozenset({MatchState.HALF_TIME, MatchState.EXTRA_TIME_BREAK, MatchState.PENALTIES_BREAK})

PLAYING_STATES = frozenset(
    {
        MatchState.LIVE_FIRST_HALF,
        MatchState.LIVE_SECOND_HALF,
        MatchState.EXTRA_TIME,
        MatchState.PENALTIES,
    }
)
"""States in which the ball is in play: polled at the live interval."""

STARTED_STATES = PLAYING_STATES | BREAK_STATES | OVER_STATES
"""Once a match is in one of these, its followers' Live Activities have been started."""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)


class MatchProgress(_Message):
    """Where a match stands, as the workflow knows it: carried across continue-as-new."""

    version: int = 0
    state: MatchState = MatchState.SCHEDULED
    home: int = 0
    away: int = 0
    minute: int | None = None


class IngestSummary(_Message):
    """What one ingest transaction did (or that there was nothing to do)."""

    fixture_id: int
    version: int
    previous_version: int
    entries: int = 0
    state: MatchState
    home: int
    away: int
    minute: int | None = None
    kickoff: datetime | None = None
    key_moments: tuple[str, ...] = ()
    """`goal:home`, `red_card:away`, `retraction:goal` … the changes that deserve a push at once."""
    pending_misses: int = 0
    trace_id: str | None = None
    """The trace id the change was logged with (a provider poll's own, or the desk request's)."""
    desk_owned: bool = False
    """Desks own the score: the snapshot refreshed only the fixture's facts, nothing was logged."""

    @property
    def progress(self) -> MatchProgress:
        return MatchProgress(
            version=self.version, state=self.state, home=self.home, away=self.away, minute=self.minute
        )


class WatchInput(_Message):
    fixture_id: int
    progress: MatchProgress = MatchProgress()
    settle_seconds: float | None = None
    """Return `settled` after this long without a material change (full-time confirmation)."""


class WatchResult(_Message):
    reason: str
    """`changed` (see `summary`), `settled` (nothing happened for `settle_seconds`), `polling_off`."""
    progress: MatchProgress
    summary: IngestSummary | None = None


class FetchInput(_Message):
    fixture_id: int
    source: str = "reconcile"
    """Recorded on new events: `reconcile`, `postmatch` or `replay`."""
    rebuild: bool = True
    """Rewrite the derived read copies even when the ingest found nothing new."""
