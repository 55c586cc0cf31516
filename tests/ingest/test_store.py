"""The ingest transaction against real Postgres: recordings replayed line by line end as expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.ingest.store import IngestStore
from activities.provider.normaliser import normalise_fixture
from domain.moments import KeyMoment
from domain.snapshot import MatchState, Snapshot

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def snapshots(name: str) -> list[Snapshot]:
    lines = (RECORDINGS / f"{name}.jsonl").read_text().splitlines()[1:]
    return [normalise_fixture(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line]


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDINGS / f"{name}.expected.json").read_text())
    return data


async def _table_counts(db: asyncpg.Connection) -> dict[str, int]:
    tables = ("fixture", "match_event", "timeline_item", "scoreboard", "domain_event")
    return {table: await db.fetchval(f"SELECT count(*) FROM {table}") for table in tables}


@pytest.mark.parametrize("recording", ["football-basic", "football-correction", "football-three-matches"])
async def test_recording_ends_with_the_expected_log(
    recording: str, engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """Every line ingested in order: final events, retractions and score equal the expected outcome."""
    store = IngestStore(engine)
    for snapshot in snapshots(recording):
        await store.ingest(snapshot, "live")
    for fixture_id, outcome in expected(recording).items():
        rows = await db.fetch(
            "SELECT stream, provider_event_id, retracted_at IS NOT NULL AS retracted FROM match_event WHERE fixture_id = $1",
            int(fixture_id),
        )
        live = sorted([r["stream"], r["provider_event_id"]] for r in rows if not r["retracted"])
        gone = sorted([r["stream"], r["provider_event_id"]] for r in rows if r["retracted"])
        assert live == sorted(outcome["events"])
        assert gone == sorted(outcome["retracted"])
        board = await db.fetchrow("SELECT * FROM scoreboard WHERE fixture_id = $1", int(fixture_id))
        assert (board["home_score"], board["away_score"]) == (
            outcome["score"]["home"],
            outcome["score"]["away"],
        )
        assert board["state"] == MatchState.FINISHED.value
        last_seq = await db.fetchval(
            "SELECT max(seq) FROM timeline_item WHERE fixture_id = $1", int(fixture_id)
        )
        assert board["version"] == last_seq
        seqs = [
            r["seq"]
            for r in await db.fetch(
                "SELECT seq FROM timeline_item WHERE fixture_id = $1 ORDER BY seq", int(fixture_id)
            )
        ]
        assert seqs == list(range(1, len(seqs) + 1)), "the log has a gap"


async def test_ingesting_the_same_snapshot_again_changes_nothing(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """Idempotence: a retried or replayed snapshot adds no row and does not move the version."""
    store = IngestStore(engine)
    history = snapshots("football-basic")
    for snapshot in history:
        await store.ingest(snapshot, "live")
    before = await _table_counts(db)
    again = await store.ingest(history[-1], "replay")
    assert again.entries == 0
    assert again.version == again.previous_version
    assert await _table_counts(db) == before


async def test_a_vanished_goal_is_retracted_after_two_listings_and_the_score_follows(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """The VAR-cancelled goal: logged, then retracted (one odd listing is not enough); score goes back."""
    store = IngestStore(engine)
    history = snapshots("football-correction")
    goal = ("events", 510002)
    shown = next(i for i, s in enumerate(history) if any(item.key == goal for item in s.items()))
    gone = next(i for i, s in enumerate(history) if i > shown and all(item.key != goal for item in s.items()))
    for snapshot in history[: gone + 1]:
        await store.ingest(snapshot, "live")
    row = await db.fetchrow(
        "SELECT retracted_at, missing_count FROM match_event WHERE provider_event_id = 510002"
    )
    assert row["retracted_at"] is None and row["missing_count"] == 1
    summary = await store.ingest(history[gone + 1], "live")
    assert KeyMoment(kind="retraction") in summary.key_moments
    kinds = [
        r["kind"]
        for r in await db.fetch(
            "SELECT t.kind FROM timeline_item t JOIN match_event e ON e.id = t.match_event_id WHERE e.provider_event_id = 510002 ORDER BY t.seq"
        )
    ]
    assert kinds == ["event", "retraction"]


async def test_an_absent_relation_retracts_nothing(engine: AsyncEngine, db: asyncpg.Connection) -> None:
    """A response without `events` (include not honoured) is not an empty list: no miss is counted."""
    store = IngestStore(engine)
    history = snapshots("football-basic")
    for snapshot in history:
        await store.ingest(snapshot, "live")
    without_events = history[-1].model_copy(update={"events": None, "timeline": None})
    for _ in range(3):
        await store.ingest(without_events, "live")
    assert (
        await db.fetchval(
            "SELECT count(*) FROM match_event WHERE retracted_at IS NOT NULL OR missing_count > 0"
        )
        == 0
    )


async def test_outbox_and_notify_carry_each_change(engine: AsyncEngine, db: asyncpg.Connection) -> None:
    """Each batch that moves the version writes one outbox row and one NOTIFY with the new version."""
    heard: list[str] = []
    await db.add_listener("scoreline_changes", lambda *args: heard.append(args[3]))
    store = IngestStore(engine)
    versions = []
    for snapshot in snapshots("football-basic")[:40]:
        summary = await store.ingest(snapshot, "live")
        if summary.entries:
            versions.append(summary.version)
    await db.execute("SELECT 1")  # let pending notifications arrive
    outbox = [r["seq"] for r in await db.fetch("SELECT seq FROM domain_event ORDER BY id")]
    assert outbox == versions
    assert [json.loads(p)["version"] for p in heard] == versions
