"""The in-play matches whose watch runs in this process, and when each last started a poll.

It feeds `scoreline_watch_poll_age_seconds`, the gauge behind the "live match not polled for 30 s"
alert. A poll counts once the provider answered and the ingest committed, so a provider outage
ages it as surely as a hung request, a blocked ingest or a starved event loop. Only running
watches count: a watch that returns or fails forgets its match, because the next attempt may run
in another worker, whose own gauge then speaks for it (a watch that fails again and again shows in
Temporal's activity failures instead). The value is reported by a ticker, not only by polls, so a
process whose every watch is stuck still reports their growing age.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from scoreline.metrics.instruments import metrics

REPORT_EVERY = 2.0
"""Seconds between reports of the gauge (well inside any scrape interval)."""


class WatchedMatches:
    """The registry: `polled` and `ended` from the watches, `start`/`aclose` around the process."""

    def __init__(self) -> None:
        self._last_poll: dict[int, float] = {}
        self._reporter: asyncio.Task[None] | None = None

    def polled(self, fixture_id: int, *, in_play: bool) -> None:
        """A poll of `fixture_id` was answered and ingested; one not in play is not watched."""
        if in_play:
            self._last_poll[fixture_id] = time.monotonic()
        else:
            self._last_poll.pop(fixture_id, None)

    def ended(self, fixture_id: int) -> None:
        """Its watch returned, failed or was cancelled here."""
        self._last_poll.pop(fixture_id, None)

    def oldest_age(self, now: float) -> float:
        """Seconds since the longest-waiting in-play match was polled; 0 with none."""
        return max((now - last for last in self._last_poll.values()), default=0.0)

    def report(self) -> None:
        """Set the gauges now (the ticker calls this every `REPORT_EVERY`)."""
        metrics().poll_age.set(self.oldest_age(time.monotonic()))
        metrics().live_matches.set(len(self._last_poll))

    def start(self) -> None:
        """Report every `REPORT_EVERY` seconds until `aclose`."""
        self._reporter = asyncio.create_task(self._report_forever(), name="watched-matches-report")

    async def aclose(self) -> None:
        if self._reporter is not None:
            self._reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reporter
            self._reporter = None

    async def _report_forever(self) -> None:
        while True:
            self.report()
            await asyncio.sleep(REPORT_EVERY)
