"""A provider change carries its poll's trace id everywhere it goes: log entry, outbox, pushes, screens.

The provider simulator replays football-basic into the real MatchWorkflow on a real worker; one
phone follows the match through the device API, the APNs simulator receives its pushes, and an SSE
client watches `/v1/matches/{id}/stream` on the same real API. The match is stopped once the first
goal (0-0 → 1-0) has been pushed: that goal, and the kick-off before it, are what is traced.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from functools import partial
from typing import Any

import asyncpg
import pytest
import structlog
from structlog.testing import capture_logs
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.match.harness import fast_settings, start_match
from tests.push.phones import Pacer, insert_provider_fixture, phones, steps
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api, show
from tests.streams.clients import SseEvent, SseStream, sse
from tests.support.provider import recording, running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker

pytestmark = pytest.mark.timeout(120)

NAME, FIXTURE_ID = "football-basic", 81000001


def first_goal_time() -> float:
    """The replay time of the recording's first goal (the score goes 0-0 → 1-0)."""
    for line in recording(NAME).read_text().splitlines()[1:]:
        fixture: dict[str, Any] = json.loads(line)["fixture"]
        current = [s for s in fixture.get("scores") or [] if s["description"] == "CURRENT"]
        if sum(s["score"]["goals"] for s in current) == 1:
            return float(json.loads(line)["t"])
    raise AssertionError("no goal in the recording")


async def _goal_entry(db: asyncpg.Connection) -> asyncpg.Record | None:
    return await db.fetchrow(
        """SELECT seq, trace_id FROM timeline_item
           WHERE fixture_id = $1 AND kind = 'event' AND body->>'type' = 'goal' ORDER BY seq LIMIT 1""",
        FIXTURE_ID,
    )


async def _announcing(db: asyncpg.Connection, seq: int) -> asyncpg.Record:
    """The outbox row of the ingest that logged entry `seq` (its range `from_seq..seq` holds it)."""
    row = await db.fetchrow(
        """SELECT seq, (payload->>'from_seq')::bigint AS from_seq, trace_id FROM domain_event
           WHERE fixture_id = $1 AND kind = 'match.changed'
             AND (payload->>'from_seq')::bigint <= $2 AND seq >= $2""",
        FIXTURE_ID,
        seq,
    )
    assert row is not None, f"no outbox row announces entry {seq}"
    return row


async def _sse_entries(stream: SseStream, upto: int) -> dict[int, dict[str, Any]]:
    """Every entry the stream listed, by seq, until a message reached version `upto`."""
    events: list[SseEvent] = await stream.until_version(upto)
    return {entry["seq"]: entry for event in events for entry in event.body["entries"]}


async def test_a_provider_goal_carries_one_fresh_trace_id_from_the_log_to_every_push_and_screen(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """The first goal's log entry, the outbox row announcing its version, every APNs attempt of its
    `v{version}` push, its SSE entry and the poll's own log line all carry one trace id, which the
    kick-off's change does not share. On the main of 2026-12-01 this failed: a provider change was
    stored with `trace_id = NULL` (no trace was bound for a watch poll)."""
    goal_at = first_goal_time()
    await insert_provider_fixture(db, FIXTURE_ID)
    with capture_logs([structlog.contextvars.merge_contextvars]) as logs:
        async with running_provider([NAME]) as provider:
            config = fast_settings(push_settings, provider.url)
            async with (
                device_api(config) as api,
                sse(str(api.base_url), f"/v1/matches/{FIXTURE_ID}/stream") as stream,
            ):
                [phone] = await phones(api, sim, 1, prefix="trace")
                await phone.follow(FIXTURE_ID)
                phone.run_app(FIXTURE_ID)
                pacer = Pacer(phone)
                try:
                    async with running_worker(temporal_client, config):
                        await _end_run(temporal_client)
                        await start_match(temporal_client, config, FIXTURE_ID)
                        started = False
                        for step in steps(NAME):
                            if step.t > goal_at:
                                break
                            if not step.material:
                                await provider.step_through([step.t])
                                continue
                            await pacer.change(partial(show, provider, step))
                            if not started:
                                await asyncio.wait_for(phone.activity_running(), 30)
                                started = True
                        goal = await eventually(lambda: _goal_entry(db), within=10)
                        announced = await _announcing(db, goal["seq"])
                        version = announced["seq"]
                        attempts = await eventually(
                            partial(_attempts, db, f"v{version}"), within=20, every=0.05
                        )
                        kickoff_attempts = await _attempts(db, "kickoff")
                        seen = await _sse_entries(stream, version)
                finally:
                    phone.cancel()
                    await _end_run(temporal_client)

    trace_id = goal["trace_id"]
    assert trace_id is not None, "the provider's goal was logged without a trace id"
    assert announced["trace_id"] == trace_id, "the outbox row does not carry the goal's trace"
    assert [row["trace_id"] for row in attempts] == [trace_id] * len(attempts), (
        "an APNs attempt of the goal's push does not carry its trace"
    )
    assert goal["seq"] in seen, f"the SSE stream never listed entry {goal['seq']}"
    assert seen[goal["seq"]].get("trace_id") == trace_id, "the SSE entry does not carry the goal's trace"

    # Every entry of the goal's ingest shares the trace; every other poll's change has its own.
    per_version = await db.fetch(
        "SELECT seq, trace_id FROM domain_event WHERE fixture_id = $1 AND kind = 'match.changed' ORDER BY seq",
        FIXTURE_ID,
    )
    traces = [row["trace_id"] for row in per_version]
    assert None not in traces, f"a provider change was announced without a trace: {traces}"
    assert len(set(traces)) == len(traces), f"two polls' changes share a trace id: {traces}"
    entries = await db.fetch(
        "SELECT trace_id FROM timeline_item WHERE fixture_id = $1 AND seq BETWEEN $2 AND $3",
        FIXTURE_ID,
        announced["from_seq"],
        version,
    )
    assert {row["trace_id"] for row in entries} == {trace_id}

    kickoff = await _kickoff_trace(db)
    assert kickoff is not None and kickoff != trace_id, "kick-off and the goal share a trace id"
    assert kickoff_attempts, "no APNs attempt for the push-to-start"
    assert {row["trace_id"] for row in kickoff_attempts} == {kickoff}, (
        "the push-to-start does not carry the kick-off poll's trace"
    )
    assert [
        entry
        for entry in logs
        if entry.get("event") == "material change" and entry.get("trace_id") == trace_id
    ], "no worker log line carries the goal's trace id"


async def _end_run(client: Client) -> None:
    """Stop `match-{FIXTURE_ID}` (a later test, or an earlier one's leftover, starts its own)."""
    handle = client.get_workflow_handle(match_workflow_id(FIXTURE_ID))
    try:
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate("trace test over")
    except RPCError:
        pass


async def _attempts(db: asyncpg.Connection, event_key: str) -> Sequence[asyncpg.Record]:
    return list(
        await db.fetch(
            "SELECT trace_id FROM push_attempt WHERE fixture_id = $1 AND event_key = $2 ORDER BY id",
            FIXTURE_ID,
            event_key,
        )
    )


async def _kickoff_trace(db: asyncpg.Connection) -> str | None:
    """The trace of the change that moved the match from not started to its first half."""
    trace: str | None = await db.fetchval(
        """SELECT trace_id FROM domain_event
           WHERE fixture_id = $1 AND kind = 'match.changed' AND payload->>'state' = 'live_first_half'
           ORDER BY seq LIMIT 1""",
        FIXTURE_ID,
    )
    return trace
