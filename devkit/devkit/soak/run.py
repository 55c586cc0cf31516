"""One soak, start to verdict.

1. Start the stack (`SoakStack`); the provider simulator counts down to the recordings' `t = 0`
   while the desks create their matches and the phones register and follow.
2. The load window: the recordings play at the speed that ends them by `PLAY_SHARE` of it, the
   desks score, phones, screens and partners follow, and the seeded plan's faults hit the stack.
3. Settling: once the window is over and `HORIZON_GRACE_S` have passed since the last fault
   ended (what a user allows the system to put things right in), wait until every match is over
   and nothing has been written for `QUIET_SECONDS` (bounded by `SETTLE_TIMEOUT`): what is still
   owed is delivered before anything is judged.
4. The checks, from Postgres and the simulators' own records; the verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

from devkit.simulators.provider.recording import load_recording
from devkit.soak.desks import DeskPart
from devkit.soak.device_check import HORIZON_GRACE_S
from devkit.soak.devices import DevicePart
from devkit.soak.faults import FaultInjector, InjectedFault
from devkit.soak.model import CheckResult, LoadPart, SoakFixtures, SoakTargets
from devkit.soak.partners import PartnerPart
from devkit.soak.provider_check import ReplayClock, check_provider, provider_fixture_ids
from devkit.soak.report import SoakVerdict
from devkit.soak.schedule import PlannedFault, PlanShape, plan
from devkit.soak.screens import ScreenPart
from devkit.soak.stack import SoakStack, soak_options
from devkit.soak.webhook_receivers import WebhookConfig, WebhookPart
from domain.states import OVER_STATES
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings

PLAY_SHARE = 0.6
"""The recordings end by this share of the window; the rest is full-time settles, late
corrections and the stack's recovery from the plan's last faults."""
DESK_MINUTES = 110
"""A desk match's script runs this many desk-clock minutes (half time included)."""
PREPARE_SECONDS = 45.0
PREPARE_PER_DEVICE = 0.01
"""The simulator's countdown to `t = 0`: the desks' matches and the phones' follows happen in it."""
QUIET_SECONDS = 20.0
SETTLE_TIMEOUT = 240.0
UNLIMITED_PROVIDER = 10_000_000
"""The simulator's and the client's hourly budget for the soak: its polls run at replay speed,
and the budget's own behaviour has its test (`tests/match/test_budget_day.py`); the soak's 429s
are the `rate_limit` bursts of its plan."""
UNLIMITED_PER_CLIENT = 10_000_000
"""Registrations a minute and live connections per client address: every simulated phone and
screen comes from 127.0.0.1, so the limits that keep one client from holding a public API would
throttle the soak's own load (they have their tests in tests/push and tests/streams)."""
WEBHOOKS = WebhookConfig(timeout=3.0, backoff_cap=20.0)
"""The feeds process's webhook delivery for the soak (`WEBHOOK_TIMEOUT`, `WEBHOOK_BACKOFF_CAP`).
This is the stack's configuration for the soak's short match days, not a patience of ours mirrored
here: the defaults (10 s, 10 min) suit a real day, where a receiver back from an hour's outage is
caught up within ten minutes; in a soak whose matches last minutes, a 10-minute cap would leave
the down receiver's backlog parked past the end of the run. The webhooks part derives the slow
receiver's delays and its catch-up wait from these same values (`WebhookPart.catch_up_stall`)."""


@dataclass(frozen=True)
class SoakOptions:
    seed: int
    minutes: float
    recordings: tuple[Path, ...]
    data_dir: Path
    desks: int = 20
    devices: int = 10_000
    sse_clients: int = 10
    ws_clients: int = 10
    partners: int = 3


def replay_speed(recordings: Sequence[Path], window: float) -> float:
    """Replay seconds per real second that end the longest recording by `PLAY_SHARE` of `window`."""
    end = max(line.t for path in recordings for line in load_recording(path).fixtures)
    return max(1.0, round(end / (window * PLAY_SHARE), 1))


def post_match_rechecks(speed: float, environment: Settings, window: float) -> tuple[float, ...]:
    """Cricket's post-match rechecks (seconds, each after the one before) on the replay's clock,
    cut to what is left of the window once the recordings have ended.

    The provider edits balls hours after `Finished` (the edits recording: two replay hours). At
    real intervals the soak would end before the recheck that sees the edit; on the replay's
    clock alone, the one after it (6 h, the fourth, 7.2 h after the end in all) still fell after
    the soak had stopped in seed 5. So the waits that fit into `window · (1 - PLAY_SHARE)` are
    kept and one more fills the rest: any match over by 20 % of the window is fetched again after
    the recordings' last line, before the window ends."""
    budget = window * (1 - PLAY_SHARE)
    waits: list[float] = []
    for recheck in environment.cricket_post_match_rechecks:
        wait = recheck.total_seconds() / speed
        if sum(waits) + wait > budget:
            break
        waits.append(wait)
    if environment.cricket_post_match_rechecks and sum(waits) < budget:
        waits.append(budget - sum(waits))
    return tuple(waits)


def tuning(speed: float, environment: Settings, window: float) -> tuple[tuple[str, str], ...]:
    """The workers' intervals for a replay `speed` times faster than real time: the demo's polling,
    cricket's post-match rechecks (`post_match_rechecks`), and webhook delivery (`WEBHOOKS`)."""
    rechecks = ",".join(
        f"{max(1, round(wait * 1000))}ms" for wait in post_match_rechecks(speed, environment, window)
    )
    return (
        ("POLL_INTERVAL_LIVE", "500ms"),
        ("POLL_INTERVAL_IDLE", "1s"),
        ("RECONCILE_INTERVAL", "10s"),
        ("FULL_TIME_SETTLE", "10s"),
        ("CRICKET_STUMPS_INTERVAL", "2s"),
        ("CRICKET_POST_MATCH_RECHECKS", rechecks or "off"),
        ("PROVIDER_HOURLY_BUDGET", str(UNLIMITED_PROVIDER)),
        ("DEVICE_REGISTRATION_RATE_LIMIT", str(UNLIMITED_PER_CLIENT)),
        ("LIVE_MAX_CONNECTIONS_PER_CLIENT", str(UNLIMITED_PER_CLIENT)),
        ("WEBHOOK_TIMEOUT", f"{round(WEBHOOKS.timeout * 1000)}ms"),
        ("WEBHOOK_BACKOFF_CAP", f"{round(WEBHOOKS.backoff_cap * 1000)}ms"),
    )


Progress = Callable[[str], None]
"""Told one line per phase and per fault, as they happen (the CLI prints them)."""


async def run_soak(
    options: SoakOptions, environment: Settings, progress: Progress = lambda _: None
) -> SoakVerdict:
    window = options.minutes * 60
    speed = replay_speed(options.recordings, window)
    prepare = PREPARE_SECONDS + PREPARE_PER_DEVICE * options.devices
    stack = SoakStack(
        soak_options(
            options.data_dir, options.recordings, speed, prepare, tuning(speed, environment, window)
        ),
        environment,
    )
    began = time.monotonic()
    try:
        await stack.start()
        progress(f"stack ready ({len(stack.children)} processes; replay at {speed:g}x)")
        return await _soak(stack, options, window, speed, began, progress)
    finally:
        await stack.stop()


async def _soak(
    stack: SoakStack, options: SoakOptions, window: float, speed: float, began: float, progress: Progress
) -> SoakVerdict:
    targets = SoakTargets(
        api_urls=stack.api_urls,
        provider_url=stack.addresses["provider"],
        apns_admin_url=stack.addresses["apns-admin"],
        database_url=stack.addresses["postgres"],
        apns_journal=stack.apns_journal,
    )
    rng = random.Random(options.seed)
    async with httpx.AsyncClient(timeout=10) as http:
        await _unlimited_provider(http, targets.provider_url)
        desks = DeskPart(targets, random.Random(rng.random()), options.desks, window * 0.5 / DESK_MINUTES)
        fixtures = SoakFixtures(provider_fixture_ids(options.recordings), await desks.create_matches())
        injected: list[InjectedFault] = []
        devices = DevicePart(targets, fixtures, random.Random(rng.random()), options.devices, injected)
        parts: list[LoadPart] = [
            desks,
            devices,
            ScreenPart(
                targets, fixtures, random.Random(rng.random()), options.sse_clients, options.ws_clients
            ),
            PartnerPart(targets, fixtures, random.Random(rng.random()), options.partners),
            WebhookPart(targets, fixtures, random.Random(rng.random()), window, WEBHOOKS),
        ]
        progress(f"load starts: {len(fixtures.provider)} provider and {len(fixtures.desk)} desk matches")
        zero = time.monotonic()
        injector = FaultInjector(stack, http, speed, zero, progress, devices.hot_token, injected)
        stop = asyncio.Event()
        async with asyncio.TaskGroup() as group:
            supervisor = group.create_task(stack.supervise())
            loads = [group.create_task(part.run(stop)) for part in parts]
            await _play_faults(injector, plan(options.seed, window, PlanShape()), zero)
            await _until(max(zero + window, time.monotonic() + HORIZON_GRACE_S))
            progress("load window over: settling")
            await _settle(targets.database_url, fixtures)
            progress("settled: checking")
            stop.set()
            await asyncio.gather(*loads)
            supervisor.cancel()
        clock = await _replay_clock(http, targets.provider_url)
        checks: list[CheckResult] = [await check_provider(targets.database_url, options.recordings, clock)]
        checks += [await part.check() for part in parts]
    return SoakVerdict(
        seed=options.seed,
        minutes=options.minutes,
        checks=checks,
        faults=injector.injected,
        duration_seconds=time.monotonic() - began,
        restarts=dict(stack.restarts),
    )


async def _unlimited_provider(http: httpx.AsyncClient, provider_url: str) -> None:
    for sport in ("football", "cricket"):
        response = await http.post(
            f"{provider_url}/_sim/rate-limit",
            json={"limit": UNLIMITED_PROVIDER, "window_seconds": 3600, "sport": sport},
        )
        response.raise_for_status()


async def _replay_clock(http: httpx.AsyncClient, provider_url: str) -> ReplayClock:
    response = await http.get(f"{provider_url}/_sim/clock")
    response.raise_for_status()
    status = response.json()
    return ReplayClock(zero=float(status["clock_zero"]), speed=float(status["speed"]))


async def _until(deadline: float) -> None:
    await asyncio.sleep(max(0.0, deadline - time.monotonic()))


async def _play_faults(injector: FaultInjector, faults: Sequence[PlannedFault], zero: float) -> None:
    """Each fault at its moment, overlapping as planned; returns once the last one has ended."""
    async with asyncio.TaskGroup() as group:
        for fault in faults:
            await _until(zero + fault.at)
            group.create_task(injector.run(fault))


async def _settle(database_url: str, fixtures: SoakFixtures) -> None:
    """Wait until every match is over and nothing was written for `QUIET_SECONDS`, at most
    `SETTLE_TIMEOUT`: the checks then judge what was delivered, not what was still in flight."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last_mark: tuple[object, ...] | None = None
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        mark = await _write_mark(database_url, fixtures)
        if mark is None or mark != last_mark:
            last_mark, quiet_since = mark, time.monotonic()
        elif mark[0] and time.monotonic() - quiet_since >= QUIET_SECONDS:
            return
        await asyncio.sleep(1.0)


async def _write_mark(database_url: str, fixtures: SoakFixtures) -> tuple[object, ...] | None:
    """(every match over, and the newest row of each table that grows while anything is owed)."""
    try:
        connection = await asyncpg.connect(asyncpg_dsn(database_url), timeout=5)
    except (OSError, asyncpg.PostgresError):
        return None
    try:
        states = await connection.fetch(
            "SELECT state FROM scoreboard WHERE fixture_id = ANY($1::bigint[])", list(fixtures.all)
        )
        over = len(states) == len(fixtures.all) and all(row["state"] in OVER_STATES for row in states)
        marks = [
            await connection.fetchval(f"SELECT max({column}) FROM {table}")
            for table, column in (
                ("timeline_item", "created_at"),
                ("domain_event", "id"),
                ("push_attempt", "id"),
                ("published_document", "created_at"),
                ("live_activity", "updated_at"),
                ("la_push", "created_at"),
            )
        ]
        return (over, *marks)
    except (OSError, asyncpg.PostgresError):
        return None
    finally:
        with contextlib.suppress(OSError, asyncpg.PostgresError):
            await connection.close()
