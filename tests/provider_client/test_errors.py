"""The error hierarchy at the edges the simulator cannot show: no server, odd bodies, page URLs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import httpx
import pytest

from activities.provider import (
    ProviderError,
    ProviderPayloadError,
    ProviderPayloadInvalid,
    ProviderUnavailable,
    SportMonksClient,
    SportMonksTransport,
)
from devkit.devstack.ports import free_port
from tests.provider_client.conftest import client_config

Handler = Callable[[httpx.Request], httpx.Response]


def _client(handler: Handler, **overrides: Any) -> SportMonksClient:
    http = httpx.AsyncClient(base_url="http://provider.test", transport=httpx.MockTransport(handler))
    return SportMonksClient(SportMonksTransport(http, client_config(**overrides), owns_http=True))


async def test_nobody_listening_is_provider_unavailable() -> None:
    """Connection refused on every attempt ends as `ProviderUnavailable`, not an httpx error."""
    http = httpx.AsyncClient(base_url=f"http://127.0.0.1:{free_port()}")
    async with SportMonksClient(SportMonksTransport(http, client_config(), owns_http=True)) as client:
        with pytest.raises(ProviderUnavailable) as caught:
            await client.live()
    assert (caught.value.reason, caught.value.attempts) == ("retries_exhausted", 3)
    assert "ConnectError" in caught.value.detail


@pytest.mark.parametrize(
    "body",
    [[1, 2, 3], {"data": "not fixtures"}, {"subscription": []}, {"data": [], "pagination": "x"}],
)
async def test_json_that_is_not_an_envelope_is_a_payload_error(body: object) -> None:
    """Valid JSON of the wrong shape is `ProviderPayloadInvalid` — a `ProviderError` and the
    normaliser's `ProviderPayloadError` at once — after one request (retrying cannot fix it)."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json=body)

    async with _client(handler) as client:
        with pytest.raises(ProviderPayloadInvalid) as caught:
            await client.live()
    assert isinstance(caught.value, ProviderError) and isinstance(caught.value, ProviderPayloadError)
    assert len(requests) == 1


async def test_an_unnormalisable_single_fixture_is_a_payload_error() -> None:
    """`fixture(id)` cannot skip its only fixture: a bad one raises `ProviderPayloadInvalid`
    (its path is the fixture's place in the `fixtures/multi` answer it arrived in)."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json={"data": [{"id": 7, "sport_id": 99}]})

    async with _client(handler) as client:
        with pytest.raises(ProviderPayloadInvalid) as caught:
            await client.fixture(7)
    assert (caught.value.path, caught.value.fixture_id) == ("0.sport_id", 7)
    assert [request.url.path for request in requests] == ["/v3/football/fixtures/multi/7"]


async def test_pages_are_followed_by_number_when_there_is_no_cursor() -> None:
    """The older `next_page` form is followed with `page=N+1` until `has_more` is false."""
    pages: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        page = request.url.params.get("page")
        pages.append(page)
        number = int(page or 1)
        fixture = {"id": number, "sport_id": 1, "state_id": 1}
        pagination = {
            "count": 1,
            "per_page": 1,
            "current_page": number,
            "next_page": f"http://provider.test/x?page={number + 1}" if number < 3 else None,
            "has_more": number < 3,
        }
        return httpx.Response(200, json={"data": [fixture], "pagination": pagination})

    async with _client(handler) as client:
        snapshots = await client.fixtures_between(date(2026, 3, 1), date(2026, 3, 2))
    assert [snapshot.fixture_id for snapshot in snapshots] == [1, 2, 3]
    assert pages == [None, "2", "3"]
