"""`TokenFirstRoute`: a route that checks its desk or operator token before it reads the body.

FastAPI reads and parses a route's whole body before it runs any dependency, the token check
included, so an anonymous client could make the server wait for (and parse) a body before it is
told 401. A router built with this route class runs the token check its dependencies declare
(`api.auth.SenderDep` / `OperatorDep`) first; the dependency then finds the sender already on the
request. A route taking neither is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from api.auth import token_check


class TokenFirstRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        check = token_check(self.dependant)
        if check is None:
            return handler

        async def checked_first(request: Request) -> Response:
            await check(request)
            return await handler(request)

        return checked_first
