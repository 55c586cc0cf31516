"""Real HTTP receivers on 127.0.0.1 that journal every request and answer as a test tells them.

Each receiver is a tiny Starlette app served by uvicorn in the test's loop (`tests.support.http`),
so deliveries cross a real socket: timeouts, statuses, `Retry-After` and redirects are real.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from standardwebhooks import Webhook
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.http import serve


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    raw: bytes
    answered: int
    """The status given; 0 when the request was held past the sender's timeout."""

    @property
    def body(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.raw)
        return parsed

    @property
    def key(self) -> tuple[int, int]:
        return self.body["fixture_id"], self.body["seq"]

    def verify(self, secret: str) -> dict[str, Any]:
        """Check the signature with the Standard Webhooks reference verifier (raises if it fails)."""
        verified: dict[str, Any] = Webhook(secret).verify(self.raw, self.headers)
        return verified


Behaviour = Callable[[dict[str, Any]], Response | None]
"""Given the body, an answer to give instead of 200 (None: 200)."""


@dataclass
class Receiver:
    url: str
    journal: list[Received] = field(default_factory=list)
    behaviour: Behaviour = lambda _body: None
    hang: float = 0.0
    """Seconds to sit on each request before answering: longer than the sender's timeout."""

    def delivered(self) -> list[Received]:
        return [r for r in self.journal if 200 <= r.answered < 300]

    def delivered_keys(self, fixture_id: int | None = None) -> list[tuple[int, int]]:
        keys = [r.key for r in self.delivered()]
        return keys if fixture_id is None else [k for k in keys if k[0] == fixture_id]


@asynccontextmanager
async def receiver(path: str = "/hook") -> AsyncIterator[Receiver]:
    holder: list[Receiver] = []

    async def hook(request: Request) -> Response:
        me = holder[0]
        raw = await request.body()
        # Journaled on arrival, in arrival order, whatever happens to the answer afterwards.
        # A hung request is journaled as answered 0: the sender gives up before the answer comes.
        answer = me.behaviour(json.loads(raw)) or Response("ok", status_code=200)
        me.journal.append(Received(dict(request.headers), raw, 0 if me.hang else answer.status_code))
        if me.hang:
            await asyncio.sleep(me.hang)
        return answer

    app = Starlette(routes=[Route(path, hook, methods=["POST"])])
    async with serve(app) as base:
        holder.append(Receiver(url=base + path))
        yield holder[0]
