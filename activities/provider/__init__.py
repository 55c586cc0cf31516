"""The SportMonks client: resilient transport, typed errors, snapshots, one shared live poll.

Layers, each in its own module:

- `transport.SportMonksTransport`: GET → checked `Envelope`, with timeout, full-jitter retries,
  circuit breaker, bulkhead and 429 window; raises only `ProviderError`s.
- `client.SportMonksClient`: envelopes → `Snapshot`s; `live()` coalesces `livescores/inplay`
  (`shared_board`: one request per interval for every worker); per-fixture calls are batched
  into `fixtures/multi` (`batching`).
- `budget.RequestBudget`: the hourly calls per entity the deployment spends, a match's own fetches first.
- `errors`: the `ProviderError` hierarchy callers branch on.
"""

from activities.provider.breaker import BreakerState, BreakerStats, CircuitBreaker
from activities.provider.client import LiveBoard, ProviderClientStats, SportMonksClient
from activities.provider.coalescing import Coalescer, CoalescerStats
from activities.provider.config import BreakerPolicy, ProviderClientConfig, RetryPolicy
from activities.provider.envelope import Envelope, Pagination
from activities.provider.errors import (
    ProviderAuthError,
    ProviderBudgetSpent,
    ProviderError,
    ProviderPayloadError,
    ProviderPayloadInvalid,
    ProviderRateLimited,
    ProviderRequestError,
    ProviderUnavailable,
)
from activities.provider.transport import SportMonksTransport, TransportStats

__all__ = [
    "BreakerPolicy",
    "BreakerState",
    "BreakerStats",
    "CircuitBreaker",
    "Coalescer",
    "CoalescerStats",
    "Envelope",
    "LiveBoard",
    "Pagination",
    "ProviderAuthError",
    "ProviderBudgetSpent",
    "ProviderClientConfig",
    "ProviderClientStats",
    "ProviderError",
    "ProviderPayloadError",
    "ProviderPayloadInvalid",
    "ProviderRateLimited",
    "ProviderRequestError",
    "ProviderUnavailable",
    "RetryPolicy",
    "SportMonksClient",
    "SportMonksTransport",
    "TransportStats",
]
