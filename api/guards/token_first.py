"""`TokenFirstRoute`: a route that checks its caller's token before it reads the body.

FastAPI reads and parses a route's whole body before it runs any dependency, the token check
included, so an anonymous client could make the server wait for (and parse) a body before it is
told 401. An authenticating dependency declares the check that can run first
(`checked_before_the_body`: desk and operator tokens in `api.auth`, device tokens in
`api.routes.devices`); a router built with this route class runs it before the body, and the
dependency then finds its caller already on the request. A route taking none is left as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

FirstCheck = Callable[[Request], Awaitable[None]]

_FIRST_CHECKS: dict[object, FirstCheck] = {}


def checked_before_the_body(dependency: object, check: FirstCheck) -> None:
    """Routes depending on `dependency` run `check` before reading their body; `check` leaves
    what it found on the request, where `dependency` takes it."""
    _FIRST_CHECKS[dependency] = check


def first_check(dependant: Dependant) -> FirstCheck | None:
    """The first declared check among a route's dependencies, outermost first (an operator
    dependency comes before the desk-or-operator one it builds on)."""
    return next((_FIRST_CHECKS[call] for call in _calls(dependant) if call in _FIRST_CHECKS), None)


def _calls(dependant: Dependant) -> Iterator[object]:
    for dependency in dependant.dependencies:
        yield dependency.call
        yield from _calls(dependency)


class TokenFirstRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        check = first_check(self.dependant)
        if check is None:
            return handler

        async def checked_first(request: Request) -> Response:
            await check(request)
            return await handler(request)

        return checked_first
