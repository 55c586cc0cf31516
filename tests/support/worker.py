"""Run Scoreline's real workers (every workflow and activity) on a test's own task queues."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from temporalio.client import Client

from scoreline.durations import format_duration, format_durations
from scoreline.settings import Settings
from workers.dependencies import worker_dependencies
from workers.main import running_workers


@asynccontextmanager
async def running_worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with worker_dependencies(settings) as deps, running_workers(client, deps, settings):
        yield


def worker_process_env(settings: Settings) -> dict[str, str]:
    """The environment a `scoreline worker` process needs to join this test's queues, with its
    providers, polling and (when the settings name one) APNs."""
    assert settings.database_url and settings.redis_url
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_NAMESPACE": settings.temporal_namespace,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "TEMPORAL_WATCH_TASK_QUEUE": settings.temporal_watch_task_queue,
        "PROVIDER_URL": settings.provider_url,
        "PROVIDER_TOKEN": settings.provider_token.get_secret_value(),
        "CRICKET_PROVIDER_URL": settings.cricket_provider_url,
        "CRICKET_PROVIDER_TOKEN": settings.cricket_provider_token.get_secret_value(),
        "CRICKET_STUMPS_INTERVAL": format_duration(settings.cricket_stumps_interval),
        "CRICKET_POST_MATCH_RECHECKS": format_durations(settings.cricket_post_match_rechecks),
        "POLL_INTERVAL_LIVE": format_duration(settings.poll_interval_live),
        "POLL_INTERVAL_IDLE": format_duration(settings.poll_interval_idle),
        "RECONCILE_INTERVAL": format_duration(settings.reconcile_interval),
        "WATCH_HEARTBEAT_TIMEOUT": format_duration(settings.watch_heartbeat_timeout),
        "PROVIDER_BREAKER_COOLDOWN": format_duration(settings.provider_breaker_cooldown),
        "FULL_TIME_SETTLE": format_duration(settings.full_time_settle),
        "KICKOFF_LEAD": format_duration(settings.kickoff_lead),
        "FIXTURE_SYNC_INTERVAL": "off",
        "LOG_FORMAT": "json",
    }
    if settings.apns_key_path is not None:
        env.update(
            {
                "APNS_URL": settings.apns_url,
                "APNS_KEY_PATH": str(settings.apns_key_path),
                "APNS_TEAM_ID": settings.apns_team_id,
                "APNS_KEY_ID": settings.apns_key_id,
                "APNS_TOPIC": settings.apns_topic,
                "APNS_REQUEST_TIMEOUT": format_duration(settings.apns_request_timeout),
                "LA_MIN_UPDATE_INTERVAL": format_duration(settings.la_min_update_interval),
            }
        )
        if settings.apns_ca_file is not None:
            env["APNS_CA_FILE"] = str(settings.apns_ca_file)
    return env
