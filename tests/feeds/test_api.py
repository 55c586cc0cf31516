"""`GET /v1/feeds/{doc}` over real HTTP: keys, grants, ETags and 304s, gzip, Redis down."""

from __future__ import annotations

import gzip
import json
from typing import Any

import httpx
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from devkit.devstack.ports import free_port
from scoreline.feeds.build import build_document
from scoreline.feeds.keys import FixturesDoc, MatchDoc
from scoreline.feeds.partners import create_partner, revoke_partner
from scoreline.feeds.published import Published
from scoreline.feeds.store import store_if_newer
from scoreline.settings import Settings
from tests.feeds.changes import MATCH, PREMIER_LEAGUE
from tests.feeds.conftest import Keys, serving
from tests.readmodel.rows import KICKOFF, MatchLog
from tests.support.waiting import eventually

MATCH_DOC = f"/v1/feeds/match/{MATCH}"
DAY_DOC = "/v1/feeds/fixtures/2026-03-14"


async def _publish(engine: AsyncEngine, redis: aioredis.Redis, doc: MatchDoc | FixturesDoc) -> Published:
    """What the builder does for one document: Postgres first, then Redis if newer."""
    result = await build_document(engine, doc)
    assert result is not None
    await store_if_newer(redis, result[0])
    return result[0]


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert set(error) >= {"code", "message"}
    return error


async def test_etag_then_304_and_unchanged_rebuild_keeps_the_etag(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    log = await MatchLog.create(engine, MATCH, state="live_first_half")
    await log.event(500001, "goal", 12)
    await log.board("live_first_half", 1, 0)
    published = await _publish(engine, redis, MatchDoc(MATCH))

    plain = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier, "Accept-Encoding": "identity"})
    assert plain.status_code == 200
    assert plain.headers["etag"] == published.etag
    assert plain.headers["cache-control"] == "private, no-cache"
    assert "content-encoding" not in plain.headers
    assert plain.content == published.body
    assert plain.json()["scoreboard"]["score"] == {"home": 1, "away": 0}

    not_modified = await api.get(
        MATCH_DOC,
        headers={"X-Api-Key": keys.premier, "If-None-Match": published.etag, "Accept-Encoding": "identity"},
    )
    assert not_modified.status_code == 304
    assert not_modified.content == b""
    assert not_modified.headers["etag"] == published.etag

    await _publish(engine, redis, MatchDoc(MATCH))  # rebuilt, nothing changed
    weak = await api.get(
        MATCH_DOC, headers={"X-Api-Key": keys.premier, "If-None-Match": f'"x", W/{published.etag}'}
    )
    assert weak.status_code == 304


async def test_gzip_when_accepted_with_its_own_strong_etag(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    await MatchLog.create(engine, MATCH)
    published = await _publish(engine, redis, MatchDoc(MATCH))
    async with httpx.AsyncClient(base_url=str(api.base_url)) as raw:
        # Read the raw bytes: httpx would otherwise undo the gzip.
        async with raw.stream(
            "GET", MATCH_DOC, headers={"X-Api-Key": keys.premier, "Accept-Encoding": "gzip"}
        ) as answer:
            compressed = b"".join([chunk async for chunk in answer.aiter_raw()])
    assert answer.status_code == 200
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.headers["vary"] == "Accept-Encoding"
    assert answer.headers["etag"] == published.etag[:-1] + '-gz"'
    assert gzip.decompress(compressed) == published.body

    again = await api.get(
        MATCH_DOC, headers={"X-Api-Key": keys.premier, "If-None-Match": answer.headers["etag"]}
    )
    assert again.status_code == 304


async def test_a_new_version_is_served_once_published(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    log = await MatchLog.create(engine, MATCH)
    first = await _publish(engine, redis, MatchDoc(MATCH))
    assert (await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier})).status_code == 200
    await log.board("live_first_half", 0, 1)
    second = await _publish(engine, redis, MatchDoc(MATCH))

    async def changed() -> httpx.Response | None:
        answer = await api.get(
            MATCH_DOC,
            headers={"X-Api-Key": keys.premier, "If-None-Match": first.etag, "Accept-Encoding": "identity"},
        )
        return answer if answer.status_code == 200 else None

    answer = await eventually(changed)
    assert answer.headers["etag"] == second.etag
    assert answer.json()["version"] == 2


async def test_an_older_version_written_late_to_redis_is_not_served(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    log = await MatchLog.create(engine, MATCH)
    built = await build_document(engine, MatchDoc(MATCH))
    assert built is not None
    older = built[0]
    await log.board("live_first_half", 1, 0)
    newer = await _publish(engine, redis, MatchDoc(MATCH))
    assert await store_if_newer(redis, older) is False  # the late writer
    answer = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier, "Accept-Encoding": "identity"})
    assert answer.headers["etag"] == newer.etag


async def test_a_missing_or_unknown_key_is_401(
    engine: AsyncEngine, redis: aioredis.Redis, api: httpx.AsyncClient
) -> None:
    await MatchLog.create(engine, MATCH)
    await _publish(engine, redis, MatchDoc(MATCH))
    missing = await api.get(MATCH_DOC)
    assert missing.status_code == 401
    assert _error(missing)["code"] == "unauthorized"
    assert missing.headers["www-authenticate"].startswith("ApiKey")
    wrong = await api.get(MATCH_DOC, headers={"X-Api-Key": "sl_partner_" + "x" * 43})
    assert wrong.status_code == 401
    assert _error(wrong)["code"] == "invalid_api_key"


async def test_a_revoked_key_is_403_from_the_moment_it_is_revoked(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    """The API's snapshot reloads on the revocation's NOTIFY: no restart, no database read per request."""
    await MatchLog.create(engine, MATCH)
    await _publish(engine, redis, MatchDoc(MATCH))
    assert (await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier})).status_code == 200
    await revoke_partner(engine, "premier-partner")

    async def refused() -> httpx.Response | None:
        answer = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier})
        return answer if answer.status_code == 403 else None

    answer = await eventually(refused, within=5)
    assert _error(answer)["code"] == "api_key_revoked"
    _, fresh = await create_partner(engine, "late-partner", [PREMIER_LEAGUE])
    await eventually(lambda: _status_is(api, fresh, 200), within=5)


async def _status_is(api: httpx.AsyncClient, key: str, status: int) -> bool:
    return (await api.get(MATCH_DOC, headers={"X-Api-Key": key})).status_code == status


async def test_a_match_outside_the_partners_competitions_is_403(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    await MatchLog.create(engine, MATCH)
    await _publish(engine, redis, MatchDoc(MATCH))
    answer = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.other})
    assert answer.status_code == 403
    assert _error(answer)["code"] == "competition_not_granted"


async def test_a_days_fixture_list_is_filtered_to_the_partners_competitions(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    await MatchLog.create(engine, MATCH)
    other = {"id": PREMIER_LEAGUE + 1, "name": "Championship"}
    await MatchLog.create(engine, MATCH + 1, kickoff=KICKOFF.replace(hour=17), competition=other)
    await _publish(engine, redis, FixturesDoc(KICKOFF.date()))

    premier = await api.get(DAY_DOC, headers={"X-Api-Key": keys.premier})
    second = await api.get(DAY_DOC, headers={"X-Api-Key": keys.other})
    assert [entry["fixture"]["id"] for entry in premier.json()["fixtures"]] == [MATCH]
    assert [entry["fixture"]["id"] for entry in second.json()["fixtures"]] == [MATCH + 1]
    assert premier.headers["etag"] != second.headers["etag"]
    again = await api.get(
        DAY_DOC, headers={"X-Api-Key": keys.premier, "If-None-Match": premier.headers["etag"]}
    )
    assert again.status_code == 304
    crossed = await api.get(
        DAY_DOC, headers={"X-Api-Key": keys.premier, "If-None-Match": second.headers["etag"]}
    )
    assert crossed.status_code == 200


async def test_an_unknown_document_is_404(keys: Keys, api: httpx.AsyncClient) -> None:
    for path in (
        "/v1/feeds/match/42",
        "/v1/feeds/match/042",
        "/v1/feeds/scores/today",
        "/v1/feeds/fixtures/2026-02-30",
    ):
        answer = await api.get(path, headers={"X-Api-Key": keys.premier})
        assert answer.status_code == 404, path
        assert _error(answer)["code"] == "document_not_found"


async def test_with_redis_down_the_feed_is_served_from_postgres(
    engine: AsyncEngine, feed_settings: Settings, keys: Keys
) -> None:
    await MatchLog.create(engine, MATCH)
    result = await build_document(engine, MatchDoc(MATCH))  # saved in Postgres; Redis never had it
    assert result is not None
    published = result[0]
    down = feed_settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})
    async with serving(down) as api:
        answer = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier, "Accept-Encoding": "identity"})
        assert answer.status_code == 200
        assert answer.headers["etag"] == published.etag
        assert answer.content == published.body
        assert json.loads(answer.content)["doc"] == f"match/{MATCH}"
        cached = await api.get(
            MATCH_DOC, headers={"X-Api-Key": keys.premier, "If-None-Match": published.etag}
        )
        assert cached.status_code == 304


async def test_a_partner_is_never_taken_back_to_a_version_older_than_it_holds(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, api: httpx.AsyncClient
) -> None:
    """A process still trusting its copy served it to a partner that already held a newer version
    from another process: the partner's document went back."""
    log = await MatchLog.create(engine, MATCH, state="live_first_half")
    first = await _publish(engine, redis, MatchDoc(MATCH))
    held_here = await api.get(MATCH_DOC, headers={"X-Api-Key": keys.premier, "Accept-Encoding": "identity"})
    assert held_here.headers["etag"] == first.etag
    await log.event(500001, "goal", 12)
    await log.board("live_first_half", 1, 0)
    newer = await _publish(engine, redis, MatchDoc(MATCH))
    assert newer.version > first.version

    from_another_process = await api.get(
        MATCH_DOC,
        headers={"X-Api-Key": keys.premier, "If-None-Match": newer.etag, "Accept-Encoding": "identity"},
    )

    assert from_another_process.status_code == 304
    assert from_another_process.headers["etag"] == newer.etag
