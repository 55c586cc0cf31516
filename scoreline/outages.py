"""Telling a store out of reach (restarting, a network cut) from a request or query gone wrong.

The API answers the first, and a connection pool with no connection free, 503 with `Retry-After`
instead of 500.
"""

from __future__ import annotations

from typing import TypeVar

import asyncpg
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

E = TypeVar("E", bound=BaseException)


def is_outage(error: BaseException) -> bool:
    """A store that cannot be reached, rather than a request or a query gone wrong: a refused or
    broken connection, or a driver error raised because the connection was lost."""
    if isinstance(error, OSError | RedisConnectionError | RedisTimeoutError):
        return True
    if isinstance(error, DBAPIError):
        return error.connection_invalidated or _lost_connection(error)
    return False


def is_pool_exhausted(error: BaseException) -> bool:
    """Every connection of the process's pool stayed in use for the pool's whole timeout
    (`QueuePool limit ... reached`): nothing was sent to the store, and the same request a moment
    later normally finds a connection."""
    return isinstance(error, PoolTimeoutError)


def driver_cause(error: BaseException, kinds: type[E] | tuple[type[E], ...]) -> E | None:
    """The driver error of one of `kinds` behind an error raised through SQLAlchemy, if any:
    asyncpg's errors arrive wrapped in the dialect's own (as its cause)."""
    if not isinstance(error, DBAPIError):
        return None
    cause: BaseException | None = error.orig
    while cause is not None:
        if isinstance(cause, kinds):
            return cause
        cause = cause.__cause__
    return None


def _lost_connection(error: DBAPIError) -> bool:
    """asyncpg's connection errors arrive wrapped in the dialect's own error (as its cause)."""
    cause: BaseException | None = error.orig
    while cause is not None:
        if isinstance(cause, (OSError, *_ASYNCPG_CONNECTION_ERRORS)):
            return True
        cause = cause.__cause__
    return False


_ASYNCPG_CONNECTION_ERRORS = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
)
