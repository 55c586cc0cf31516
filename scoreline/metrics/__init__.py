"""Metrics: what Scoreline counts and measures, and how each process exports it.

The worker and the feed builder record through the Temporal SDK's metric meter, so their own
series and the SDK's (schedule-to-start, task slots, sticky cache) leave on one Prometheus endpoint
per process (`exporter`). The API records with prometheus-client (`api.metrics`). The names and
their labels are declared once, in `instruments`.
"""
