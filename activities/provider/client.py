"""The typed face of the provider: snapshots in domain terms, and the one shared live poll.

`SportMonksClient` turns `SportMonksTransport` envelopes into `Snapshot`s with the pure normaliser.
A fixture the normaliser rejects is logged and left out (`listing`); it never spoils the others. The live board
(`livescores/inplay`) is coalesced: every watcher in the process asking within one poll interval
shares one upstream request and one normalisation. Per-fixture endpoints are for reconcile and
backfill and are not coalesced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Self

from activities.provider.coalescing import Coalescer, CoalescerStats
from activities.provider.config import ProviderClientConfig
from activities.provider.envelope import Envelope
from activities.provider.errors import ProviderPayloadError, ProviderPayloadInvalid
from activities.provider.listing import normalise_listing, note_missing
from activities.provider.normaliser import normalise_fixture, normalise_fixtures
from activities.provider.transport import SportMonksTransport, TransportStats
from domain.snapshot import Snapshot
from scoreline.settings import Settings

LIVE_ENDPOINT = "livescores/inplay"
MULTI_CHUNK = 50  # the provider's maximum ids per `fixtures/multi` request
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

    def __init__(self, transport: SportMonksTransport) -> None:
        config = transport.config
        self._transport = transport
        self._includes = config.includes
        self._live = Coalescer[LiveBoard](config.live_ttl, config.clock)
        self._wall = config.wall

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


class SportMonksClient(BoardClient):
    """SportMonks Football as Scoreline needs it: live board, fixtures by id, fixtures by dates.

    Build one per worker process (`from_settings`) and inject it into the activity classes.

    Args:
        transport: The process's transport (pool, breaker, rate-limit window, bulkhead).

    Every method raises only `ProviderError` subclasses (see `activities.provider.errors`).
    """

    live_endpoint = LIVE_ENDPOINT

    def __init__(self, transport: SportMonksTransport) -> None:
        super().__init__(transport)
        self._relations = frozenset(
            part.split(":")[0].split(".")[0].strip().lower()
            for part in transport.config.includes.split(";")
            if part.strip()
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, config: ProviderClientConfig | None = None
    ) -> SportMonksClient:
        """A client with its own connection pool, configured from the settings."""
        return cls(SportMonksTransport.from_settings(settings, config))

    @property
    def board_is_complete(self) -> bool:
        """No: the football board's relations are reconciled against `fixtures/{id}`."""
        return False

    async def fixture(self, fixture_id: int) -> Snapshot | None:
        """One fixture by id (reconcile); None when the provider has no such fixture.

        Raises:
            ProviderPayloadInvalid: the provider's fixture cannot be normalised.
        """
        envelope = await self._transport.get(
            "fixtures/{id}", f"fixtures/{fixture_id}", {"include": self._includes}
        )
        if envelope.data is None:
            return None
        payload: Any = envelope.data if isinstance(envelope.data, dict) else next(iter(envelope.data), None)
        if payload is None:
            return None
        note_missing(envelope.endpoint, [payload], self._relations)
        try:
            return normalise_fixture(payload)
        except ProviderPayloadError as error:
            raise ProviderPayloadInvalid.wrap(error) from None

    async def fixtures(self, fixture_ids: Iterable[int]) -> list[Snapshot]:
        """Fixtures by id, 50 per request (reconcile); unknown ids and rejected fixtures are left out."""
        wanted = list(dict.fromkeys(fixture_ids))
        found: list[Snapshot] = []
        for start in range(0, len(wanted), MULTI_CHUNK):
            ids = ",".join(str(fixture_id) for fixture_id in wanted[start : start + MULTI_CHUNK])
            envelope = await self._transport.get(
                "fixtures/multi/{ids}", f"fixtures/multi/{ids}", {"include": self._includes}
            )
            found.extend((await self._snapshots(envelope))[0])
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
        envelope = await self._transport.get(LIVE_ENDPOINT, LIVE_ENDPOINT, {"include": self._includes})
        snapshots, rejected = await self._snapshots(envelope)
        return LiveBoard(
            fixtures={snapshot.fixture_id: snapshot for snapshot in snapshots},
            fetched_at=datetime.fromtimestamp(self._wall(), tz=UTC),
            rejected=tuple(rejected),
        )

    async def _snapshots(self, envelope: Envelope) -> tuple[list[Snapshot], list[ProviderPayloadError]]:
        return await normalise_listing(envelope, normalise_fixtures, self._relations)
