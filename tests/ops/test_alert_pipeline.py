"""A provider outage during a replayed match, seen end to end: metrics, the rule, one message each way.

The real stack (`scoreline dev` with a recording) plays a match; the provider simulator answers
503 until the test clears the fault. Meanwhile the test scrapes the API, worker and feed-builder
endpoints, and runs its own Prometheus (the repository's rules, scraping every second) and
Alertmanager (the repository's routing, its webhook pointed at a receiver in this test). The
only change to the rules is ProviderBreakerOpen's hold, 60 s shortened to 3 s so the test does not
wait a minute; `promtool test rules` (tests/ops/test_rules.py) checks the real 60 s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from devkit.devstack import monitoring
from devkit.devstack.ports import free_port
from devkit.devstack.process import ChildProcess
from tests.support.http import serve
from tests.support.stack import ROOT, DevStack, dev_stack
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RECORDING = ROOT / "recordings" / "football-basic.jsonl"
FIXTURE = 81000001
TUNING = {
    # The match at 10x; polls and the breaker fast enough to open and close in seconds.
    "POLL_INTERVAL_LIVE": "500ms",
    "POLL_INTERVAL_IDLE": "1s",
    "RECONCILE_INTERVAL": "30s",
    "PROVIDER_BREAKER_COOLDOWN": "2s",
}
Samples = dict[str, list[tuple[dict[str, str], float]]]


def _samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def _value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the series of `name` whose labels include `labels` (0 when there is none)."""
    return sum(
        value
        for found, value in samples.get(name, [])
        if all(found.get(key) == wanted for key, wanted in labels.items())
    )


async def _scrape(http: httpx.AsyncClient, url: str) -> Samples:
    response = await http.get(url)
    response.raise_for_status()
    return _samples(response.text)


class Webhook:
    """Alertmanager's webhook receiver: every message it posted, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def receive(self, request: Request) -> Response:
        self.messages.append(await request.json())
        return Response(status_code=200)

    def about(self, alertname: str, status: str) -> list[dict[str, Any]]:
        return [
            message
            for message in self.messages
            if message["status"] == status and message["commonLabels"].get("alertname") == alertname
        ]


def _rules_with_short_breaker_hold(directory: Path) -> Path:
    text = (monitoring.RULES_DIR / "scoreline.rules.yml").read_text()
    rules = yaml.safe_load(text)
    shortened = 0
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == "ProviderBreakerOpen":
                assert rule["for"] == "60s"
                rule["for"] = "3s"
                shortened += 1
    assert shortened == 1
    return monitoring.write_config(directory / "rules.yml", rules)


@asynccontextmanager
async def _child(child: ChildProcess, ready: Callable[[], Any]) -> AsyncIterator[None]:
    await child.start()
    try:
        async with httpx.AsyncClient(timeout=2) as http:

            async def answers() -> bool:
                try:
                    return (await http.get(ready())).status_code == 200
                except httpx.HTTPError:
                    return False

            await eventually(answers, within=60, every=0.2)
        yield
    finally:
        await child.stop()


@asynccontextmanager
async def _monitoring(stack: DevStack, webhook_url: str, directory: Path) -> AsyncIterator[tuple[str, str]]:
    binaries = monitoring.find_binaries()
    assert binaries is not None, "Prometheus and Alertmanager are needed: `make ops-tools` installs them"
    am_port, prom_port = free_port(), free_port()
    am_url, prom_url = f"http://127.0.0.1:{am_port}", f"http://127.0.0.1:{prom_port}"
    am_config = monitoring.alertmanager_config(
        webhook_url, group_wait="1s", group_interval="2s", repeat_interval="1h"
    )
    alertmanager = monitoring.alertmanager_process(
        binaries.alertmanager,
        monitoring.write_config(directory / "alertmanager.yml", am_config),
        directory / "am-data",
        am_port,
        directory / "alertmanager.log",
    )
    targets = {"scoreline-worker": stack.addresses["worker-metrics"]}
    prom_config = monitoring.prometheus_config(
        targets, rules=[_rules_with_short_breaker_hold(directory)], alertmanager=am_url, interval="1s"
    )
    prometheus = monitoring.prometheus_process(
        binaries.prometheus,
        monitoring.write_config(directory / "prometheus.yml", prom_config),
        directory / "prom-data",
        prom_port,
        directory / "prometheus.log",
    )
    async with (
        _child(alertmanager, lambda: f"{am_url}/-/ready"),
        _child(prometheus, lambda: f"{prom_url}/-/ready"),
    ):
        yield prom_url, am_url


async def test_a_provider_outage_opens_the_breaker_fires_once_and_resolves_once(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    webhook = Webhook()
    receiver = Starlette(routes=[Route("/alerts", webhook.receive, methods=["POST"])])
    args = ("--recording", str(RECORDING), "--speed", "10", "--start-in", "3")
    async with (
        serve(receiver) as receiver_url,
        dev_stack(*args, database_url=database_url, redis_url=redis_url, env=TUNING) as stack,
        _monitoring(stack, f"{receiver_url}/alerts", tmp_path) as (prometheus, _alertmanager),
        httpx.AsyncClient(timeout=10) as http,
    ):
        worker = stack.addresses["worker-metrics"]
        provider = stack.addresses["provider"]

        async def in_play_and_logged() -> Samples | None:
            found = await _scrape(http, worker)
            in_play = _value(found, "scoreline_watch_live_matches") == 1
            logged = _value(found, "scoreline_changes_committed_total", source="provider") > 0
            return found if in_play and logged else None

        before = await eventually(in_play_and_logged, within=120, every=0.5)
        assert [
            value
            for labels, value in before["scoreline_provider_breaker_open"]
            if labels["upstream"] == "football"
        ] == [0]

        # The outage: every provider answer a 503 until the test ends it.
        added = await http.post(f"{provider}/_sim/faults", json={"kind": "status", "status": 503})
        assert added.status_code == 201, added.text

        async def breaker(value: float) -> Samples | None:
            found = await _scrape(http, worker)
            return (
                found
                if _value(found, "scoreline_provider_breaker_open", upstream="football") == value
                else None
            )

        during = await eventually(lambda: breaker(1), within=60, every=0.25)
        await eventually(lambda: _has(webhook.about("ProviderBreakerOpen", "firing")), within=60, every=0.25)

        cleared = await http.delete(f"{provider}/_sim/faults")
        assert cleared.status_code == 200, cleared.text
        after = await eventually(lambda: breaker(0), within=60, every=0.25)
        await eventually(
            lambda: _has(webhook.about("ProviderBreakerOpen", "resolved")), within=60, every=0.25
        )
        await asyncio.sleep(5)  # a second message for the same outage would have come by now

        firing = webhook.about("ProviderBreakerOpen", "firing")
        resolved = webhook.about("ProviderBreakerOpen", "resolved")
        assert (len(firing), len(resolved)) == (1, 1), json.dumps(webhook.messages, indent=1)
        assert firing[0]["groupKey"] == resolved[0]["groupKey"]
        assert firing[0]["commonLabels"]["upstream"] == "football"

        # The worker's series moved with the match and the outage.
        errors = _value(during, "scoreline_provider_requests_total", outcome="http_error")
        assert errors > _value(before, "scoreline_provider_requests_total", outcome="http_error")
        assert _value(after, "scoreline_provider_requests_total", outcome="refused") > 0
        assert _value(after, "scoreline_watch_polls_total", outcome="failed") > 0
        assert _value(after, "scoreline_watch_polls_total", source="live", outcome="ok") > 0
        assert _value(after, "scoreline_ingest_commit_duration_seconds_count") > 0
        assert _value(after, "scoreline_provider_budget_calls") == 2000
        assert _value(after, "scoreline_provider_budget_remaining_calls", entity="Fixture") > 0
        # The SDK's own, in seconds, with a bucket at Temporal's 200 ms alert threshold.
        assert _value(after, "temporal_workflow_task_schedule_to_start_latency_seconds_bucket", le="0.2") > 0
        assert "temporal_worker_task_slots_available" in after

        # The API and the feed builder export theirs.
        assert (await http.get(f"{stack.addresses['api']}/v1/matches/{FIXTURE}")).status_code == 200
        api = await _scrape(http, stack.addresses["api-metrics"])
        assert _value(api, "http_requests_total", handler="/v1/matches/{fixture_id}", status="200") >= 1
        assert "scoreline_outbox_lag_seconds" in api and "scoreline_stream_clients" in api
        feeds = await _scrape(http, stack.addresses["feeds-metrics"])
        assert _value(feeds, "scoreline_feed_builds_total", doc_kind="match", outcome="published") > 0
        assert "scoreline_feed_staleness_seconds" in feeds

        # Our Prometheus saw the breaker open (the series the rule reads).
        query = await http.get(
            f"{prometheus}/api/v1/query",
            params={"query": 'max_over_time(scoreline_provider_breaker_open{upstream="football"}[5m])'},
        )
        assert query.json()["data"]["result"][0]["value"][1] == "1"


async def _has(found: list[dict[str, Any]]) -> bool:
    return bool(found)
