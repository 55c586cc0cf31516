"""What each planned fault does to the running stack, and the record of what it hit.

A fault runs to its end (a paused worker is resumed, a cut proxy restored, a stopped service
started) even when the soak is being stopped, so the checks always meet a whole stack. Simulator
bursts and outages are asked of the simulators' own fault APIs with their length, so they end on
time even if the soak does not; a provider's `duration` is given in its replay seconds (the
simulator's clock runs `speed` times faster than ours). The hot token is one running activity's
update token, chosen when the fault starts (`HotToken`, from the phones): APNs answers it 429 for
the first `HOT_429_SHARE` of the fault and 500 for the rest.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from devkit.soak.schedule import FaultKind, PlannedFault
from devkit.soak.stack import SoakStack

HotToken = Callable[[], tuple[str, str] | None]
"""A running activity's update token and words naming it, or None while there is none."""

APNS_410_COUNT = 25
"""A 410 burst answers this many pushes `Unregistered`: each of those tokens is dead for good to
Scoreline, so a long burst would only shrink the audience the rest of the soak checks."""
PROVIDER_EXTRAS: Mapping[str, Mapping[str, Any]] = {
    "status": {"status": 503},
    "drop_include": {"include": "events"},
    "latency": {"seconds": 2.0},
}
APNS_BODIES: Mapping[str, Mapping[str, Any]] = {
    "429": {"action": "respond", "status": 429},
    "410": {"action": "respond", "status": 410, "count": APNS_410_COUNT},
    "500": {"action": "respond", "status": 500},
    "goaway": {"action": "goaway"},
    "503": {"action": "respond", "status": 503},
    "disconnect": {"action": "disconnect"},
}
HOT_429_SHARE = 0.5
WORKER_INTERRUPTIONS = frozenset({FaultKind.KILL_WORKER, FaultKind.PAUSE_WORKER, FaultKind.LONG_PAUSE_WORKER})
"""Faults that may cut a worker's request off before its answer was written."""
SENDING_OUTAGES = frozenset(
    {FaultKind.APNS_BURST, FaultKind.APNS_OUTAGE, FaultKind.RESTART_POSTGRES, FaultKind.STOP_POSTGRES}
)
"""Faults during which no push can go to any phone: APNs refusing, or Postgres down."""


@dataclass(frozen=True)
class InjectedFault:
    """A fault as it happened: seconds after the load started, and what it hit (a pid, a fault id)."""

    planned: PlannedFault
    started: float
    ended: float
    hit: str
    error: str | None = None
    began_at: float = 0.0
    ended_at: float = 0.0
    """`started` and `ended` as epoch seconds, to hold against the other records' clocks."""

    @property
    def survived(self) -> bool:
        """It was injected (a fault that could not be injected proves nothing)."""
        return self.error is None


class FaultInjector:
    """Runs planned faults against `stack` and the simulators, recording each."""

    def __init__(
        self,
        stack: SoakStack,
        http: httpx.AsyncClient,
        provider_speed: float,
        zero: float,
        progress: Callable[[str], None],
        hot_token: HotToken = lambda: None,
        injected: list[InjectedFault] | None = None,
    ) -> None:
        self.stack = stack
        self.hot_token = hot_token
        self.progress = progress
        self.http = http
        self.provider_speed = provider_speed
        self.zero = zero
        """`time.monotonic()` when the load started: `PlannedFault.at` counts from it."""
        self.injected: list[InjectedFault] = [] if injected is None else injected
        """Each fault once it has ended (given: shared with a part that reads it when checking)."""

    def _now(self) -> float:
        return round(time.monotonic() - self.zero, 1)

    async def run(self, fault: PlannedFault) -> InjectedFault:
        started, began_at = self._now(), time.time()
        self.progress(f"{started:7.1f} s  {fault.kind.value} {fault.target}")
        try:
            hit = await self._inject(fault)
            error = None
        except (httpx.HTTPError, OSError, RuntimeError) as failure:
            hit, error = "nothing", f"{type(failure).__name__}: {failure}"
        record = InjectedFault(fault, started, self._now(), hit, error, began_at, time.time())
        self.injected.append(record)
        self.progress(f"{record.ended:7.1f} s  {fault.kind.value} over: {error or hit}")
        return record

    async def _inject(self, fault: PlannedFault) -> str:
        target, _, variant = fault.target.partition(":")
        match fault.kind:
            case FaultKind.KILL_WORKER | FaultKind.KILL_API:
                pid = self.stack.kill(target)
                return f"{target} pid {pid}" if pid is not None else f"{target} (not running)"
            case FaultKind.PAUSE_WORKER | FaultKind.LONG_PAUSE_WORKER:
                pid = self.stack.child(target).pid
                await self.stack.pause(target, fault.duration)
                return f"{target} pid {pid} stopped {fault.duration:g} s"
            case FaultKind.RESTART_POSTGRES | FaultKind.STOP_POSTGRES | FaultKind.STOP_REDIS:
                await self.stack.restart_service(target, fault.duration)
                return f"{target} down {fault.duration:g} s"
            case FaultKind.FLUSH_REDIS:
                await self.stack.flush_redis()
                return "redis FLUSHALL"
            case FaultKind.CUT_WORKER_DATABASE:
                await self.stack.cut_database(fault.duration)
                return f"{target} to postgres cut {fault.duration:g} s"
            case FaultKind.PROVIDER_BURST:
                return await self._provider_burst(variant, fault.duration)
            case FaultKind.APNS_BURST | FaultKind.APNS_OUTAGE:
                return await self._apns_burst(variant, fault.duration)
            case FaultKind.HOT_TOKEN:
                return await self._hot_token(fault.duration)

    async def _provider_burst(self, kind: str, seconds: float) -> str:
        body = {"kind": kind, "duration": seconds * self.provider_speed, **PROVIDER_EXTRAS.get(kind, {})}
        response = await self.http.post(f"{self.stack.addresses['provider']}/_sim/faults", json=body)
        response.raise_for_status()
        await asyncio.sleep(seconds)
        return f"provider {kind} for {seconds:g} s (fault {response.json().get('id')})"

    async def _apns_burst(self, kind: str, seconds: float) -> str:
        body = {"duration_s": seconds, **APNS_BODIES[kind]}
        response = await self.http.post(f"{self.stack.addresses['apns-admin']}/_sim/faults", json=body)
        response.raise_for_status()
        await asyncio.sleep(seconds)
        return f"apns {kind} for {seconds:g} s (fault {response.json().get('id')})"

    async def _hot_token(self, seconds: float) -> str:
        """One running activity's token answers 429, then 500, until the fault's planned end
        (waiting for the first activity to be reported if none is yet)."""
        until = time.monotonic() + seconds
        chosen = self.hot_token()
        while chosen is None and time.monotonic() < until:
            await asyncio.sleep(1.0)
            chosen = self.hot_token()
        if chosen is None:
            raise RuntimeError("no activity was reported to fail")
        token, words = chosen
        left = until - time.monotonic()
        throttled = left * HOT_429_SHARE
        for status, duration in ((429, throttled), (500, left)):
            body = {"action": "respond", "status": status, "token": token, "duration_s": duration}
            response = await self.http.post(f"{self.stack.addresses['apns-admin']}/_sim/faults", json=body)
            response.raise_for_status()
        await asyncio.sleep(max(0.0, until - time.monotonic()))
        return (
            f"token {token[:12]}… ({words}) 429 for {throttled:.0f} s, then 500 for {left - throttled:.0f} s"
        )
