"""A token's 410 on one worker stops the request another worker was about to make to it.

The soak of 2026-12-02 (seed 15) sent two pushes to tokens seconds after APNs had answered them
410. A 410 reaches Postgres only with its batch, and each worker remembered only the deaths it got
itself; a push on the other worker that had read its target before then went to the dead token.
Each worker now tells the others through Redis (`death_relay`), with real Redis and APNs here.
"""

from __future__ import annotations

import asyncio
import time

from activities.push.apns import ApnsClient
from activities.push.dead_tokens import HEARD_WRITTEN_AFTER_S, DeadTokens, TokenDeath
from activities.push.death_relay import death_relay
from activities.push.delivery import Sender
from activities.push.limiter import AdaptiveLimit
from tests.push.conftest import FAST_POLICY
from tests.push.seed import apns_token
from tests.push.simulator import PushSim
from tests.push.test_sender import BODIES, GOAL


def sender(client: ApnsClient, dead: DeadTokens, kind: str) -> Sender:
    return Sender(client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind=kind, dead=dead)


async def test_a_410_on_one_worker_stops_the_other_workers_push_to_that_token(
    apns_client: ApnsClient, sim: PushSim, redis_url: str, database_url: str
) -> None:
    token = apns_token()
    here, there = DeadTokens(), DeadTokens()
    relays = [death_relay(redis_url, database_url, dead) for dead in (here, there)]
    for relay in relays:
        relay.start()
    try:
        async with asyncio.timeout(10):
            for relay in relays:
                await relay.subscribed.wait()
        read_at = time.monotonic()  # the other worker's alert fan-out reads the activity
        await sim.unregister(token)
        update = await sender(apns_client, here, "update").deliver(
            token, BODIES, priority=5, expiration=GOAL.timestamp + 900, resend_if_unknown=True
        )
        async with asyncio.timeout(5):  # heard in milliseconds, not with the batch's write
            while there.unknown_to(token, read_at) is None:
                await asyncio.sleep(0.005)
        alert = await sender(apns_client, there, "alert").deliver(
            token,
            BODIES,
            priority=10,
            expiration=GOAL.timestamp + 900,
            resend_if_unknown=False,
            read_at=read_at,
        )
    finally:
        for relay in relays:
            await relay.stop()

    assert [p["status"] for p in await sim.pushes(token=token)] == [410]
    assert (update.outcome, update.status) == ("dead", 410)
    assert (alert.outcome, alert.status, alert.attempts) == ("dead", 410, ())
    assert alert.timestamp_ms == update.timestamp_ms


async def test_a_death_is_recorded_at_once_while_redis_is_out_of_reach() -> None:
    """The relay is a second road: with Redis gone, recording a death neither waits nor raises."""
    dead = DeadTokens()
    relay = death_relay("redis://127.0.0.1:9/0", "postgresql://postgres@127.0.0.1:5432/scoreline", dead)
    relay.start()
    try:
        started = time.monotonic()
        dead.record("ab" * 32, 410, "Unregistered", 1_790_000_000_000)
        assert time.monotonic() - started < 0.05
        assert dead.unknown_to("ab" * 32, started) is not None
    finally:
        await relay.stop()


def test_a_heard_death_is_left_to_postgres_for_targets_read_well_after_it() -> None:
    """Its worker writes it with its batch, or was killed and never will: a target read long after
    the death was heard is Postgres' to judge (the app may have registered the token again)."""
    dead = DeadTokens()
    dead.heard(TokenDeath(token="cd" * 32, status=410, reason="Unregistered", timestamp_ms=1))
    now = time.monotonic()
    assert dead.unknown_to("cd" * 32, now) is not None
    assert dead.unknown_to("cd" * 32, now + HEARD_WRITTEN_AFTER_S + 1) is None
