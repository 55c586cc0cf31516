"""The partners check: conditional GETs answered as the feeds promise, versions only forward, and
every document at its final version; each broken promise is named."""

from __future__ import annotations

import random

import httpx
import pytest

from devkit.soak.feed_check import Answer, check_answers, etag_version
from devkit.soak.partners import Grants, Poller
from devkit.soak.screens import Endpoints

pytestmark = pytest.mark.unit

V1, V2 = '"1-aaa"', '"2-bbb"'


def _details(answers: list[Answer], final: int | None = 2) -> list[str]:
    return [violation.detail for violation in check_answers("p doc", answers, final)]


def test_a_partner_that_revalidates_and_moves_on_passes() -> None:
    answers = [
        Answer(200, None, V1, 1),
        Answer(304, V1, V1, 1),
        Answer(200, V1, V2, 2),
        Answer(304, V2, V2, 2),
    ]
    assert _details(answers) == []


def test_a_304_for_an_etag_that_did_not_match_is_named() -> None:
    answers = [Answer(200, None, V1, 1), Answer(304, V1, V2, None), Answer(200, V1, V2, 2)]
    assert _details(answers) == [f"304 with ETag {V2} for If-None-Match {V1}"]


def test_a_304_without_if_none_match_is_named() -> None:
    assert _details([Answer(304, None, V2, None), Answer(200, None, V2, 2)]) == [
        f"304 with ETag {V2} for If-None-Match None"
    ]


def test_a_full_body_for_a_matching_etag_is_named() -> None:
    answers = [Answer(200, None, V2, 2), Answer(200, V2, V2, 2)]
    assert _details(answers) == [f"200 with the ETag {V2} it sent: that is a 304"]


def test_an_etag_that_names_another_version_is_named() -> None:
    assert _details([Answer(200, None, V1, 2)]) == [f"ETag {V1} on a body at version 2"]


def test_a_version_that_goes_back_is_named() -> None:
    answers = [Answer(200, None, V2, 2), Answer(200, V2, V1, 1), Answer(200, V1, V2, 2)]
    assert _details(answers) == ["went back from version 2 to 1"]


def test_a_partner_left_behind_the_final_version_is_named() -> None:
    assert _details([Answer(200, None, V1, 1)]) == ["ended holding version 1, Postgres is at 2"]
    assert _details([]) == ["ended holding nothing, Postgres is at 2"]


def test_a_document_never_published_is_named() -> None:
    assert _details([], None) == ["Postgres never published it"]


def test_an_etag_names_its_version() -> None:
    assert etag_version('"12-abc-gz"') == 12
    assert etag_version('W/"3-x"') == 3
    assert etag_version('"x-3"') is None


def test_a_partner_polls_its_matches_and_their_days() -> None:
    grants = Grants(matches={8: [3, 1], 9: [2]}, days={1: "2026-12-02", 3: "2026-12-03", 2: "2026-12-02"})
    assert grants.documents([8]) == ["match/1", "match/3", "fixtures/2026-12-02", "fixtures/2026-12-03"]


def _poller(handler: httpx.MockTransport) -> tuple[Poller, httpx.AsyncClient]:
    poller = Poller(
        "p", "sl_partner_key", ["match/1"], Endpoints(["http://a", "http://b"], 0), random.Random(1)
    )
    return poller, httpx.AsyncClient(transport=handler)


async def test_a_poller_revalidates_with_the_etag_it_holds() -> None:
    """The second request carries the first answer's ETag and the 304 keeps its version."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.headers.get("if-none-match") == V1:
            return httpx.Response(304, headers={"ETag": V1})
        return httpx.Response(200, json={"version": 1}, headers={"ETag": V1})

    poller, client = _poller(httpx.MockTransport(answer))
    async with client:
        await poller.fetch(client, "match/1")
        await poller.fetch(client, "match/1")
    assert [request.headers.get("if-none-match") for request in sent] == [None, V1]
    assert sent[0].headers["x-api-key"] == "sl_partner_key"
    assert poller.answers["match/1"] == [Answer(200, None, V1, 1), Answer(304, V1, V1, 1)]


async def test_a_poller_moves_to_the_next_process_when_one_does_not_answer() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "a":
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(404, json={"error": {"code": "document_not_found"}})

    poller, client = _poller(httpx.MockTransport(answer))
    async with client:
        assert await poller.fetch(client, "match/1") is None
        assert await poller.fetch(client, "match/1") is None
    assert (poller.endpoints.current, poller.failures, poller.answers) == ("http://b", 2, {})
