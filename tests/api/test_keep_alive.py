"""`scoreline api` keeps an idle connection open longer than the clients and proxies in front of it
keep theirs, so a client reusing one gets an answer, never a reset."""

from __future__ import annotations

import pytest

from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.api.raw_http import twice_on_one_connection
from tests.commands.harness import road_settings
from tests.web.api_process import ApiProcess

pytestmark = pytest.mark.timeout(120)

IDLE_S = 6.5
"""Longer than the 5 s for which httpx, by default, keeps an idle connection to reuse."""


async def test_a_connection_idle_for_longer_than_a_clients_keep_alive_is_still_answered(
    settings: Settings,
) -> None:
    """The API closed idle connections after uvicorn's default 5 s, httpx's own reuse limit, so a
    client that reused one at that moment got a reset instead of its answer."""
    api = ApiProcess(road_settings(settings), free_port())
    await api.start()
    try:
        first, second = await twice_on_one_connection(api.url, "/healthz", idle=IDLE_S, wait=10)
    finally:
        api.kill()
    assert (first.status, second.status) == (200, 200)
