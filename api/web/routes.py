"""Serves the two web apps: `/desk/{fixture_id}` and `/console`, and their files under `/web/`.

The apps are plain ES modules committed in the package (no build step, nothing from a CDN), so a
deploy of the API is a deploy of the apps. Both pages are the same HTML whatever the fixture: the
script reads the fixture id from its own path, and the token from the browser's storage, never
from the URL (a URL ends up in history, logs and `Referer` headers).

Every answer carries a Content-Security-Policy that allows only this origin, so a page can load
no script but ours and send its bearer token nowhere else. Files are revalidated on every load
(`no-cache` with an ETag): a scorer who reloads after a deploy runs the new code, and the outbox
in IndexedDB carries the unsent taps across.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

from fastapi import APIRouter, FastAPI
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from domain.rules.commands import MAX_ID

STATIC: Final = Path(__file__).parent / "static"
PREFIX: Final = "/web"
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)

FixtureId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html", headers=SECURITY_HEADERS)


@router.get("/desk/{fixture_id}")
async def desk(fixture_id: FixtureId) -> FileResponse:
    """The scorer desk for one fixture (the page signs in with a desk token it keeps)."""
    return _page("desk.html")


@router.get("/console")
async def console() -> FileResponse:
    """The operator console (signs in with an operator token)."""
    return _page("console.html")


@router.get("/desk")
async def desk_without_fixture() -> RedirectResponse:
    """A desk needs a fixture: the console lists them."""
    return RedirectResponse("/console", status_code=307)


class _StaticWithHeaders:
    """The package's files with the same security and revalidation headers as the pages."""

    def __init__(self) -> None:
        self._files = StaticFiles(directory=STATIC)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self._files(scope, receive, with_headers)


def install_web_apps(app: FastAPI) -> None:
    """The two pages and their files."""
    app.include_router(router)
    app.mount(PREFIX, _StaticWithHeaders(), name="web")
