"""The messages of a match run (`match-{fixture_id}`): its names, its input and outcome, its watch's.

Pure pydantic, safe to import in a workflow. The API and `scoreline.temporal.match_runs` start and
reach the runs through these names and types without importing the workflow (and with it the
activity classes it calls); the watch and ingest activities take and return them. Everything here
goes into Temporal history, so it stays compact: counts, versions and a few short strings, never a
provider payload. Fields are only ever added, with defaults, so old histories keep decoding.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from domain.desk import DeskBook
from domain.progress import FixtureSource, IngestSummary, MatchProgress
from domain.pushes import PushInput
from domain.rules import Mode
from domain.snapshot import MatchState

MATCH_WORKFLOW = "MatchWorkflow"
"""The workflow type of every `match-{fixture_id}` run."""
SUBMIT = "submit"
"""The Update a desk command is sent as (update id = the command's key)."""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)


class WatchInput(_Message):
    fixture_id: int
    progress: MatchProgress = MatchProgress()
    settle_seconds: float | None = None
    """Return `settled` after this long without a material change (full-time confirmation)."""


WatchEnd = Literal["changed", "settled", "polling_off"]
"""Why a watch returned: a material change (see `summary`), `settle_seconds` passed quietly, or
polling is switched off."""

Source = Literal["live", "reconcile", "postmatch", "replay"]
"""How a provider snapshot was fetched; recorded on the events it adds (`match_event.source`)."""


class WatchResult(_Message):
    reason: WatchEnd
    progress: MatchProgress
    summary: IngestSummary | None = None


class FetchInput(_Message):
    fixture_id: int
    source: Source = "reconcile"
    rebuild: bool = True
    """Rewrite the derived read copies even when the ingest found nothing new."""


class MatchOptions(BaseModel):
    """Timings of one match's lifecycle; defaults are production values, tests shrink them."""

    model_config = ConfigDict(frozen=True)

    kickoff_lead_seconds: float = 300
    settle_seconds: float = 300
    heartbeat_timeout_seconds: float = 10
    polling_off_recheck_seconds: float = 60
    postponed_recheck_seconds: float = 600
    postponed_give_up_seconds: float = 7 * 24 * 3600
    watch_task_queue: str | None = None
    """Queue of the watch activity; None = this workflow's queue."""
    post_match_rechecks_seconds: tuple[float, ...] = ()
    """Cricket: after the end, the fixture is fetched again after each of these waits (in turn),
    so balls the provider edits minutes or days later still reach every output."""
    la_renew_after_seconds: float = 7.5 * 3600
    """The followers' Live Activities are ended and started anew after running this long (Apple
    ends one at 8 hours); `LA_RENEW_AFTER`."""


class MatchInput(BaseModel):
    """How a run starts: from the database's facts (`scoreline.temporal.match_runs`), or from the
    previous run's state when it continued as new. Fields are only added, with defaults."""

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    kickoff: datetime | None = None
    progress: MatchProgress = MatchProgress()
    options: MatchOptions = MatchOptions()
    postponed_since: datetime | None = None
    source: FixtureSource = "provider"
    """`desk`: a fixture no provider knows; it is never polled."""
    mode: Mode = "provider"
    """Who owns the score when the run starts (the book's mode wins once it is open)."""
    book: DeskBook | None = None
    live_activities_started: bool = False
    pending_pushes: tuple[PushInput, ...] = ()
    """Pushes queued but not published when the previous run continued as new; published first."""
    live_activity_generation: int = 1
    """Which generation of the followers' Live Activities runs (or ran last, overnight)."""
    live_activity_since: datetime | None = None
    """When that generation was started (workflow time); None: not known, taken as the kickoff."""
    live_activities_overnight: bool = False
    """That generation was ended at stumps; the next starts when play resumes."""


class MatchOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    state: MatchState
    home: int
    away: int
    version: int
