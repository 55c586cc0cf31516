"""The soak's partners: feed pollers with their own API keys, polling like a real integration.

Each partner is created on the database (`scoreline.feeds.partners.create_partner`, as
`scoreline partners create` does) once every fixture of the run exists, granted a seeded subset of
the fixtures' competitions. It then polls, about once a second, the match document of every
fixture of its competitions and the fixture list of each of their kick-off days, sending the last
`ETag` it got in `If-None-Match`, and moves to the next API process when one does not answer. The
rules its answers are checked by are in `devkit.soak.feed_check`.

A fixture without a competition (a desk match created without one) is in no partner's grant, so
no partner polls it.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

import httpx
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from devkit.soak.feed_check import CHECK, Answer, check_answers
from devkit.soak.model import CheckResult, SoakFixtures, SoakTargets, Violation
from devkit.soak.screens import Endpoints
from scoreline.db.engine import create_engine
from scoreline.db.tables import published_document
from scoreline.feeds.models import competition_of
from scoreline.feeds.partners import PartnerError, create_partner
from scoreline.readmodel.queries import load_match
from scoreline.readmodel.views import MatchView

POLL_EVERY = (0.8, 1.2)
"""Seconds between two rounds of a partner's documents, drawn from its seeded rng."""
WAIT_FOR_FIXTURES = 1.0
"""Seconds between two looks for the run's fixtures before the partners can be created."""
REQUEST_TIMEOUT = 5.0
_HTTP_ERRORS = (httpx.HTTPError, OSError)
_DATABASE_ERRORS = (SQLAlchemyError, OSError)


@dataclass(frozen=True)
class Grants:
    """The competitions of the run's fixtures, the fixtures of each, and each fixture's UTC day."""

    matches: dict[int, list[int]]
    days: dict[int, str]

    def documents(self, competitions: Sequence[int]) -> list[str]:
        """The feed documents a partner of `competitions` polls: its matches, then their days."""
        fixtures = sorted(f for competition in competitions for f in self.matches[competition])
        days = sorted({self.days[f] for f in fixtures if f in self.days})
        return [*(f"match/{f}" for f in fixtures), *(f"fixtures/{day}" for day in days)]


@dataclass
class Poller:
    """One partner: its key, its documents, and every answer it got for each, in arrival order."""

    name: str
    api_key: str
    documents: list[str]
    endpoints: Endpoints
    rng: random.Random
    answers: dict[str, list[Answer]] = field(default_factory=dict)
    failures: int = 0
    """Requests that got no usable answer (no process answered, 401/403/404/503 …): retried."""

    def held(self, doc: str) -> tuple[str | None, int | None]:
        """The ETag and version the partner holds for `doc` (what it revalidates with)."""
        for answer in reversed(self.answers.get(doc, ())):
            if answer.version is not None:
                return answer.etag, answer.version
        return None, None

    async def poll_forever(self, client: httpx.AsyncClient) -> None:
        while True:
            for doc in self.documents:
                await self.fetch(client, doc)
            await asyncio.sleep(self.rng.uniform(*POLL_EVERY))

    async def fetch(self, client: httpx.AsyncClient, doc: str) -> Answer | None:
        """One conditional GET; the answer is recorded if it was a 200 or a 304."""
        etag, version = self.held(doc)
        headers = {"X-Api-Key": self.api_key, **({} if etag is None else {"If-None-Match": etag})}
        try:
            response = await client.get(f"{self.endpoints.current}/v1/feeds/{doc}", headers=headers)
        except _HTTP_ERRORS:
            self.failures += 1
            self.endpoints.advance()
            return None
        answer = _answer(response, etag, version)
        if answer is None:
            self.failures += 1
            if response.status_code >= 500:
                self.endpoints.advance()
            return None
        self.answers.setdefault(doc, []).append(answer)
        return answer


def _answer(response: httpx.Response, sent: str | None, held: int | None) -> Answer | None:
    etag = response.headers.get("etag")
    if response.status_code == 304:
        return Answer(304, sent, etag, held if etag == sent else None)
    if response.status_code != 200:
        return None
    try:
        version = int(json.loads(response.content)["version"])
    except (ValueError, KeyError, TypeError):
        version = None
    return Answer(200, sent, etag, version)


class PartnerPart:
    """`partners` partners polling the feeds; see the module docstring."""

    name = "partners"

    def __init__(
        self, targets: SoakTargets, fixtures: SoakFixtures, rng: random.Random, partners: int
    ) -> None:
        self._targets = targets
        self._fixtures = tuple(fixtures.all)
        self._rng = rng
        self._partners = partners
        self._pollers: list[Poller] = []
        self._problems: list[Violation] = []

    async def run(self, stop: asyncio.Event) -> None:
        """Create the partners once the fixtures exist, then poll until `stop`."""
        polling = asyncio.create_task(self._create_and_poll())
        try:
            await stop.wait()
        finally:
            polling.cancel()
            outcome = (await asyncio.gather(polling, return_exceptions=True))[0]
        if isinstance(outcome, Exception):
            detail = f"the partners stopped: {type(outcome).__name__}: {outcome}"
            self._problems.append(Violation(CHECK, "partners", detail))

    async def _create_and_poll(self) -> None:
        if not self._partners or not self._fixtures:
            return
        engine = create_engine(self._targets.database_url, pool_size=1)
        try:
            grants = await self._grants(engine)
            if not grants.matches:
                self._problems.append(Violation(CHECK, "partners", "no fixture has a competition to grant"))
                return
            for number in range(self._partners):
                self._pollers.append(await self._create(engine, number, grants))
        finally:
            await engine.dispose()
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT) as client:
            await asyncio.gather(*(poller.poll_forever(client) for poller in self._pollers))

    async def _grants(self, engine: AsyncEngine) -> Grants:
        """The fixtures' competitions (as the feeds judge them), once every fixture exists."""
        views = await fixture_views(engine, self._fixtures)
        matches: dict[int, list[int]] = {}
        days: dict[int, str] = {}
        for view in views:
            competition = competition_of(view.fixture)
            if competition is not None:
                matches.setdefault(competition, []).append(view.fixture.id)
            if view.fixture.kickoff is not None:
                days[view.fixture.id] = view.fixture.kickoff.astimezone(UTC).date().isoformat()
        return Grants(matches, days)

    async def _create(self, engine: AsyncEngine, number: int, grants: Grants) -> Poller:
        """One partner granted a seeded non-empty subset of the competitions; retried while
        Postgres is away (a name taken by an attempt whose answer was lost gets a new suffix)."""
        rng = random.Random(self._rng.getrandbits(64))
        competitions = sorted(grants.matches)
        granted = sorted(rng.sample(competitions, rng.randint(1, len(competitions))))
        while True:
            name = f"soak-partner-{number}-{rng.getrandbits(32):08x}"
            try:
                _, api_key = await create_partner(engine, name, granted)
            except (*_DATABASE_ERRORS, PartnerError):
                await asyncio.sleep(WAIT_FOR_FIXTURES)
                continue
            endpoints = Endpoints(self._targets.api_urls, rng.randrange(len(self._targets.api_urls)))
            return Poller(name, api_key, grants.documents(granted), endpoints, rng)

    async def check(self) -> CheckResult:
        """Each partner fetches each of its documents once more, then all it saw is held against
        Postgres' newest version of each document."""
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT) as client:
            await asyncio.gather(*(self._last_round(poller, client) for poller in self._pollers))
        finals = await final_versions(
            self._targets.database_url, {doc for poller in self._pollers for doc in poller.documents}
        )
        violations = [*self._problems]
        if self._fixtures and self._partners and not self._pollers and not self._problems:
            violations.append(Violation(CHECK, "partners", "the run stopped before every fixture existed"))
        for poller in self._pollers:
            for doc in poller.documents:
                answers = poller.answers.get(doc, [])
                violations += check_answers(f"{poller.name} {doc}", answers, finals.get(doc))
        answers = [
            answer for poller in self._pollers for listed in poller.answers.values() for answer in listed
        ]
        return CheckResult(
            self.name,
            checked=sum(len(poller.documents) for poller in self._pollers),
            violations=tuple(violations),
            figures={
                "partners": len(self._pollers),
                "feed_requests": len(answers) + sum(poller.failures for poller in self._pollers),
                "not_modified": sum(1 for answer in answers if answer.status == 304),
            },
        )

    async def _last_round(self, poller: Poller, client: httpx.AsyncClient) -> None:
        """One more conditional GET of each document, each tried on every process (twice) until
        one answers: the answer the final-version rule is judged by."""
        for doc in poller.documents:
            for _ in range(2 * len(self._targets.api_urls)):
                if await poller.fetch(client, doc) is not None:
                    break
                await asyncio.sleep(poller.rng.uniform(*POLL_EVERY))
            else:
                self._problems.append(Violation(CHECK, f"{poller.name} {doc}", "no answer at the end"))


async def final_versions(database_url: str, docs: set[str]) -> dict[str, int]:
    """The newest version Postgres saved of each of `docs` (absent: never published)."""
    if not docs:
        return {}
    engine = create_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                select(published_document.c.doc_key, func.max(published_document.c.version))
                .where(published_document.c.doc_key.in_(sorted(docs)))
                .group_by(published_document.c.doc_key)
            )
            return {str(key): int(version) for key, version in rows}
    finally:
        await engine.dispose()


async def fixture_views(engine: AsyncEngine, fixtures: Sequence[int]) -> list[MatchView]:
    """Every fixture of the run, looked for each second until all exist (the sync and the desks
    create them)."""
    while True:
        try:
            async with engine.connect() as conn:
                views = [await load_match(conn, fixture_id) for fixture_id in fixtures]
        except _DATABASE_ERRORS:
            views = [None]
        found = [view for view in views if view is not None]
        if len(found) == len(fixtures):
            return found
        await asyncio.sleep(WAIT_FOR_FIXTURES)
