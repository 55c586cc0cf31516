"""SportMonks Cricket v2 as Scoreline needs it: the live board, fixtures by id and by dates, the score table.

The same transport as football (timeouts, retries, breaker, bulkhead, 429 window), pointed at
`CRICKET_PROVIDER_URL` with the token as the `api_token` parameter and comma-separated includes.
Fixture ids are Scoreline's (`domain.cricket.board.cricket_fixture_id`): the client maps them to
the provider's and back, so nothing else knows the two numberings exist.

`livescores` is coalesced like football's board: every cricket match watched in the process
shares one request per poll interval. It carries every ball of every match, so a fixture whose
fingerprint (`fingerprint`) is what it was last poll keeps its last snapshot instead of being
normalised again: the board's cost follows the balls bowled, not the matches on it. The `/scores` lookup table (what a ball's `score_id` means)
is fetched once and kept for an hour; it is only needed for a ball that arrives without its
embedded `score`, and a score id found nowhere stays an unknown outcome rather than an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

import redis.asyncio as aioredis

from activities.provider.board_memo import BoardMemo
from activities.provider.client import BoardClient, LiveBoard, deployment_parts
from activities.provider.config import ProviderClientConfig
from activities.provider.cricket.fingerprint import Fingerprint, fingerprint
from activities.provider.cricket.normaliser import (
    normalise_cricket_fixture,
    normalise_cricket_fixtures,
    parse_score_rows,
)
from activities.provider.cricket.payload import ScoreRow
from activities.provider.errors import (
    ProviderError,
    ProviderPayloadError,
    ProviderPayloadInvalid,
    ProviderRequestError,
)
from activities.provider.listing import normalise_listing, note_missing
from activities.provider.shared_board import SharedBoard
from activities.provider.transport import SportMonksTransport
from domain.cricket.board import cricket_provider_id
from domain.snapshot import Snapshot
from scoreline.logging import get_logger
from scoreline.settings import Settings

log = get_logger(__name__)

LIVE_ENDPOINT = "livescores"
FIXTURE_INCLUDES = "balls,runs,localteam,visitorteam"
"""`balls` alone embeds each ball's score row, batter, bowler and team (cricket.md §3)."""
LIST_INCLUDES = "localteam,visitorteam"
"""A fixture list only needs the facts: the match's own polls fetch its balls."""
SCORES_TTL = 3600.0
MAX_PAGES = 200


def cricket_config(settings: Settings) -> ProviderClientConfig:
    """The football client's behaviour with Cricket v2's URL layout, token and poll interval."""
    return replace(
        ProviderClientConfig.from_settings(settings),
        token=settings.cricket_provider_token.get_secret_value(),
        prefix="",
        token_in="query",
        upstream="cricket",
        budget_entity=None,
        includes=FIXTURE_INCLUDES,
    )


class CricketClient(BoardClient):
    """Cricket v2 envelopes into `Snapshot`s. One per worker process, injected like the football one.

    Every method raises only `ProviderError` subclasses.
    """

    live_endpoint = LIVE_ENDPOINT

    def __init__(self, transport: SportMonksTransport, shared: SharedBoard | None = None) -> None:
        super().__init__(transport, shared)
        config = transport.config
        self._relations = frozenset(
            part.split(".")[0].strip().lower() for part in config.includes.split(",") if part.strip()
        )
        self._clock = config.clock
        self._scores: Mapping[int, ScoreRow] | None = None
        self._scores_at = 0.0
        self._memo = BoardMemo[Fingerprint](
            fingerprint, lambda snapshot: cricket_provider_id(snapshot.fixture_id)
        )
        """Last poll's board: each fixture's fingerprint and snapshot, by the provider's id."""

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        config: ProviderClientConfig | None = None,
        *,
        redis: aioredis.Redis | None = None,
    ) -> CricketClient:
        """As the football client's: with the deployment's `redis`, a shared board and the budget."""
        chosen = config or cricket_config(settings)
        return cls(*deployment_parts(settings, chosen, LIVE_ENDPOINT, redis, settings.cricket_provider_url))

    def is_whole(self, snapshot: Snapshot) -> bool:
        """`livescores` carries every ball, so a reconcile may read the board, unless the
        provider dropped the `balls` include."""
        return snapshot.balls is not None

    async def fixture(
        self, fixture_id: int, *, within: float = 0.0, deferrable: bool = False
    ) -> Snapshot | None:
        """One fixture with its balls; None when the provider has no such fixture.

        Cricket v2 has no `fixtures/multi`: each fixture is its own request (`within` has nothing
        to wait for). A `deferrable` one is refused rather than spend a call the board needs.

        Raises:
            ProviderPayloadInvalid: the provider's fixture cannot be normalised.
        """
        provider_id = cricket_provider_id(fixture_id)
        if provider_id is None:
            return None
        try:
            envelope = await self._transport.get(
                "fixtures/{id}",
                f"fixtures/{provider_id}",
                {"include": self._includes},
                priority="deferrable" if deferrable else "urgent",
            )
        except ProviderRequestError as error:
            if error.status == 404:
                return None
            raise
        payload: Any = (
            envelope.data if isinstance(envelope.data, dict) else next(iter(envelope.data or []), None)
        )
        if payload is None:
            return None
        note_missing(envelope.endpoint, [payload], self._relations)
        scores = await self.scores()
        try:
            return normalise_cricket_fixture(payload, scores)
        except ProviderPayloadError as error:
            raise ProviderPayloadInvalid.wrap(error) from None

    async def fixtures_between(self, start: date, end: date) -> list[Snapshot]:
        """Fixtures starting from `start` to `end` (UTC dates, inclusive), every page."""
        params = {
            "filter[starts_between]": f"{start.isoformat()},{end.isoformat()}",
            "include": LIST_INCLUDES,
        }
        found: list[Snapshot] = []
        for page in range(1, MAX_PAGES + 1):
            envelope = await self._transport.get("fixtures", "fixtures", {**params, "page": str(page)})
            snapshots, _ = await normalise_listing(
                envelope, normalise_cricket_fixtures, frozenset({"localteam", "visitorteam"})
            )
            found.extend(snapshots)
            if envelope.pagination is None or not envelope.pagination.has_more:
                return found
        raise ProviderPayloadInvalid("meta", f"more than {MAX_PAGES} pages", "too_many_pages")

    async def scores(self) -> Mapping[int, ScoreRow] | None:
        """The score lookup table, fetched at most once an hour; None while the provider fails it."""
        if self._scores is not None and self._clock() - self._scores_at < SCORES_TTL:
            return self._scores
        try:
            envelope = await self._transport.get("scores", "scores")
            self._scores = parse_score_rows(envelope.items)
            self._scores_at = self._clock()
        except ProviderError as error:
            log.warning("cricket score table unavailable", error=str(error), kind=type(error).__name__)
        return self._scores

    async def _fetch_live(self) -> LiveBoard:
        envelope, fetched_at = await self._board()
        scores = await self.scores()
        kept, changed = self._memo.split(envelope.items)

        def normalise(items: Any) -> list[Snapshot | ProviderPayloadError]:
            return normalise_cricket_fixtures(items, scores)

        fresh, rejected = await normalise_listing(replace(envelope, data=changed), normalise, self._relations)
        self._memo.remember(fresh)
        return LiveBoard(
            fixtures={snapshot.fixture_id: snapshot for snapshot in (*kept, *fresh)},
            fetched_at=fetched_at,
            rejected=tuple(rejected),
        )
