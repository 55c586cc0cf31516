"""Every series the worker and the feed builder export, declared once.

Names follow Prometheus conventions as exported: the Temporal exporter (configured in `exporter`)
adds `_total` to counters and `_seconds` to duration histograms, so a counter declared here as
`scoreline_watch_polls` is scraped as `scoreline_watch_polls_total`. Labels never carry a fixture
or device id: a label's values must stay few whatever the number of matches.

Until a process installs a real meter (`install`), every instrument records into the SDK's no-op
meter, so code and tests that run without an exporter record nothing and cost nearly nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, get_args, get_type_hints

from temporalio.common import (
    MetricCounter,
    MetricGauge,
    MetricGaugeFloat,
    MetricHistogramTimedelta,
    MetricMeter,
)


@dataclass(frozen=True)
class Series:
    """One exported series: its base name, its help line and, for a histogram, its bucket bounds in seconds."""

    name: str
    help: str
    buckets: tuple[float, ...] = ()


class ScorelineMetrics:
    """The instruments, made from one meter.

    Each attribute's annotation carries its series, so every series is declared once and mypy still
    knows each instrument's type (the first argument of `Annotated`) where callers use it.
    """

    # The watch (activities.watch).
    polls: Annotated[
        MetricCounter,
        Series(
            "scoreline_watch_polls",
            "Polls of watched matches, by source (live, reconcile) and outcome (ok, failed, off_board, deferred).",
        ),
    ]
    poll_lateness: Annotated[
        MetricHistogramTimedelta,
        Series(
            "scoreline_watch_poll_lateness",
            "How much later than its interval after the last one a poll started, by interval (live, idle).",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        ),
    ]
    poll_age: Annotated[
        MetricGaugeFloat,
        Series(
            "scoreline_watch_poll_age_seconds",
            "Seconds since the in-play match this process has gone longest without a poll answered and ingested was last polled.",
        ),
    ]
    live_matches: Annotated[
        MetricGauge, Series("scoreline_watch_live_matches", "In-play matches this process watches.")
    ]
    # The provider client (activities.provider).
    provider_requests: Annotated[
        MetricCounter,
        Series("scoreline_provider_requests", "Requests sent to the provider, by endpoint and outcome."),
    ]
    provider_request_duration: Annotated[
        MetricHistogramTimedelta,
        Series(
            "scoreline_provider_request_duration",
            "Time from sending a provider request to its answer.",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        ),
    ]
    breaker_open: Annotated[
        MetricGauge,
        Series(
            "scoreline_provider_breaker_open", "1 while the provider's circuit breaker is open or half-open."
        ),
    ]
    rate_limit_windows: Annotated[
        MetricCounter,
        Series(
            "scoreline_provider_rate_limit_windows",
            "Windows in which no request is sent: after a 429, or when the hourly budget reads 0.",
        ),
    ]
    budget_remaining: Annotated[
        MetricGauge,
        Series(
            "scoreline_provider_budget_remaining_calls",
            "Calls left in the provider's hourly window for an entity, as the provider reports it.",
        ),
    ]
    budget_refused: Annotated[
        MetricCounter,
        Series(
            "scoreline_provider_budget_refused",
            "Calls not sent because the hourly budget could not spare them, by entity and priority.",
        ),
    ]
    budget: Annotated[
        MetricGauge,
        Series(
            "scoreline_provider_budget_calls", "The hourly call budget per entity (PROVIDER_HOURLY_BUDGET)."
        ),
    ]
    live_poll_stretch: Annotated[
        MetricGaugeFloat,
        Series(
            "scoreline_provider_live_poll_stretch",
            "The live poll interval over POLL_INTERVAL_LIVE: above 1, the hourly budget cannot pay "
            "for the configured cadence and live matches are polled that many times slower.",
        ),
    ]
    # The ingest and the command road (activities.ingest, activities.commands).
    ingest_commit_duration: Annotated[
        MetricHistogramTimedelta,
        Series(
            "scoreline_ingest_commit_duration",
            "Time to commit one provider snapshot's changes.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
        ),
    ]
    changes_committed: Annotated[
        MetricCounter,
        Series("scoreline_changes_committed", "Log entries committed, by source (provider, desk)."),
    ]
    key_moments: Annotated[
        MetricCounter,
        Series("scoreline_key_moments", "Key moments committed (goals, red cards, wickets ...), by kind."),
    ]
    # Live Activities (activities.push).
    pushes: Annotated[
        MetricCounter,
        Series(
            "scoreline_pushes",
            "APNs answers, by push kind (start, alert, update, end), HTTP status (or 'connection') and reason.",
        ),
    ]
    live_activities_owed: Annotated[
        MetricGauge,
        Series(
            "scoreline_live_activities_owed",
            "Live Activity mailboxes owing a push (due now or backing off), all matches.",
        ),
    ]
    live_activity_lag: Annotated[
        MetricGaugeFloat,
        Series(
            "scoreline_live_activity_lag_seconds",
            "Seconds the most overdue due mailbox is past its next try: near 0 while drainers keep up.",
        ),
    ]
    # The partner feed builder (scoreline.feeds).
    feed_builds: Annotated[
        MetricCounter,
        Series(
            "scoreline_feed_builds",
            "Document rebuilds, by document kind and outcome (published, unchanged, failed).",
        ),
    ]
    feed_build_duration: Annotated[
        MetricHistogramTimedelta,
        Series(
            "scoreline_feed_build_duration",
            "Time to rebuild and save one document.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
        ),
    ]
    feed_staleness: Annotated[
        MetricGaugeFloat,
        Series(
            "scoreline_feed_staleness_seconds",
            "Age of the oldest change that no published document shows yet (0 when all are current).",
        ),
    ]
    feed_builder_leading: Annotated[
        MetricGauge,
        Series(
            "scoreline_feed_builder_leading", "1 while this feed builder holds the lead (one per database)."
        ),
    ]
    # Partner webhooks (scoreline.webhooks).
    webhook_deliveries: Annotated[
        MetricCounter,
        Series(
            "scoreline_webhook_deliveries",
            "Webhook attempts, by outcome (delivered: 2xx; failed: another status; no_answer).",
        ),
    ]
    webhook_pauses: Annotated[
        MetricCounter,
        Series("scoreline_webhook_pauses", "Endpoints paused after a message failed for WEBHOOK_RETRY_FOR."),
    ]
    webhook_owed: Annotated[
        MetricGauge,
        Series("scoreline_webhook_owed", "Webhook messages not delivered yet, paused endpoints included."),
    ]
    webhook_lag: Annotated[
        MetricGaugeFloat,
        Series(
            "scoreline_webhook_lag_seconds",
            "Seconds the most overdue undelivered message of an active endpoint is past its due time.",
        ),
    ]
    webhook_endpoints_paused: Annotated[
        MetricGauge,
        Series(
            "scoreline_webhook_endpoints_paused",
            "Webhook endpoints paused by a day of failures (not those an operator paused).",
        ),
    ]
    # Outbox consumers.
    outbox_lag: Annotated[
        MetricGaugeFloat,
        Series("scoreline_outbox_lag_seconds", "How far a consumer is behind the outbox, by consumer."),
    ]

    def __init__(self, meter: MetricMeter) -> None:
        for attr, kind, series in _declared():
            setattr(self, attr, _MAKERS[kind](meter, series))


_MAKERS: dict[type, Callable[[MetricMeter, Series], object]] = {
    MetricCounter: lambda meter, s: meter.create_counter(s.name, s.help, ""),
    MetricGauge: lambda meter, s: meter.create_gauge(s.name, s.help, ""),
    MetricGaugeFloat: lambda meter, s: meter.create_gauge_float(s.name, s.help, ""),
    MetricHistogramTimedelta: lambda meter, s: meter.create_histogram_timedelta(s.name, s.help, ""),
}
"""How a meter makes each kind of instrument `ScorelineMetrics` declares."""


def _declared() -> Iterator[tuple[str, type, Series]]:
    """Each instrument of `ScorelineMetrics` as (attribute, kind, series), in the order declared."""
    for attr, hint in get_type_hints(ScorelineMetrics, include_extras=True).items():
        kind, series = get_args(hint)
        yield attr, kind, series


_TEMPORAL_BUCKETS: dict[str, list[float]] = {
    # Its "schedule-to-start p99 > 200 ms" alert needs buckets below and at 200 ms.
    "temporal_workflow_task_schedule_to_start_latency": [
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.2,
        0.5,
        1,
        2.5,
        5,
        10,
    ],
    "temporal_activity_schedule_to_start_latency": [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10],
    "temporal_workflow_task_execution_latency": [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
}
"""Bucket bounds for the Temporal SDK's own duration histograms."""

DURATION_BUCKETS: dict[str, list[float]] = _TEMPORAL_BUCKETS | {
    series.name: list(series.buckets) for _, _, series in _declared() if series.buckets
}
"""Bucket bounds in seconds, by base name (the exporter's `histogram_bucket_overrides`)."""


class _Installed:
    """The process's instruments: no-op until `install` is called with the exporter's meter."""

    metrics = ScorelineMetrics(MetricMeter.noop)


def install(meter: MetricMeter) -> ScorelineMetrics:
    """Record into `meter` from now on (once per process, before any work starts)."""
    _Installed.metrics = ScorelineMetrics(meter)
    return _Installed.metrics


def metrics() -> ScorelineMetrics:
    """The instruments every recording goes through."""
    return _Installed.metrics
