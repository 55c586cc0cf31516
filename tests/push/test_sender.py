"""The sender against the simulator over HTTP/2 + TLS: provider-token refresh, 413 trimming, dead tokens."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import uvloop

from activities.push.apns import ApnsClient
from activities.push.dead_tokens import DeadTokens
from activities.push.delivery import Delivery, Sender
from activities.push.last_look import ClaimedHere, Standing
from activities.push.limiter import AdaptiveLimit
from activities.push.payloads import FixtureNames, build, variants
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from scoreline.settings import Settings
from tests.push.conftest import FAST_POLICY
from tests.push.seed import apns_token
from tests.push.simulator import PushSim

NAMES = FixtureNames("Riverside FC", "Harbour United", "Premier League")
GOAL = PushInput(
    fixture_id=81_000_001,
    event_key="v3",
    kind="update",
    priority=10,
    alert=True,
    moment=KeyMoment(kind="goal", side="home", minute=23),
    state=LiveState(home=1, away=0, state="live_first_half", minute=23, version=3),
    timestamp=1_790_000_000,
)
BODIES = variants(build(GOAL, NAMES, GOAL.fixture_id))


def sender(client: ApnsClient) -> Sender:
    return Sender(client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind="alert")


async def deliver(client: ApnsClient, token: str) -> Delivery:
    return await sender(client).deliver(
        token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False
    )


async def test_expired_provider_token_is_refreshed_once_and_sent_on_a_new_connection(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """Five pushes answered 403 ExpiredProviderToken: one new JWT, all five resent and delivered.

    The new token goes out on a new connection (changing it on the old one within 20 minutes would
    be 429 TooManyProviderTokenUpdates). A second "expired" within 20 minutes mints nothing new.
    """
    await sim.fault(status=403, count=5)
    tokens = [apns_token() for _ in range(5)]
    results = await asyncio.gather(*(deliver(apns_client, token) for token in tokens))

    assert [r.outcome for r in results] == ["sent"] * 5
    assert apns_client.tokens.minted == 2
    pushes = await sim.pushes()
    rejected = [p for p in pushes if p["status"] == 403]
    accepted = [p for p in pushes if p["status"] == 200]
    assert {p["reason"] for p in rejected} == {"ExpiredProviderToken"}
    assert (len(rejected), len(accepted)) == (5, 5)
    assert {p["connection_id"] for p in rejected}.isdisjoint({p["connection_id"] for p in accepted})
    assert "TooManyProviderTokenUpdates" not in {p["reason"] for p in pushes}

    await sim.fault(status=403, count=1)
    again = await deliver(apns_client, apns_token())
    assert again.outcome == "sent"
    assert [a.status for a in again.attempts] == [403, 200]
    assert apns_client.tokens.minted == 2, "refreshed at most once per 20 minutes"


async def test_payload_too_large_is_trimmed_and_resent(apns_client: ApnsClient, sim: PushSim) -> None:
    """413: the next, smaller variant goes (alert trimmed first); the content-state stays whole."""
    token = apns_token()
    await sim.fault(status=413, token=token)
    result = await deliver(apns_client, token)

    assert result.outcome == "sent"
    assert [a.status for a in result.attempts] == [413, 200]
    first, second = await sim.pushes(token=token)
    assert second["payload_bytes"] < first["payload_bytes"]
    assert second["payload"]["aps"]["content-state"] == first["payload"]["aps"]["content-state"]
    assert "body" not in second["payload"]["aps"]["alert"]


async def test_dead_token_is_reported_once_with_apples_timestamp(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """410 Unregistered ends the delivery at once as `dead`, carrying the timestamp for the check."""
    token = apns_token()
    await sim.unregister(token)
    result = await deliver(apns_client, token)

    assert (result.outcome, result.status, result.reason) == ("dead", 410, "Unregistered")
    assert result.timestamp_ms is not None
    assert len(await sim.pushes(token=token)) == 1


async def test_server_errors_are_retried_with_backoff(apns_client: ApnsClient, sim: PushSim) -> None:
    """503 twice, then 200: three attempts, each recorded with APNs' answer and latency."""
    token = apns_token()
    await sim.fault(status=503, token=token, count=2)
    result = await deliver(apns_client, token)

    assert result.outcome == "sent"
    assert [(a.status, a.reason) for a in result.attempts] == [
        (503, "ServiceUnavailable"),
        (503, "ServiceUnavailable"),
        (200, None),
    ]
    assert all(a.apns_id and a.latency_ms > 0 for a in result.attempts)


async def test_a_push_goes_out_from_a_process_on_uvloop(push_settings: Settings, sim: PushSim) -> None:
    """`scoreline worker` runs on uvloop (issue 15). uvloop's TLS transport implements asyncio's
    `Transport` without subclassing it, and the HTTP/2 connection asserted the subclass in
    `connection_made`: every Live Activity push from the real worker process failed its connection
    (found by the trace test on the dev stack; the push tests run their workers on asyncio)."""
    token = apns_token()

    def send_on_uvloop() -> int:
        async def send() -> int:
            client = ApnsClient.from_settings(push_settings)
            try:
                answer = await client.send(token, BODIES[0], priority=10, expiration=GOAL.timestamp + 900)
            finally:
                await client.aclose()
            return answer.status

        return uvloop.run(send())

    assert await asyncio.to_thread(send_on_uvloop) == 200
    assert [push["status"] for push in await sim.pushes(token=token)] == [200]


async def test_a_retry_is_not_sent_once_a_newer_push_has_claimed_the_activity(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 1): a routine update kept retrying through an APNs outage while
    the loud lane sent a goal; the old update then went out after the goal, out of timestamp order
    (the phone dropped it as stale). A retry now asks first whether its claim still stands."""
    superseded, current = apns_token(), apns_token()
    await sim.fault(status=500, token=superseded, count=1)
    await sim.fault(status=500, token=current, count=1)
    asked: list[str] = []

    async def no_longer() -> Standing:
        """Current for the first request; a newer push claims the activity during the outage."""
        asked.append(superseded)
        return Standing.GO if len(asked) == 1 else Standing.OVERTAKEN

    async def yes() -> Standing:
        return Standing.GO

    stale, sent = await asyncio.gather(
        sender(apns_client).deliver(
            superseded,
            BODIES,
            priority=10,
            expiration=GOAL.timestamp + 900,
            resend_if_unknown=True,
            look=no_longer,
        ),
        sender(apns_client).deliver(
            current,
            BODIES,
            priority=10,
            expiration=GOAL.timestamp + 900,
            resend_if_unknown=True,
            look=yes,
        ),
    )
    assert (stale.outcome, [a.status for a in stale.attempts]) == ("stale", [500])
    assert len(asked) == 2, "asked before the first request and before the retry"
    assert (sent.outcome, [a.status for a in sent.attempts]) == ("sent", [500, 200])
    assert [p["status"] for p in await sim.pushes(superseded)] == [500], "the superseded push was sent again"


async def test_an_alert_gives_its_claim_back_rather_than_hold_it_through_a_long_wait(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 10): 50 goal alerts were waiting out an APNs 500 burst, their
    claims held, when their worker was SIGKILLed; the retry found the claims of a dead attempt and
    marked them in doubt, so no phone got the goal. An alert (or a start) whose next try is further
    off than `longest_held_wait` is released instead, to be claimed again by the activity's retry;
    a state-only update, safe to send twice, waits and goes."""
    policy = replace(FAST_POLICY, error_backoff=0.4, max_backoff=0.4, longest_held_wait=0.1)
    alert_token, update_token = apns_token(), apns_token()
    for token in (alert_token, update_token):
        await sim.fault(status=500, reason="InternalServerError", token=token, count=1)
    alert, update = await asyncio.gather(
        Sender(apns_client, policy, AdaptiveLimit(100), asyncio.Event(), kind="alert").deliver(
            alert_token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False
        ),
        Sender(apns_client, policy, AdaptiveLimit(100), asyncio.Event(), kind="update").deliver(
            update_token, BODIES, priority=5, expiration=GOAL.timestamp + 900, resend_if_unknown=True
        ),
    )

    assert (alert.outcome, [a.status for a in alert.attempts]) == ("released", [500])
    assert (update.outcome, [a.status for a in update.attempts]) == ("sent", [500, 200])
    assert [p["status"] for p in await sim.pushes(token=alert_token)] == [500]


async def test_a_push_read_before_the_410_was_written_is_not_sent_to_the_dead_token(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 9): a wicket alert's fan-out read a phone's activity while a
    routine update's batch, in the same worker, was still retrying others; the update then got the
    410 for that token, and the alert sent to it 6 s later, since the 410 reaches Postgres only with
    its batch and the worker's memory stopped retries only. A delivery now asks the memory before its
    first request too, for any death Postgres had not written when the target was read."""
    token = apns_token()
    dead = DeadTokens()
    read_at = time.monotonic()  # the alert's fan-out reads the activity
    await sim.unregister(token)
    update = await Sender(
        apns_client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind="update", dead=dead
    ).deliver(token, BODIES, priority=5, expiration=GOAL.timestamp + 900, resend_if_unknown=True)
    alert = await Sender(
        apns_client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind="alert", dead=dead
    ).deliver(
        token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False, read_at=read_at
    )

    assert [p["status"] for p in await sim.pushes(token=token)] == [410]
    assert (update.outcome, update.status) == ("dead", 410)
    assert (alert.outcome, alert.status, alert.attempts) == ("dead", 410, ())
    # Once the 410 is written, a read after that which still finds the token (the app registered
    # it again) is Postgres' to judge; one from before is still told.
    dead.settled([token])
    assert dead.unknown_to(token, time.monotonic()) is None
    assert dead.unknown_to(token, read_at) is not None


async def test_a_retry_stops_once_another_push_found_the_token_dead(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 6): two matches' push-to-starts for one phone were retrying
    through a 429 burst when the app was deleted; one got the 410, the other sent to the dead token
    again 7 s later (the 410 reaches Postgres only with its batch). A retry now asks the worker's
    memory of dead tokens first."""
    token = apns_token()
    dead = DeadTokens()
    await sim.fault(status=429, reason="TooManyRequests", token=token, count=2)
    policy = replace(FAST_POLICY, throttle_backoff=2.0, max_backoff=2.0)  # its retry: 1 to 2 s later
    retrying = asyncio.create_task(
        Sender(apns_client, policy, AdaptiveLimit(100), asyncio.Event(), kind="start", dead=dead).deliver(
            token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False
        )
    )
    await asyncio.sleep(0.2)  # its first attempt has had its 429
    await sim.unregister(token)
    other = await Sender(
        apns_client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind="start", dead=dead
    ).deliver(token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False)
    stopped = await retrying

    assert [p["status"] for p in await sim.pushes(token=token)] == [429, 429, 410]
    assert (other.outcome, other.status) == ("dead", 410)
    assert (stopped.outcome, stopped.status, stopped.timestamp_ms) == ("dead", 410, other.timestamp_ms)
    assert [a.status for a in stopped.attempts] == [429]


async def test_a_push_whose_last_look_cannot_reach_postgres_is_released_unsent(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 14): a look that failed answered "still current", and during a
    Postgres restart 90 routine updates went out after newer alerts. Unknown now means not sent."""
    token = apns_token()

    async def unknown() -> Standing:
        return Standing.UNKNOWN

    delivery = await sender(apns_client).deliver(
        token, BODIES, priority=5, expiration=GOAL.timestamp + 900, resend_if_unknown=True, look=unknown
    )
    assert (delivery.outcome, delivery.attempts) == ("released", ())
    assert await sim.pushes(token) == []


async def test_a_newer_claim_made_in_this_worker_after_the_look_stops_the_request(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 14): a busy worker started 45 routine requests 155 ms after
    their look, behind a newer alert it had claimed meanwhile. The worker's own claims are asked
    last, with nothing between the answer and the request."""
    token = apns_token()
    claimed_here = ClaimedHere()

    async def look() -> Standing:
        claimed_here.claimed([7], GOAL.timestamp + 6)  # the alert claims the activity meanwhile
        return Standing.GO

    delivery = await sender(apns_client).deliver(
        token,
        BODIES,
        priority=5,
        expiration=GOAL.timestamp + 900,
        resend_if_unknown=True,
        look=look,
        claimed_since=lambda: claimed_here.newer_than(7, GOAL.timestamp),
    )
    assert (delivery.outcome, delivery.attempts) == ("stale", ())
    assert await sim.pushes(token) == []


async def test_a_newer_claim_made_while_the_request_waits_for_its_connection_stops_it(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-03 (seed 16): right after a Postgres restart, a routine update reached
    two phones 32 ms after the newer alert its worker had claimed meanwhile. Its worker's claims
    were asked right after the look, and the request then waited for its connection (and could
    wait for an HTTP/2 stream). They are now asked once the request has its stream, right before
    its first byte. This client has no connection yet: opening it takes round trips, and the
    newer claim comes on the loop's next turn after the look."""
    token = apns_token()
    claimed_here = ClaimedHere()

    async def look() -> Standing:
        loop = asyncio.get_running_loop()
        loop.call_soon(claimed_here.claimed, [7], GOAL.timestamp + 6)  # the alert claims it next
        return Standing.GO

    delivery = await sender(apns_client).deliver(
        token,
        BODIES,
        priority=5,
        expiration=GOAL.timestamp + 900,
        resend_if_unknown=True,
        look=look,
        claimed_since=lambda: claimed_here.newer_than(7, GOAL.timestamp),
    )
    assert (delivery.outcome, delivery.attempts) == ("stale", ())
    assert await sim.pushes(token) == []


async def test_a_410_that_comes_while_a_delivery_waits_for_its_slot_stops_its_request(
    apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-02 (seed 15): two pushes reached APNs for tokens more than 2 s after
    their 410. The worker's memory of dead tokens was asked before the in-flight slot was taken;
    a delivery that waited seconds for a slot of a throttled fan-out, while another lane's push got
    the token's 410, then sent to it. The memory is now asked again right before the request."""
    token = apns_token()
    dead = DeadTokens()
    limit = AdaptiveLimit(1, floor=1)
    async with limit.slot():  # the update's fan-out: every slot is taken
        waiting = asyncio.create_task(
            Sender(apns_client, FAST_POLICY, limit, asyncio.Event(), kind="update", dead=dead).deliver(
                token, BODIES, priority=5, expiration=GOAL.timestamp + 900, resend_if_unknown=True
            )
        )
        await asyncio.sleep(0.1)  # it has asked the memory and waits for the slot
        await sim.unregister(token)
        alert = await Sender(  # the alert's fan-out, with slots of its own, gets the 410
            apns_client, FAST_POLICY, AdaptiveLimit(100), asyncio.Event(), kind="alert", dead=dead
        ).deliver(token, BODIES, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False)
    update = await waiting

    assert [p["status"] for p in await sim.pushes(token=token)] == [410]
    assert (alert.outcome, alert.status) == ("dead", 410)
    assert (update.outcome, update.status, update.attempts) == ("dead", 410, ())
