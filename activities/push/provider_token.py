"""The provider JWT (ES256, header `kid`, claims `iss` and `iat`): one per process, shared by every connection.

Apple's rules (JWTDOC, apns.md §4): a token older than an hour is refused (403
`ExpiredProviderToken`); a connection whose token changes more than once in 20 minutes is refused
(429 `TooManyProviderTokenUpdates`). So the token is minted once and reused until `rotate_after`
(50 minutes), and each connection keeps the token it opened with (see `apns.ApnsClient`): a new token
only ever goes out on a new connection. When APNs still says "expired" (a skewed clock), `refresh`
mints a new one at once, but never more than once per `min_refresh_interval` (20 minutes), so a
broken clock cannot turn into a token storm.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import jwt

from scoreline.logging import get_logger

ROTATE_AFTER_S = 50 * 60
MIN_REFRESH_INTERVAL_S = 20 * 60

log = get_logger(__name__)


@dataclass(frozen=True)
class ProviderToken:
    """One signed token and when it was issued (its `iat`)."""

    value: str
    issued_at: int

    @property
    def header(self) -> str:
        """The `authorization` header value."""
        return f"bearer {self.value}"


class ProviderTokens:
    """Mints, caches and rotates the provider token."""

    def __init__(
        self,
        key_pem: str,
        key_id: str,
        team_id: str,
        *,
        clock: Callable[[], float] = time.time,
        rotate_after: float = ROTATE_AFTER_S,
        min_refresh_interval: float = MIN_REFRESH_INTERVAL_S,
    ) -> None:
        self._key_pem = key_pem
        self._key_id = key_id
        self._team_id = team_id
        self._clock = clock
        self._rotate_after = rotate_after
        self._min_refresh_interval = min_refresh_interval
        self._token: ProviderToken | None = None
        self._last_forced: float | None = None
        self.minted = 0
        """How many tokens this process has signed (support and tests read it)."""

    def current(self) -> ProviderToken:
        """The token to use now: the cached one, or a new one when it is `rotate_after` old."""
        now = self._clock()
        if self._token is None or now - self._token.issued_at >= self._rotate_after:
            self._token = self._mint(now)
        return self._token

    def refresh(self, rejected: ProviderToken) -> bool:
        """After 403 `ExpiredProviderToken` for `rejected`: may the push be retried with a newer token?

        True when a newer token exists already (another push got there first) or one was minted
        now; False when the last forced refresh was under `min_refresh_interval` ago.
        """
        if self._token is not None and self._token != rejected:
            return True
        now = self._clock()
        if self._last_forced is not None and now - self._last_forced < self._min_refresh_interval:
            log.warning("apns.token_refresh_refused", last_forced_s_ago=round(now - self._last_forced))
            return False
        self._last_forced = now
        self._token = self._mint(now)
        log.info("apns.token_refreshed", issued_at=self._token.issued_at)
        return True

    def _mint(self, now: float) -> ProviderToken:
        issued_at = int(now)
        value = jwt.encode(
            {"iss": self._team_id, "iat": issued_at},
            self._key_pem,
            algorithm="ES256",
            headers={"kid": self._key_id},
        )
        self.minted += 1
        return ProviderToken(value, issued_at)
