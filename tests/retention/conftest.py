"""Retention fixtures: a plain connection for seeding, the retention activities on this test's engine.

The purged-fixture push test reuses the push tests' APNs simulator and drainer fixtures.
"""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.retention import RetentionActivities
from scoreline.settings import Settings

# Fixtures, registered by importing them (pytest_plugins is only honoured in the root conftest).
from tests.push.conftest import (  # noqa: F401 - pytest finds fixtures by name
    apns_client,
    drain_config,
    push_settings,
    push_sim_session,
    sim,
)


@pytest.fixture
def retention(engine: AsyncEngine) -> RetentionActivities:
    return RetentionActivities(engine)


@pytest.fixture
def worker_settings(settings: Settings) -> Settings:
    """This test's settings with a watch queue of its own (no other test's watch lands on our worker)."""
    return settings.model_copy(update={"temporal_watch_task_queue": f"{settings.temporal_task_queue}-watch"})
