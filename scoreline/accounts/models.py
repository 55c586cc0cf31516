"""Desks, operators, and the `Sender` a request authenticates as."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from domain.rules import Actor


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Desk(_Frozen):
    """A scorer desk: scores only the fixtures it was given."""

    id: int
    name: str
    fixtures: frozenset[int]
    created_at: datetime
    revoked_at: datetime | None = None


class Operator(_Frozen):
    """An operator: creates fixtures, switches scoring modes, may score any fixture."""

    id: int
    name: str
    created_at: datetime
    revoked_at: datetime | None = None


class Sender(_Frozen):
    """Who sent a request, as its bearer token says.

    `fixtures` is the set a desk may score; None means every fixture (an operator). `kind` is the
    `actor` the sport rules take, so an operator-only command is refused to a desk by the rules too.
    """

    kind: Actor
    id: int
    name: str
    fixtures: frozenset[int] | None

    @property
    def label(self) -> str:
        """`desk:3` or `operator:1`: what `command.sender` records."""
        return f"{self.kind}:{self.id}"

    def may_score(self, fixture_id: int) -> bool:
        """Whether this sender may send commands for (and read the squads of) `fixture_id`."""
        return self.fixtures is None or fixture_id in self.fixtures
