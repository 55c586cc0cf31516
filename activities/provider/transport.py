"""HTTP to SportMonks: one GET in, one checked `Envelope` (or one `ProviderError`) out.

Every request passes, in order: the rate-limit gate (no request during a 429 window), the breaker
(fast failure while the upstream is known to be down), the bulkhead (at most `max_concurrency`
requests in flight), then the gate and breaker again (either may have closed while the call queued),
and a per-request deadline. Transient failures — connect/read errors, timeouts, resets, truncated or
non-JSON bodies, 408 and 5xx — are retried with full-jitter exponential backoff (tenacity) and each
one counts against the breaker; everything else is final. Only `ProviderError`s leave this module.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from activities.provider.breaker import BreakerOpen, BreakerStats, CircuitBreaker
from activities.provider.budget import Priority, RequestBudget
from activities.provider.config import ProviderClientConfig
from activities.provider.envelope import Envelope, parse_envelope
from activities.provider.errors import (
    ProviderAuthError,
    ProviderBudgetSpent,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestError,
    ProviderUnavailable,
)
from activities.provider.ratelimit import (
    RateLimitGate,
    requested_entity,
    resets_in_seconds,
    retry_after_seconds,
)
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.settings import Settings
from scoreline.tracing import current_trace_id, traceparent_for

log = get_logger(__name__)

# A 408 means the provider's front gave up waiting for us: as transient as a 5xx.
RETRYABLE_STATUSES = frozenset({408})
# Idle keep-alive connections live shorter than typical load-balancer idle timeouts (60 s), so
# the client drops them before the server does and rarely meets a half-closed socket.
KEEPALIVE_EXPIRY = 30.0
# Bodies larger than this are decoded off the event loop.
INLINE_DECODE_MAX = 512 * 1024
OUTCOME_LABELS = {
    "ok": "ok",
    "timeout": "timeout",
    "connection": "connection",
    "transport": "connection",
    "malformed": "malformed",
    "ProviderPayloadInvalid": "malformed",
    "ProviderRateLimited": "rate_limited",
}
"""A sent request's outcome (as logged) to its metric label; any other answer is `http_error`."""


class _Transient(Exception):
    """Internal: one attempt failed in a way another attempt may not. Retried, then reported."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind, self.detail = kind, detail

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass
class _Call:
    endpoint: str
    path: str
    params: Mapping[str, str]
    priority: Priority = "deferrable"
    sent: int = 0
    status: int | None = None  # of the latest attempt's answer, for its log line


@dataclass(frozen=True)
class TransportStats:
    """Counters for metrics and health checks.

    Attributes:
        sent: Requests sent upstream.
        failed: Of those, transient failures.
        in_flight: Requests being sent now (bounded by the bulkhead).
        rate_limited_for: Seconds until the 429 window is over (0 when open).
        refused_rate_limited: Calls refused locally because of a 429 window.
        breaker: The breaker's state and counters.
    """

    sent: int
    failed: int
    in_flight: int
    rate_limited_for: float
    refused_rate_limited: int
    breaker: BreakerStats


class SportMonksTransport:
    """GETs against a SportMonks API (Football v3, Cricket v2) with timeouts, retries, breaker and bulkhead.

    One per worker process: it owns the keep-alive connection pool, the breaker and the 429 window,
    all of which only work if every caller in the process shares them.

    Args:
        http: The pooled client; its `base_url` is the provider host (e.g. `https://api.sportmonks.com`).
        config: Token and behaviour.
        owns_http: Close `http` in `aclose()` (true when built by `from_settings`).
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        config: ProviderClientConfig,
        *,
        owns_http: bool = False,
        budget: RequestBudget | None = None,
    ) -> None:
        if config.max_concurrency < 1 or config.retry.attempts < 1:
            raise ValueError("max_concurrency and retry.attempts must be at least 1")
        self._http = http
        self._config = config
        self._owns_http = owns_http
        self._budget = budget
        self._breaker = CircuitBreaker(config.upstream, config.breaker, config.clock)
        self._gate = RateLimitGate(config.clock, config.wall)
        self._bulkhead = asyncio.Semaphore(config.max_concurrency)
        self._sent = 0
        self._failed = 0
        self._in_flight = 0

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        config: ProviderClientConfig | None = None,
        *,
        base_url: str | None = None,
        budget: RequestBudget | None = None,
    ) -> SportMonksTransport:
        """Build the process's transport and its connection pool from the settings (football's
        `PROVIDER_URL` unless `base_url` names another API), spending `budget` if given."""
        chosen = config or ProviderClientConfig.from_settings(settings)
        http = httpx.AsyncClient(
            base_url=base_url or settings.provider_url,
            timeout=httpx.Timeout(chosen.timeout),
            limits=httpx.Limits(
                max_connections=chosen.max_concurrency,
                max_keepalive_connections=chosen.max_concurrency,
                keepalive_expiry=KEEPALIVE_EXPIRY,
            ),
            headers={"Accept": "application/json", "User-Agent": "scoreline"},
        )
        return cls(http, chosen, owns_http=True, budget=budget)

    @property
    def config(self) -> ProviderClientConfig:
        """The behaviour it was built with."""
        return self._config

    @property
    def breaker(self) -> CircuitBreaker:
        """The upstream's circuit breaker (read its `state` / `stats`)."""
        return self._breaker

    @property
    def stats(self) -> TransportStats:
        """A snapshot of the counters."""
        return TransportStats(
            sent=self._sent,
            failed=self._failed,
            in_flight=self._in_flight,
            rate_limited_for=self._gate.retry_in,
            refused_rate_limited=self._gate.refused,
            breaker=self._breaker.stats,
        )

    async def aclose(self) -> None:
        """Close the connection pool if this transport created it."""
        if self._owns_http:
            await self._http.aclose()

    async def get(
        self,
        endpoint: str,
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        priority: Priority = "deferrable",
    ) -> Envelope:
        """GET `{prefix}/{path}` and return its checked envelope.

        Args:
            endpoint: The endpoint's name for logs and errors (`fixtures/{id}`).
            path: The concrete path below the API's prefix (`fixtures/123`).
            params: Query parameters (never the token: the transport adds it where the API wants it).
            priority: What the call is to the hourly budget (every attempt spends one call). By
                default a call that can wait for its next turn (the fixture sync's pages, the
                cricket score table): only a match's own fetches are urgent, the board its own.

        Raises:
            ProviderBudgetSpent: the hourly budget cannot spare a call of this priority (nothing sent).
            ProviderRateLimited: inside a 429 window (nothing was sent) or on a fresh 429.
            ProviderUnavailable: the breaker is open, or every attempt failed transiently.
            ProviderAuthError: HTTP 401.
            ProviderRequestError: another 4xx.
            ProviderPayloadInvalid: valid JSON that is not an envelope.
        """
        call = _Call(
            endpoint=endpoint,
            path=f"{self._config.prefix}/{path}",
            params=dict(params or {}),
            priority=priority,
        )
        try:
            self._gate.check(endpoint)
            self._breaker.check()
        except ProviderRateLimited:
            _count(endpoint, "refused")
            raise
        except BreakerOpen as exc:
            _count(endpoint, "refused")
            raise ProviderUnavailable(
                endpoint, "breaker_open", detail=f"retry in {exc.retry_in:.1f}s"
            ) from None
        policy = self._config.retry
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.attempts) | stop_before_delay(policy.deadline),
            wait=wait_random_exponential(multiplier=policy.backoff_base, max=policy.backoff_max),
            retry=retry_if_exception_type(_Transient),
            before_sleep=_log_backoff(endpoint),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._attempt(call)
        except _Transient as exc:
            raise ProviderUnavailable(
                endpoint, "retries_exhausted", attempts=call.sent, detail=str(exc)
            ) from exc
        raise AssertionError("tenacity ended without an outcome")  # pragma: no cover

    async def _attempt(self, call: _Call) -> Envelope:
        async with self._bulkhead:
            try:
                self._gate.check(call.endpoint)
                probe = self._breaker.admit()
            except ProviderRateLimited:
                _count(call.endpoint, "refused")
                raise
            except BreakerOpen as exc:
                _count(call.endpoint, "refused")
                detail = f"retry in {exc.retry_in:.1f}s"
                raise ProviderUnavailable(
                    call.endpoint, "breaker_open", attempts=call.sent, detail=detail
                ) from None
            try:
                # Spent last, once nothing else can stop the request: a refused call costs nothing.
                await self._spend(call)
            except BaseException:
                self._breaker.release(probe)
                raise
            call.sent += 1
            call.status = None
            self._sent += 1
            self._in_flight += 1
            started = time.perf_counter()
            try:
                envelope = await self._exchange(call)
            except _Transient as exc:
                self._failed += 1
                self._breaker.failure(probe)
                self._log(call, started, exc.kind, error=exc.detail)
                raise
            except ProviderUnavailable as exc:
                self._breaker.release(probe)
                self._log(call, started, "transport", error=exc.detail)
                raise
            except ProviderError as exc:
                # The upstream answered, so it is up; it just refused or garbled this request.
                self._breaker.success(probe)
                self._log(call, started, type(exc).__name__)
                raise
            except BaseException:
                self._breaker.release(probe)
                raise
            finally:
                self._in_flight -= 1
            self._breaker.success(probe)
            self._log(call, started, "ok")
            return envelope

    async def _spend(self, call: _Call) -> None:
        """Take the attempt's call from the hourly budget, or refuse it before anything is sent."""
        if self._budget is None:
            return
        entity = self._config.budget_entity or call.endpoint
        if not await self._budget.take(entity, call.priority):
            _count(call.endpoint, "budget")
            raise ProviderBudgetSpent(call.endpoint, entity, call.priority)

    async def _exchange(self, call: _Call) -> Envelope:
        headers: dict[str, str] = {}
        params = dict(call.params)
        if self._config.token_in == "header":
            headers["Authorization"] = self._config.token
        else:
            params["api_token"] = self._config.token
        trace_id = current_trace_id()
        if trace_id is not None:
            headers["traceparent"] = traceparent_for(trace_id)
        try:
            async with asyncio.timeout(self._config.timeout):
                response = await self._http.get(call.path, params=params, headers=headers)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise _Transient("timeout", f"no complete answer within {self._config.timeout}s") from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.DecodingError) as exc:
            raise _Transient("connection", f"{type(exc).__name__}: {exc}") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ProviderUnavailable(
                call.endpoint, "transport", attempts=call.sent, detail=repr(exc)
            ) from exc
        status = call.status = response.status_code
        try:
            body = await _decode(response.content)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            if 200 <= status < 300:
                size = len(response.content)
                raise _Transient("malformed", f"body is not JSON ({size} bytes)") from exc
            body = None  # an error page: the status says enough
        return self._interpret(call, response, body)

    def _interpret(self, call: _Call, response: httpx.Response, body: object) -> Envelope:
        status = response.status_code
        if 200 <= status < 300:
            envelope = replace(parse_envelope(call.endpoint, body, attempts=call.sent), body=response.content)
            if envelope.rate_limit_remaining is not None:
                entity = requested_entity(body) or "unknown"
                metrics().budget_remaining.set(envelope.rate_limit_remaining, {"entity": entity})
            if envelope.rate_limit_remaining == 0:
                # The next call would be a 429: wait for the reset instead of spending it.
                reset = resets_in_seconds(body)
                self._gate.hold(
                    reset if reset is not None else self._config.rate_limit_fallback,
                    call.endpoint,
                    source="remaining_0",
                )
            return envelope
        if status == 429:
            waits = [
                seconds
                for seconds in (
                    resets_in_seconds(body),
                    retry_after_seconds(response.headers.get("retry-after"), self._config.wall()),
                )
                if seconds is not None
            ]
            seconds = max(waits) if waits else self._config.rate_limit_fallback
            retry_at = self._gate.hold(seconds, call.endpoint, source="429")
            raise ProviderRateLimited(call.endpoint, retry_at, sent=True)
        message = _field(body, "message", str)
        if status == 401:
            raise ProviderAuthError(call.endpoint, message)
        if status >= 500 or status in RETRYABLE_STATUSES:
            raise _Transient("status", f"HTTP {status}: {message or '-'}")
        raise ProviderRequestError(call.endpoint, status, message, _field(body, "code", int))

    def _log(self, call: _Call, started: float, outcome: str, *, error: str | None = None) -> None:
        took = time.perf_counter() - started
        _count(call.endpoint, OUTCOME_LABELS.get(outcome, "http_error"))
        metrics().provider_request_duration.record(timedelta(seconds=took), {"endpoint": call.endpoint})
        fields: dict[str, Any] = {
            "endpoint": call.endpoint,
            "status": call.status,
            "outcome": outcome,
            "latency_ms": round(took * 1000, 1),
            "attempt": call.sent,
        }
        if error is not None:
            fields["error"] = error
        if outcome == "ok":
            log.info("provider.request", **fields)
        else:
            log.warning("provider.request", **fields)


def _count(endpoint: str, outcome: str) -> None:
    metrics().provider_requests.add(1, {"endpoint": endpoint, "outcome": outcome})


async def _decode(content: bytes) -> object:
    if len(content) > INLINE_DECODE_MAX:
        # A 2,000-match board is ~10 MB and ~0.1 s to decode; keep the event loop responsive.
        return await asyncio.to_thread(json.loads, content)
    return json.loads(content)


def _field(body: object, name: str, kind: type[Any]) -> Any:
    value = body.get(name) if isinstance(body, Mapping) else None
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _log_backoff(endpoint: str) -> Callable[[RetryCallState], None]:
    def before_sleep(state: RetryCallState) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        log.info(
            "provider.retry",
            endpoint=endpoint,
            attempt=state.attempt_number,
            sleep_s=round(state.upcoming_sleep, 3),
            error=str(error),
        )

    return before_sleep
