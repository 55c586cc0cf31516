"""The API's Prometheus metrics: requests by route template, commands, live clients, outbox lag.

prometheus-client, through prometheus-fastapi-instrumentator for the request series, on a registry
of the app's own: each `create_app` (tests build many) registers its series once, on its registry.
The live clients and the outbox lag are read when scraped (a collector), so nothing is counted
twice and a value can never go stale between scrapes.

`/metrics` is served on the API's port, or, with `API_METRICS_ADDRESS`, on that internal address
only (a thread server of prometheus-client) so the public ingress never routes to it.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator

from fastapi import FastAPI
from prometheus_client import CollectorRegistry, Counter, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_fastapi_instrumentator import Instrumentator

from api.live.runtime import LiveRuntime
from scoreline.logging import get_logger

log = get_logger(__name__)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds: fine enough below 100 ms, where every read and command should answer."""


class _LiveCollector(Collector):
    """Live clients by transport, refused ones by transport and reason, and outbox lag by consumer,
    read from the live runtime when scraped."""

    def __init__(self, live: Callable[[], LiveRuntime | None]) -> None:
        self._live = live

    def collect(self) -> Iterator[Metric]:
        clients = GaugeMetricFamily(
            "scoreline_stream_clients",
            "Live-screen connections subscribed now, by transport.",
            labels=["transport"],
        )
        lag = GaugeMetricFamily(
            "scoreline_outbox_lag_seconds",
            "How far a consumer is behind the outbox, by consumer.",
            labels=["consumer"],
        )
        refused = CounterMetricFamily(
            "scoreline_stream_refusals",
            "Live-screen connections refused at the connection limits, by transport and reason.",
            labels=["transport", "reason"],
        )
        live = self._live()
        tally: Tally[str] = Tally({"sse": 0, "websocket": 0})
        if live is not None:
            for labels, count in sorted(live.limits.refusals().items()):
                refused.add_metric(list(labels), count)
            for kind, count in live.hub.clients_by_kind().items():
                tally["websocket" if kind == "ws" else "sse"] += count
            for consumer, seconds in live.listener.lags().items():
                lag.add_metric([consumer], seconds)
        for transport, count in sorted(tally.items()):
            clients.add_metric([transport], count)
        yield clients
        yield refused
        yield lag


class ApiMetrics:
    """The app's registry and the series routes record into."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter(
            "scoreline_commands",
            "Desk and operator commands answered, by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self.feed_requests = Counter(
            "scoreline_feed_requests",
            "Partner feed requests, by HTTP status (200 a body, 304 not modified).",
            ["status"],
            registry=self.registry,
        )

    def install(self, app: FastAPI, *, address: str) -> None:
        """Instrument every route; serve `/metrics` on the app, or only on `address` if given."""
        instrumentator = Instrumentator(
            should_group_status_codes=False,
            should_exclude_streaming_duration=True,
            excluded_handlers=["/metrics"],
            registry=self.registry,
        )
        instrumentator.instrument(app, latency_lowr_buckets=LATENCY_BUCKETS)
        self.registry.register(_LiveCollector(lambda: getattr(app.state, "live", None)))
        if address:
            host, _, port = address.rpartition(":")
            try:
                start_http_server(int(port), addr=host.strip("[]") or "0.0.0.0", registry=self.registry)
            except OSError as error:
                # As the worker's exporter: the API serves without metrics rather than not at all,
                # and Prometheus reports the target down (`ScrapeTargetDown`).
                log.error(
                    "metrics.exporter_failed", address=address, error=f"{type(error).__name__}: {error}"
                )
                return
            log.info("metrics.exporter_started", url=f"http://{address}/metrics", service="scoreline-api")
        else:
            instrumentator.expose(app, include_in_schema=False)
