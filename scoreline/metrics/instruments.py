"""Every series the worker and the feed builder export, declared once.

Names follow Prometheus conventions as exported: the Temporal exporter (configured in `exporter`)
adds `_total` to counters and `_seconds` to duration histograms, so a counter declared here as
`scoreline_watch_polls` is scraped as `scoreline_watch_polls_total`. Labels never carry a fixture
or device id: a label's values must stay few whatever the number of matches.

Until a process installs a real meter (`install`), every instrument records into the SDK's no-op
meter, so code and tests that run without an exporter record nothing and cost nearly nothing.
"""

from __future__ import annotations

from temporalio.common import (
    MetricCounter,
    MetricGauge,
    MetricGaugeFloat,
    MetricHistogramTimedelta,
    MetricMeter,
)

DURATION_BUCKETS: dict[str, list[float]] = {
    # Temporal's own: its "schedule-to-start p99 > 200 ms" alert needs buckets below and at 200 ms.
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
    # Ours.
    "scoreline_watch_poll_lateness": [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    "scoreline_provider_request_duration": [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    "scoreline_ingest_commit_duration": [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    "scoreline_feed_build_duration": [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
}
"""Bucket bounds in seconds, by base name (the exporter's `histogram_bucket_overrides`)."""


class ScorelineMetrics:
    """The instruments, made from one meter."""

    def __init__(self, m: MetricMeter) -> None:
        # The watch (activities.watch).
        self.polls: MetricCounter = m.create_counter(
            "scoreline_watch_polls",
            "Polls of watched matches, by source (live, reconcile) and outcome (ok, failed, off_board, deferred).",
            "",
        )
        self.poll_lateness: MetricHistogramTimedelta = m.create_histogram_timedelta(
            "scoreline_watch_poll_lateness",
            "How much later than its interval after the last one a poll started, by interval (live, idle).",
            "",
        )
        self.poll_age: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_watch_poll_age_seconds",
            "Seconds since the in-play match this process has gone longest without a poll answered and ingested was last polled.",
            "",
        )
        self.live_matches: MetricGauge = m.create_gauge(
            "scoreline_watch_live_matches", "In-play matches this process watches.", ""
        )
        # The provider client (activities.provider).
        self.provider_requests: MetricCounter = m.create_counter(
            "scoreline_provider_requests", "Requests sent to the provider, by endpoint and outcome.", ""
        )
        self.provider_request_duration: MetricHistogramTimedelta = m.create_histogram_timedelta(
            "scoreline_provider_request_duration", "Time from sending a provider request to its answer.", ""
        )
        self.breaker_open: MetricGauge = m.create_gauge(
            "scoreline_provider_breaker_open",
            "1 while the provider's circuit breaker is open or half-open.",
            "",
        )
        self.rate_limit_windows: MetricCounter = m.create_counter(
            "scoreline_provider_rate_limit_windows",
            "Windows in which no request is sent: after a 429, or when the hourly budget reads 0.",
            "",
        )
        self.budget_remaining: MetricGauge = m.create_gauge(
            "scoreline_provider_budget_remaining_calls",
            "Calls left in the provider's hourly window for an entity, as the provider reports it.",
            "",
        )
        self.budget_refused: MetricCounter = m.create_counter(
            "scoreline_provider_budget_refused",
            "Calls not sent because the hourly budget could not spare them, by entity and priority.",
            "",
        )
        self.budget: MetricGauge = m.create_gauge(
            "scoreline_provider_budget_calls",
            "The hourly call budget per entity (PROVIDER_HOURLY_BUDGET).",
            "",
        )
        self.live_poll_stretch: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_provider_live_poll_stretch",
            "The live poll interval over POLL_INTERVAL_LIVE: above 1, the hourly budget cannot pay "
            "for the configured cadence and live matches are polled that many times slower.",
            "",
        )
        # The ingest and the command road (activities.ingest, activities.commands).
        self.ingest_commit_duration: MetricHistogramTimedelta = m.create_histogram_timedelta(
            "scoreline_ingest_commit_duration", "Time to commit one provider snapshot's changes.", ""
        )
        self.changes_committed: MetricCounter = m.create_counter(
            "scoreline_changes_committed", "Log entries committed, by source (provider, desk).", ""
        )
        self.key_moments: MetricCounter = m.create_counter(
            "scoreline_key_moments", "Key moments committed (goals, red cards, wickets ...), by kind.", ""
        )
        # Live Activities (activities.push).
        self.pushes: MetricCounter = m.create_counter(
            "scoreline_pushes",
            "APNs answers, by push kind (start, alert, update, end), HTTP status (or 'connection') and reason.",
            "",
        )
        self.live_activities_owed: MetricGauge = m.create_gauge(
            "scoreline_live_activities_owed",
            "Live Activity mailboxes owing a push (due now or backing off), all matches.",
            "",
        )
        self.live_activity_lag: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_live_activity_lag_seconds",
            "Seconds the most overdue due mailbox is past its next try: near 0 while drainers keep up.",
            "",
        )
        # The partner feed builder (scoreline.feeds).
        self.feed_builds: MetricCounter = m.create_counter(
            "scoreline_feed_builds",
            "Document rebuilds, by document kind and outcome (published, unchanged, failed).",
            "",
        )
        self.feed_build_duration: MetricHistogramTimedelta = m.create_histogram_timedelta(
            "scoreline_feed_build_duration", "Time to rebuild and save one document.", ""
        )
        self.feed_staleness: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_feed_staleness_seconds",
            "Age of the oldest change that no published document shows yet (0 when all are current).",
            "",
        )
        self.feed_builder_leading: MetricGauge = m.create_gauge(
            "scoreline_feed_builder_leading",
            "1 while this feed builder holds the lead (one per database).",
            "",
        )
        # Partner webhooks (scoreline.webhooks).
        self.webhook_deliveries: MetricCounter = m.create_counter(
            "scoreline_webhook_deliveries",
            "Webhook attempts, by outcome (delivered: 2xx; failed: another status; no_answer).",
            "",
        )
        self.webhook_pauses: MetricCounter = m.create_counter(
            "scoreline_webhook_pauses", "Endpoints paused after a message failed for WEBHOOK_RETRY_FOR.", ""
        )
        self.webhook_owed: MetricGauge = m.create_gauge(
            "scoreline_webhook_owed", "Webhook messages not delivered yet, paused endpoints included.", ""
        )
        self.webhook_lag: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_webhook_lag_seconds",
            "Seconds the most overdue undelivered message of an active endpoint is past its due time.",
            "",
        )
        self.webhook_endpoints_paused: MetricGauge = m.create_gauge(
            "scoreline_webhook_endpoints_paused",
            "Webhook endpoints paused by a day of failures (not those an operator paused).",
            "",
        )
        # Outbox consumers.
        self.outbox_lag: MetricGaugeFloat = m.create_gauge_float(
            "scoreline_outbox_lag_seconds", "How far a consumer is behind the outbox, by consumer.", ""
        )


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
