"""Partner feeds: `GET /v1/feeds/{doc}` with `X-Api-Key`, answered 200 or 304 (design §5).

The hot path touches no database: the key is checked against the process's partner snapshot and
the document comes from the process's copy (refreshed from Redis at most once a second per
document, Postgres when Redis cannot answer). A match document needs its competition granted; a
day's fixture list is filtered to the partner's competitions (a partner sees the day's fixtures it
may open, and each grant set gets its own strong ETag).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.errors import error_body
from api.metrics import ApiMetrics
from api.resources import Resources
from scoreline.feeds.change_cursor import MAX_TOKEN_LENGTH, START, BadCursorError, ChangeCursor
from scoreline.feeds.content import held_version
from scoreline.feeds.directory import PartnerDirectory
from scoreline.feeds.keys import MatchDoc, parse_doc_key
from scoreline.feeds.partner_changes import MAX_LIMIT, PartnerChange, changes_after, is_kept, oldest_cursor
from scoreline.feeds.partners import Partner
from scoreline.feeds.published import latest_version
from scoreline.feeds.served import Document, DocumentCopies, FeedUnavailableError, Representation

CACHE_CONTROL = "private, no-cache"
"""Per partner (private), and live: a client may keep a copy but revalidates it (If-None-Match)."""
AUTH_CHALLENGE = {"WWW-Authenticate": 'ApiKey header="X-Api-Key"'}
JSON_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class Feeds:
    """What the feed route needs, built once per API process by the router's lifespan."""

    partners: PartnerDirectory
    documents: DocumentCopies


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Runs inside the application's own lifespan, so its resources exist already.
    resources: Resources = app.state.resources
    partners = PartnerDirectory(resources.settings.require_database_url())
    await partners.start_and_load()
    app.state.feeds = Feeds(partners, DocumentCopies(resources.engine, resources.redis))
    try:
        yield
    finally:
        await partners.stop()


router = APIRouter(prefix="/v1/feeds", tags=["feeds"], lifespan=_lifespan)

DocPath = Annotated[
    str,
    Path(description="`match/{fixture_id}` or `fixtures/{YYYY-MM-DD}` (a UTC day).", max_length=40),
]

_ERRORS: dict[int | str, dict[str, Any]] = {
    304: {"description": "Not modified: `If-None-Match` holds the current ETag."},
    401: {"description": "`X-Api-Key` is missing or not a key we issued."},
    403: {"description": "The key was revoked, or the match's competition is not granted to it."},
    404: {"description": "No such document (never published)."},
    503: {"description": "Partner keys or the document cannot be read right now."},
}


class ChangesPage(BaseModel):
    """A page of the change cursor: `next` is where the following read starts (the same cursor
    when nothing new was committed)."""

    changes: list[PartnerChange]
    next: str


After = Annotated[
    str | None,
    Query(
        max_length=MAX_TOKEN_LENGTH,
        description="The `next` of the previous page; without it, from the oldest change kept.",
    ),
]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Changes in this page at most.")]

_CHANGE_ERRORS: dict[int | str, dict[str, Any]] = {
    401: _ERRORS[401],
    403: {"description": "The key was revoked."},
    410: {"description": "The cursor is older than what is kept; `error.oldest` is the oldest valid one."},
    422: {"description": "`after` is not a cursor this API issued, or `limit` is out of 1..1000."},
    503: _ERRORS[503],
}


# Declared before the `/{doc:path}` catch-all, which would otherwise take `changes` as a document.
@router.get("/changes", response_model=ChangesPage, responses=_CHANGE_ERRORS)
async def changes(request: Request, after: After = None, limit: Limit = 100) -> Response:
    """Every change (one log entry each) of the matches in your competitions, in commit order.

    Keep `next` and send it as `after`: you get each change once, with no gap, across restarts. A
    broadcast delay set on your key holds back every change younger than it.
    """
    found = _partner(request)
    if not isinstance(found, Partner):
        return found
    try:
        cursor = START if after is None else ChangeCursor.decode(after)
    except BadCursorError:
        return _error(422, "invalid_cursor", "`after` is not a cursor this API issued; use a `next` value")
    resources: Resources = request.app.state.resources
    async with resources.engine.connect() as conn:
        # One snapshot: the cursor's commit is checked and read past in the same view of the outbox.
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with snapshot.begin():
            if not await is_kept(snapshot, cursor):
                oldest = (await oldest_cursor(snapshot)).encode()
                body = error_body(
                    "cursor_expired",
                    "changes after this cursor are no longer kept; start again from `oldest`",
                    oldest=oldest,
                )
                return JSONResponse(body, status_code=410)
            page = await changes_after(
                snapshot,
                cursor,
                found.competitions,
                limit,
                delay=timedelta(seconds=found.delay_seconds),
            )
    body_json = ChangesPage(changes=page.changes, next=page.cursor.encode()).model_dump_json()
    return Response(body_json, media_type=JSON_TYPE, headers={"Cache-Control": "private, no-store"})


@router.get("/{doc:path}", responses=_ERRORS, response_class=Response)
async def feed(doc: DocPath, request: Request) -> Response:
    """The latest version of a partner document, with a strong `ETag`; gzip if accepted.

    Send the partner key in `X-Api-Key` and the last `ETag` you got in `If-None-Match` to get an
    empty 304 while the document has not changed.
    """
    response = await _feed(doc, request)
    metrics: ApiMetrics = request.app.state.metrics
    metrics.feed_requests.labels(str(response.status_code)).inc()
    return response


def _partner(request: Request) -> Partner | JSONResponse:
    """The active partner whose key the request carries, or the error to answer."""
    feeds: Feeds = request.app.state.feeds
    api_key = request.headers.get("x-api-key")
    if not api_key:
        return _error(
            401, "unauthorized", "send your partner API key in the X-Api-Key header", AUTH_CHALLENGE
        )
    if not feeds.partners.loaded:
        return _error(503, "unavailable", "partner keys are not loaded yet; try again shortly")
    partner = feeds.partners.find(api_key)
    if partner is None:
        return _error(401, "invalid_api_key", "this API key is not valid", AUTH_CHALLENGE)
    if not partner.active:
        return _error(403, "api_key_revoked", "this API key has been revoked")
    return partner


async def _feed(doc: str, request: Request) -> Response:
    headers = request.headers
    partner = _partner(request)
    if not isinstance(partner, Partner):
        return partner
    key = parse_doc_key(doc)
    held = held_version(headers.get("if-none-match"))
    try:
        document = None if key is None else await _document(request, key.key, partner.delay_seconds, held)
    except FeedUnavailableError:
        return _error(503, "unavailable", "the document cannot be read right now; try again shortly")
    if key is None or document is None:
        return _error(404, "document_not_found", f"no feed document {doc!r}")
    if held is not None and document.version < held and partner.delay_seconds == 0:
        # The partner holds a newer version than this process can reach now (its stores are out
        # of reach): an older one would take the partner back.
        return _error(503, "unavailable", "the document cannot be read right now; try again shortly")
    if isinstance(key, MatchDoc):
        if document.published.competition_id not in partner.competitions:
            return _error(403, "competition_not_granted", "this match's competition is not in your feed")
        representation = document.full
    else:
        representation = document.for_competitions(partner.competitions)
    return _answer(representation, headers.get("if-none-match"), headers.get("accept-encoding"))


async def _document(request: Request, doc_key: str, delay_seconds: int, held: int | None) -> Document | None:
    """The document a partner reads: the latest (at least `held`, the version it proves it holds,
    if this process can reach it), or, with a broadcast delay, the latest version saved at least
    that long ago (read from Postgres: the shared copies hold only the latest)."""
    if delay_seconds == 0:
        feeds: Feeds = request.app.state.feeds
        return await feeds.documents.get(doc_key, at_least=held)
    resources: Resources = request.app.state.resources
    try:
        async with resources.engine.connect() as conn:
            published = await latest_version(conn, doc_key, older_than=timedelta(seconds=delay_seconds))
    except (DBAPIError, PoolTimeoutError, OSError) as error:
        raise FeedUnavailableError(doc_key) from error
    return None if published is None else Document(published)


def _answer(
    representation: Representation, if_none_match: str | None, accept_encoding: str | None
) -> Response:
    gzipped = accepts_gzip(accept_encoding)
    etag = representation.gzip_etag if gzipped else representation.etag
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL, "Vary": "Accept-Encoding"}
    if if_none_match is not None and etag_matches(
        if_none_match, representation.etag, representation.gzip_etag
    ):
        return Response(status_code=304, headers=headers)
    if gzipped:
        headers["Content-Encoding"] = "gzip"
        return Response(representation.gzipped, media_type=JSON_TYPE, headers=headers)
    return Response(representation.body, media_type=JSON_TYPE, headers=headers)


def etag_matches(if_none_match: str, *etags: str) -> bool:
    """`If-None-Match` uses weak comparison (RFC 9110 13.1.2): `W/` is ignored, `*` matches anything.

    Either coding's tag matches: both name the same version, so the client's copy is current.
    """
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") in etags for tag in if_none_match.split(","))


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether `Accept-Encoding` lists gzip with a non-zero weight."""
    if not accept_encoding:
        return False
    for part in accept_encoding.split(","):
        coding, _, parameters = part.partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip"):
            continue
        weight = parameters.strip().lower()
        if weight.startswith("q="):
            try:
                return float(weight[2:]) > 0
            except ValueError:
                return False
        return True
    return False


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The API's one error body (`api.errors`), with the headers a 401 needs."""
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)
