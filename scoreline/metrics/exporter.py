"""One Prometheus endpoint per worker or feed-builder process: the Temporal SDK's exporter.

The SDK serves its own metrics (schedule-to-start, task slots, sticky cache ...) from a Rust HTTP
server inside its Runtime, and that server cannot share a prometheus-client registry. Recording
our series through the same Runtime's meter puts both on one endpoint, which is why the worker
and the feed builder use it rather than prometheus-client (the API, which has no SDK worker, uses
prometheus-client: `api.metrics`).

A Runtime owns a thread pool and a port: one per process, made after any fork. The SDK can abort
the interpreter while its threads wind down at exit (temporalio/sdk-python#300), so a process that
started an exporter leaves with `leave_now` once it has shut down cleanly.
"""

from __future__ import annotations

import logging
import os
import sys

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from scoreline.logging import get_logger
from scoreline.metrics.instruments import DURATION_BUCKETS, install

log = get_logger(__name__)


def start_exporter(service: str, address: str) -> Runtime | None:
    """A Runtime serving `/metrics` on `address` (host:port) whose meter our instruments record into.

    Every series carries `service` (scoreline-worker, scoreline-feeds): one Prometheus job can
    scrape several kinds of process and still tell them apart. None if the exporter cannot start
    (the port is taken): the process runs without metrics rather than not at all, says so in its
    log, and Prometheus reports the target down (`ScrapeTargetDown`).
    """
    try:
        runtime = _runtime(service, address)
    except (ValueError, RuntimeError) as error:
        log.error("metrics.exporter_failed", address=address, error=f"{type(error).__name__}: {error}")
        return None
    install(runtime.metric_meter)
    _Started.runtime = runtime
    log.info("metrics.exporter_started", url=f"http://{address}/metrics", service=service)
    return runtime


def _runtime(service: str, address: str) -> Runtime:
    return Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(
                bind_address=address,
                counters_total_suffix=True,
                unit_suffix=True,
                durations_as_seconds=True,
                histogram_bucket_overrides=DURATION_BUCKETS,
            ),
            global_tags={"service": service},
            attach_service_name=False,
        )
    )


class _Started:
    """Keeps the process's exporter alive whether or not its caller holds on to the Runtime."""

    runtime: Runtime | None = None


def leave_now(code: int = 0) -> None:
    """Flush what is buffered and end the process without running the SDK's exit-time teardown."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
