"""The messages of the match's provider activities: the long-running watch and one-off fetches.

Everything here goes into Temporal history, so it stays compact: counts, versions and a few short
strings, never a provider payload. Fields are only ever added, with defaults, so old histories
keep decoding.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from domain.progress import IngestSummary, MatchProgress


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
