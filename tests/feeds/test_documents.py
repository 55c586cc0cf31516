"""Documents built from Postgres: their content, versions only on a content change, Redis newer-only."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.build import build_document
from scoreline.feeds.keys import FixturesDoc, MatchDoc, parse_doc_key
from scoreline.feeds.published import Published, latest_version
from scoreline.feeds.store import read_published, store_if_newer
from tests.feeds.changes import MATCH, PREMIER_LEAGUE
from tests.readmodel.rows import KICKOFF, MatchLog


async def _build(engine: AsyncEngine, doc: MatchDoc | FixturesDoc) -> tuple[Published, bool]:
    result = await build_document(engine, doc)
    assert result is not None
    return result


async def test_rebuilding_unchanged_content_keeps_version_and_etag(engine: AsyncEngine) -> None:
    """Same content (even after a clock-only scoreboard write) = same version, ETag and bytes."""
    log = await MatchLog.create(engine, MATCH, state="live_first_half")
    await log.event(500001, "goal", 12, player=(7, "Saka"))
    await log.board("live_first_half", 1, 0, minute=12)
    first, created = await _build(engine, MatchDoc(MATCH))
    assert (first.version, created) == (1, True)

    again, created = await _build(engine, MatchDoc(MATCH))
    assert created is False
    assert (again.version, again.etag, again.body) == (first.version, first.etag, first.body)

    await log.board("live_first_half", 1, 0, minute=31)  # the clock moved, nothing a partner reads
    clock_only, created = await _build(engine, MatchDoc(MATCH))
    assert created is False
    assert (clock_only.version, clock_only.etag) == (first.version, first.etag)

    await log.event(500002, "goal", 33, side="away")
    await log.board("live_first_half", 1, 1, minute=33)
    changed, created = await _build(engine, MatchDoc(MATCH))
    assert created is True
    assert changed.version == 2
    assert changed.etag != first.etag


async def test_match_document_has_fixture_scoreboard_and_events_in_match_time_order(
    engine: AsyncEngine,
) -> None:
    log = await MatchLog.create(engine, MATCH, state="live_second_half")
    late = await log.event(500004, "goal", 90, side="away")
    await log.event(500001, "goal", 12, player=(7, "Saka"))
    await log.event(500003, "yellow_card", 45, extra_minute=2)
    await log.event(500002, "substitution", 45)
    await log.retract(late)
    await log.board("live_second_half", 1, 0, minute=70)

    published, _ = await _build(engine, MatchDoc(MATCH))
    body = json.loads(published.body)
    assert body["doc"] == f"match/{MATCH}"
    assert body["version"] == 1
    assert datetime.fromisoformat(body["published_at"]).tzinfo is not None
    assert body["competition_id"] == PREMIER_LEAGUE == published.competition_id
    assert body["fixture"]["id"] == MATCH
    assert body["fixture"]["home"]["name"] == "Arsenal"
    assert body["scoreboard"]["state"] == "live_second_half"
    assert body["scoreboard"]["score"] == {"home": 1, "away": 0}
    assert "minute" not in body["scoreboard"]
    assert [(e["provider_event_id"], e["retracted"]) for e in body["events"]] == [
        (500001, False),
        (500002, False),
        (500003, False),
        (500004, True),
    ]


async def test_fixture_list_holds_that_utc_days_fixtures_in_kickoff_order(engine: AsyncEngine) -> None:
    later = await MatchLog.create(engine, MATCH + 1, kickoff=KICKOFF.replace(hour=19), name="Late game")
    await MatchLog.create(engine, MATCH, state="live_first_half")
    await MatchLog.create(
        engine, MATCH + 2, kickoff=datetime(2026, 3, 15, 0, 30, tzinfo=UTC), name="Tomorrow"
    )
    await later.board("finished", 2, 2)

    published, _ = await _build(engine, FixturesDoc(date(2026, 3, 14)))
    body = json.loads(published.body)
    assert published.competition_id is None
    assert body["date"] == "2026-03-14"
    assert [
        (entry["fixture"]["id"], entry["state"], entry["score"], entry["competition_id"])
        for entry in body["fixtures"]
    ] == [
        (MATCH, "live_first_half", {"home": 0, "away": 0}, PREMIER_LEAGUE),
        (MATCH + 1, "finished", {"home": 2, "away": 2}, PREMIER_LEAGUE),
    ]


async def test_a_fixture_without_competition_object_belongs_to_its_league(engine: AsyncEngine) -> None:
    """The ingest fills `league_id`, not `competition`: grants then go by league."""
    await MatchLog.create(engine, MATCH, competition=None)
    published, _ = await _build(engine, MatchDoc(MATCH))
    assert published.competition_id == 8  # MatchLog's league_id


async def test_no_document_for_a_match_that_does_not_exist(engine: AsyncEngine) -> None:
    assert await build_document(engine, MatchDoc(99)) is None


async def test_postgres_gives_back_the_exact_bytes_redis_holds(engine: AsyncEngine) -> None:
    """JSONB keeps neither key order nor spacing; the fallback re-serialises canonically."""
    await MatchLog.create(engine, MATCH)
    published, _ = await _build(engine, MatchDoc(MATCH))
    async with engine.connect() as conn:
        stored = await latest_version(conn, published.doc_key)
    assert stored == published


async def test_an_older_version_written_late_never_replaces_a_newer_one(
    engine: AsyncEngine, redis: aioredis.Redis
) -> None:
    """Compare-and-set on the version: v2 stays when v1 arrives after it (a retry, a slow writer)."""
    log = await MatchLog.create(engine, MATCH)
    v1, _ = await _build(engine, MatchDoc(MATCH))
    await log.board("live_first_half", 1, 0)
    v2, _ = await _build(engine, MatchDoc(MATCH))
    assert v2.version == 2

    assert await store_if_newer(redis, v2) is True
    assert await store_if_newer(redis, v1) is False
    assert await store_if_newer(redis, v2) is False
    assert await read_published(redis, v2.doc_key) == v2


def test_only_canonical_document_keys_name_a_document() -> None:
    assert parse_doc_key("match/81000001") == MatchDoc(81000001)
    assert parse_doc_key("fixtures/2026-03-14") == FixturesDoc(date(2026, 3, 14))
    for junk in (
        "match/081",
        "match/0",
        "match/x",
        "match/99999999999999999999",
        "fixtures/2026-02-30",
        "fixtures/2026-3-14",
        "fixtures",
        "match/1/",
        "other/1",
    ):
        assert parse_doc_key(junk) is None, junk
