"""The soak's contracts: what a load part is given, and what every check hands the report."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class SoakTargets:
    """Where the running stack answers. `api_urls` are the API processes (any one serves any
    request; a client moves to the next when one does not answer)."""

    api_urls: tuple[str, ...]
    provider_url: str
    apns_admin_url: str
    database_url: str
    apns_journal: Path
    """The APNs simulator's complete journal, one JSON record per line (its `--journal-file`)."""


@dataclass(frozen=True)
class Violation:
    """One broken guarantee, named well enough to find: `subject` is the fixture, key or device."""

    check: str
    subject: str
    detail: str

    def line(self) -> str:
        return f"{self.check}: {self.subject}: {self.detail}"


@dataclass(frozen=True)
class CheckResult:
    """One row of the final table: what was checked, how much of it, and what broke."""

    name: str
    checked: int
    """How many things (events, commands, devices, clients, documents) the check looked at."""
    violations: tuple[Violation, ...] = ()
    figures: Mapping[str, int] = field(default_factory=dict)
    """The part's own counts for the run's figures (commands sent, pushes, reconnects ...)."""

    @property
    def passed(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class SoakFixtures:
    """The matches of the run: the provider's (Scoreline fixture ids, from the recordings) and
    the desk-scored ones the desks created."""

    provider: Sequence[int]
    desk: Sequence[int]

    @property
    def all(self) -> tuple[int, ...]:
        return (*self.provider, *self.desk)


class LoadPart(Protocol):
    """A kind of client of the stack (desks, devices, screens, partners).

    `run` plays until `stop` is set (its work may end earlier: a desk whose match is over waits),
    never raises for a fault of the stack (that is what the soak is for: it retries as the real
    client would), and returns once it has stopped. `check` then compares what it recorded with
    Postgres and the simulators' records."""

    name: str

    async def run(self, stop: asyncio.Event) -> None: ...

    async def check(self) -> CheckResult: ...
