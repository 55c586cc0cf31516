"""The worker's memory of tokens APNs has just answered dead, shared by every fan-out in it.

Two fan-outs (two matches a phone follows) can retry the same push-to-start token through a
throttling burst; the one that gets the 410 writes it to Postgres only with its batch. The other's
next retry asks here first and stops, instead of sending to a token Apple has said is gone (the
soak of 2026-12-02, seed 6, sent one 7 s after the 410). A fan-out that read the token from
Postgres before the 410 was written there is stopped the same way, before its first request (seed
9: a wicket alert went to an activity token 6 s after its 410, read while the 410's batch was still
retrying others). A death Postgres had when the target was read is not this memory's to judge: a
token still targeted then was registered again.

The other workers hear of each death at once (`announce`, through `activities.push.death_relay`):
the lanes of one match, and the matches one phone follows, run on any worker, and a push another
worker had read its target for before the 410 was written went to the dead token just the same.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from pydantic import BaseModel

KEPT = 100_000
"""Most tokens remembered; the oldest are forgotten first (a retry looks back seconds, not days)."""
HEARD_WRITTEN_AFTER_S = 60.0
"""A death heard from another worker counts as in Postgres this long after: that worker writes it
with its batch, waiting out an outage for 30 s at most, or it was killed and never will (then the
next request to the token meets the 410 again, and this worker writes it)."""


class TokenDeath(BaseModel):
    """What one worker tells the others when APNs has answered a token dead."""

    token: str
    status: int
    reason: str | None
    timestamp_ms: int | None


@dataclass(frozen=True)
class Death:
    at: float
    """`time.monotonic()` when the answer came."""
    status: int
    reason: str | None
    timestamp_ms: int | None
    """APNs' `timestamp` of the 410: when the token stopped being valid."""
    settled_at: float | None = None
    """`time.monotonic()` when its outcome was committed to Postgres (None: not yet)."""


class DeadTokens:
    def __init__(self, kept: int = KEPT) -> None:
        self._deaths: OrderedDict[str, Death] = OrderedDict()
        self._kept = kept
        self.announce: Callable[[TokenDeath], None] | None = None
        """Tells the other workers of a death this one got (never waits, never raises)."""

    def record(self, token: str, status: int, reason: str | None, timestamp_ms: int | None) -> None:
        """APNs has just answered `token` dead here."""
        self._remember(token, Death(time.monotonic(), status, reason, timestamp_ms))
        if self.announce is not None:
            self.announce(TokenDeath(token=token, status=status, reason=reason, timestamp_ms=timestamp_ms))

    def heard(self, death: TokenDeath) -> None:
        """Another worker got `death`: a target read before it is in Postgres is not sent to."""
        now = time.monotonic()
        self._remember(
            death.token,
            Death(
                now, death.status, death.reason, death.timestamp_ms, settled_at=now + HEARD_WRITTEN_AFTER_S
            ),
        )

    def _remember(self, token: str, death: Death) -> None:
        self._deaths[token] = death
        self._deaths.move_to_end(token)
        while len(self._deaths) > self._kept:
            self._deaths.popitem(last=False)

    def settled(self, tokens: Iterable[str]) -> None:
        """The deaths of `tokens` are in Postgres now: a target read from here on shows them."""
        now = time.monotonic()
        for token in tokens:
            death = self._deaths.get(token)
            if death is not None and death.settled_at is None:
                self._deaths[token] = replace(death, settled_at=now)

    def unknown_to(self, token: str, read_at: float) -> Death | None:
        """The answer that killed `token` which a read of Postgres at `read_at`
        (`time.monotonic()`) may not have shown: not written yet, or written after the read."""
        death = self._deaths.get(token)
        if death is None or (death.settled_at is not None and death.settled_at < read_at):
            return None
        return death
