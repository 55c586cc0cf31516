"""The typed face of the provider: snapshots in domain terms, and the one shared live poll.

`SportMonksClient` turns `SportMonksTransport` envelopes into `Snapshot`s with the pure normaliser.
A fixture the normaliser rejects is logged and left out (`listing`); it never spoils the others.
The live board (`livescores/inplay`) is coalesced: every watcher in the process asking within one
poll interval shares one answer, and with a `SharedBoard` every worker of the deployment shares
one upstream request. A fixture whose part of the board is what it was last interval keeps its
snapshot (the same object), so the board's cost follows what changed, not the matches on it.
Per-fixture requests (before kick-off, reconcile, the full-time settle, backfill) are gathered
into `fixtures/multi` calls of 50 ids (`batching`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Self

import redis.asyncio as aioredis

from activities.provider.batching import Batcher
from activities.provider.board_memo import BoardMemo
from activities.provider.budget import RequestBudget
from activities.provider.coalescing import Coalescer, CoalescerStats
from activities.provider.config import ProviderClientConfig
from activities.provider.envelope import Envelope
from activities.provider.errors import ProviderPayloadError, ProviderPayloadInvalid
from activities.provider.listing import normalise_listing
from activities.provider.normaliser import normalise_fixtures
from activities.provider.shared_board import SharedBoard
from activities.provider.transport import SportMonksTransport, TransportStats
from domain.snapshot import Snapshot
from scoreline.settings import Settings

LIVE_ENDPOINT = "livescores/inplay"
MULTI_CHUNK = 50  # the provider's maximum ids per `fixtures/multi` request
URGENT_WINDOW = 0.2
"""Seconds a per-fixture call that should not wait still waits for others to share its request:
every match that left the board in one answer asks within a moment of the others."""
PER_PAGE = 50  # the provider's maximum page size
# 20,000 rows is where the provider stops offset pagination; a backfill beyond it is a bug here.
MAX_PAGES = 400


@dataclass(frozen=True)
class LiveBoard:
    """Every fixture in play, from one `livescores/inplay` answer.

    Attributes:
        fixtures: Normalised fixtures by id.
        fetched_at: When the answer arrived (UTC); the data is this old.
        rejected: Fixtures the normaliser refused (already logged).
    """

    fixtures: Mapping[int, Snapshot]
    fetched_at: datetime
    rejected: tuple[ProviderPayloadError, ...] = ()

    def get(self, fixture_id: int) -> Snapshot | None:
        """The fixture, or None if it is not in play (or was rejected)."""
        return self.fixtures.get(fixture_id)


@dataclass(frozen=True)
class ProviderClientStats:
    """Everything a health check or metrics exporter wants to know about the client."""

    transport: TransportStats
    live: CoalescerStats


class BoardClient:
    """What both provider clients share (Football v3 here, Cricket v2 in `cricket.client`): the
    transport they own and one live board per poll interval, shared by every watcher in the
    process. Subclasses name `live_endpoint` and fetch the board. Every method raises only
    `ProviderError`s."""

    live_endpoint: str
    """The endpoint of the live board, shared per poll interval."""

    def __init__(self, transport: SportMonksTransport, shared: SharedBoard | None = None) -> None:
        config = transport.config
        self._transport = transport
        self._includes = config.includes
        self._live = Coalescer[LiveBoard](config.live_ttl, config.clock)
        self._wall = config.wall
        self._shared = shared

    @property
    def transport(self) -> SportMonksTransport:
        """The transport (for raw envelopes, or its breaker state)."""
        return self._transport

    @property
    def stats(self) -> ProviderClientStats:
        """Transport, breaker and coalescing counters."""
        return ProviderClientStats(transport=self._transport.stats, live=self._live.stats)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the shared live poll and close the pool (if the transport owns it)."""
        await self._live.aclose()
        await self._transport.aclose()

    async def live(self) -> LiveBoard:
        """Every fixture in play; at most one upstream request per poll interval per process."""
        return await self._live.get(self.live_endpoint, self._fetch_live)

    async def live_snapshot(self, fixture_id: int) -> Snapshot | None:
        """One fixture from the shared live board; None when it is not on it."""
        return (await self.live()).get(fixture_id)

    async def _fetch_live(self) -> LiveBoard:
        raise NotImplementedError

    async def _board(self) -> tuple[Envelope, datetime]:
        """This interval's board and when its answer arrived: another worker's, or fetched here."""

        async def fetch() -> Envelope:
            return await self._transport.get(
                self.live_endpoint, self.live_endpoint, {"include": self._includes}, priority="board"
            )

        if self._shared is None:
            envelope = await fetch()
            return envelope, datetime.fromtimestamp(self._wall(), tz=UTC)
        answer = await self._shared.get(self.live_endpoint, fetch)
        return answer.envelope, datetime.fromtimestamp(answer.fetched_at, tz=UTC)


def deployment_parts(
    settings: Settings,
    config: ProviderClientConfig,
    live_endpoint: str,
    redis: aioredis.Redis | None,
    base_url: str | None = None,
) -> tuple[SportMonksTransport, SharedBoard | None]:
    """A client's transport and shared board: with Redis, one board request per interval for the
    whole deployment and every call inside `PROVIDER_HOURLY_BUDGET`; without, this process alone."""
    if redis is None:
        return SportMonksTransport.from_settings(settings, config, base_url=base_url), None
    budget = RequestBudget(
        redis,
        config.upstream,
        settings.provider_hourly_budget,
        settings.provider_budget_window.total_seconds(),
    )
    transport = SportMonksTransport.from_settings(settings, config, base_url=base_url, budget=budget)
    shared = SharedBoard(
        redis,
        f"{config.upstream}:{live_endpoint}",
        config.live_ttl,
        wait_max=config.live_ttl + config.timeout,
    )
    return transport, shared


class SportMonksClient(BoardClient):
    """SportMonks Football as Scoreline needs it: live board, fixtures by id, fixtures by dates.

    Build one per worker process (`from_settings`) and inject it into the activity classes.

    Args:
        transport: The process's transport (pool, breaker, rate-limit window, bulkhead).

    Every method raises only `ProviderError` subclasses (see `activities.provider.errors`).
    """

    live_endpoint = LIVE_ENDPOINT

    def __init__(self, transport: SportMonksTransport, shared: SharedBoard | None = None) -> None:
        super().__init__(transport, shared)
        self._relations = frozenset(
            part.split(":")[0].split(".")[0].strip().lower()
            for part in transport.config.includes.split(";")
            if part.strip()
        )
        self._batch = Batcher[Snapshot | ProviderPayloadError](self._fetch_multi, MULTI_CHUNK)
        # A fixture's payload is its own mark: comparing decoded payloads is C-speed.
        self._memo = BoardMemo[Any](lambda item: item, lambda snapshot: snapshot.fixture_id)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        config: ProviderClientConfig | None = None,
        *,
        redis: aioredis.Redis | None = None,
    ) -> SportMonksClient:
        """A client with its own connection pool, configured from the settings; with the
        deployment's `redis`, its board is shared and its calls spend the hourly budget."""
        chosen = config or ProviderClientConfig.from_settings(settings)
        return cls(*deployment_parts(settings, chosen, LIVE_ENDPOINT, redis))

    async def aclose(self) -> None:
        await self._batch.aclose()
        await super().aclose()

    def is_whole(self, snapshot: Snapshot) -> bool:
        """The board's fixture carries every relation `fixtures/multi` would (the board is the same
        entity with the same includes), so its reconcile may read the board; one whose include the
        provider dropped is fetched."""
        return all(
            relation is not None
            for relation in (
                snapshot.participants,
                snapshot.scores,
                snapshot.periods,
                snapshot.events,
                snapshot.timeline,
            )
        )

    async def fixture(
        self, fixture_id: int, *, within: float = URGENT_WINDOW, deferrable: bool = False
    ) -> Snapshot | None:
        """One fixture by id; None when the provider has no such fixture.

        It shares a `fixtures/multi` request with whatever else is asked for in the next `within`
        seconds. A `deferrable` call (a reconcile) is refused rather than spend a call the live
        board needs (`ProviderBudgetSpent`).

        Raises:
            ProviderPayloadInvalid: the provider's fixture cannot be normalised.
        """
        found = await self._batch.get(fixture_id, within=within, deferrable=deferrable)
        if isinstance(found, ProviderPayloadError):
            raise ProviderPayloadInvalid.wrap(found)
        return found

    async def fixtures(self, fixture_ids: Iterable[int]) -> list[Snapshot]:
        """Fixtures by id, 50 per request; unknown ids and rejected fixtures are left out."""
        wanted = list(dict.fromkeys(fixture_ids))
        found: list[Snapshot] = []
        for start in range(0, len(wanted), MULTI_CHUNK):
            chunk = await self._fetch_multi(wanted[start : start + MULTI_CHUNK], False)
            found.extend(item for item in chunk.values() if isinstance(item, Snapshot))
        return found

    async def _fetch_multi(
        self, fixture_ids: Sequence[int], deferrable: bool
    ) -> dict[int, Snapshot | ProviderPayloadError]:
        """One `fixtures/multi` request: each fixture found, normalised or rejected."""
        ids = ",".join(str(fixture_id) for fixture_id in fixture_ids)
        envelope = await self._transport.get(
            "fixtures/multi/{ids}",
            f"fixtures/multi/{ids}",
            {"include": self._includes},
            priority="deferrable" if deferrable else "urgent",
        )
        snapshots, rejected = await self._snapshots(envelope)
        found: dict[int, Snapshot | ProviderPayloadError] = {
            error.fixture_id: error for error in rejected if error.fixture_id is not None
        }
        if len(fixture_ids) == 1 and rejected and not snapshots:
            found.setdefault(fixture_ids[0], rejected[0])  # the one asked for, whatever its id says
        found.update((snapshot.fixture_id, snapshot) for snapshot in snapshots)
        return found

    async def fixtures_between(self, start: date, end: date) -> list[Snapshot]:
        """Fixtures kicking off from `start` to `end` (UTC dates, inclusive), every page (backfill)."""
        path = f"fixtures/between/{start.isoformat()}/{end.isoformat()}"
        params: dict[str, str] = {"include": self._includes, "per_page": str(PER_PAGE)}
        found: list[Snapshot] = []
        seen_cursors: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            envelope = await self._transport.get("fixtures/between/{start}/{end}", path, params)
            found.extend((await self._snapshots(envelope))[0])
            pagination = envelope.pagination
            if pagination is None or not pagination.has_more:
                return found
            params = {key: value for key, value in params.items() if key not in ("cursor", "page")}
            if pagination.next_cursor is not None:
                if pagination.next_cursor in seen_cursors:
                    raise ProviderPayloadInvalid(
                        "pagination.next_cursor", "the provider repeated a cursor", "loop"
                    )
                seen_cursors.add(pagination.next_cursor)
                params["cursor"] = pagination.next_cursor
            else:
                params["page"] = str((pagination.current_page or page) + 1)
        raise ProviderPayloadInvalid("pagination", f"more than {MAX_PAGES} pages", "too_many_pages")

    async def _fetch_live(self) -> LiveBoard:
        envelope, fetched_at = await self._board()
        kept, changed = self._memo.split(envelope.items)
        fresh, rejected = await self._snapshots(replace(envelope, data=changed))
        self._memo.remember(fresh)
        return LiveBoard(
            fixtures={snapshot.fixture_id: snapshot for snapshot in (*kept, *fresh)},
            fetched_at=fetched_at,
            rejected=tuple(rejected),
        )

    async def _snapshots(self, envelope: Envelope) -> tuple[list[Snapshot], list[ProviderPayloadError]]:
        return await normalise_listing(envelope, normalise_fixtures, self._relations)
