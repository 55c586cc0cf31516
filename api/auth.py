"""Who is calling: `SenderDep` (any desk or operator token) and `OperatorDep` (operators only).

Tokens travel as `Authorization: Bearer <token>`. A missing or malformed header is 401
`unauthorized`; a well-formed token that is unknown or revoked is 401 `invalid_token`; a desk token
where an operator is needed is 403 `operators_only`; a desk asking about a fixture it was not given
is 403 `fixture_not_allowed` (`require_fixture`).

Both are checked before the body is read (`api.guards.token_first.TokenFirstRoute`): an anonymous
client announcing a large body is answered at once instead of being waited for. The dependencies
then find the sender the early check stored on the request.

Successful lookups are cached in the process for `CACHE_TTL` seconds, keyed by the token's hash, so
a desk sending commands does not cost a Postgres round trip per command. The price: a revoked token
keeps working for up to `CACHE_TTL` seconds in each API process that used it just before. Failed
lookups are not cached, so a new token works at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Final

from fastapi import Depends, Request
from starlette.exceptions import HTTPException

from api.deps import resources_of
from api.errors import ApiError
from api.guards.token_first import checked_before_the_body
from scoreline.accounts.models import Sender
from scoreline.accounts.store import authenticate
from scoreline.accounts.tokens import hash_token
from scoreline.logging import get_logger

CACHE_TTL: Final = 5.0
CACHE_SIZE: Final = 10_000
_SENDER_KEY: Final = "scoreline.sender"
"""Where the request's scope keeps its sender once found, so it is looked up once per request."""

log = get_logger("api.auth")


class SenderCache:
    """Recently authenticated senders by token hash, each kept for `ttl` seconds; bounded in size."""

    def __init__(
        self, ttl: float = CACHE_TTL, size: int = CACHE_SIZE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._entries: dict[str, tuple[float, Sender]] = {}

    def get(self, token_hash: str) -> Sender | None:
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        expires, sender = entry
        if expires <= self._clock():
            del self._entries[token_hash]
            return None
        return sender

    def put(self, token_hash: str, sender: Sender) -> None:
        now = self._clock()
        if len(self._entries) >= self._size:
            self._entries = {key: entry for key, entry in self._entries.items() if entry[0] > now}
            if len(self._entries) >= self._size:
                self._entries.clear()
        self._entries[token_hash] = (now + self._ttl, sender)


def _cache(request: Request) -> SenderCache:
    """The app's own cache, made on first use (one per app, so tests' apps never share one)."""
    state = request.app.state
    cache: SenderCache | None = getattr(state, "sender_cache", None)
    if cache is None:
        cache = state.sender_cache = SenderCache()
    return cache


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization")
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        message = (
            "missing Authorization header" if header is None else "Authorization is not 'Bearer <token>'"
        )
        raise HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})
    return token.strip()


async def _sender(request: Request) -> Sender:
    known = request.scope.get(_SENDER_KEY)
    if isinstance(known, Sender):
        return known
    token = _bearer(request)
    key = hash_token(token)
    cache = _cache(request)
    sender = cache.get(key)
    if sender is None:
        sender = await authenticate(resources_of(request).engine, token)
        if sender is None:
            log.info("auth.refused", reason="invalid_token", path=request.url.path)
            raise ApiError(401, "invalid_token", "the token is unknown or revoked")
        cache.put(key, sender)
    request.scope[_SENDER_KEY] = sender
    return sender


def _only_operators(sender: Sender) -> Sender:
    if sender.kind != "operator":
        raise ApiError(403, "operators_only", "this needs an operator token")
    return sender


async def _operator(sender: Annotated[Sender, Depends(_sender)]) -> Sender:
    return _only_operators(sender)


async def _operator_first(request: Request) -> None:
    _only_operators(await _sender(request))


async def _sender_first(request: Request) -> None:
    await _sender(request)


checked_before_the_body(_operator, _operator_first)
checked_before_the_body(_sender, _sender_first)


def require_fixture(sender: Sender, fixture_id: int) -> None:
    """Refuse a desk that was not given `fixture_id` (before looking the fixture up: no leak)."""
    if not sender.may_score(fixture_id):
        raise ApiError(403, "fixture_not_allowed", f"{sender.label} may not act on fixture {fixture_id}")


SenderDep = Annotated[Sender, Depends(_sender)]
OperatorDep = Annotated[Sender, Depends(_operator)]
