"""What the client hands back: snapshots from every endpoint, empty results, bad items skipped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import structlog
from structlog.testing import capture_logs

from activities.provider import ProviderRequestError
from domain.snapshot import MatchState, Snapshot
from scoreline.tracing import bound_trace, trace_id_from_traceparent
from tests.provider_client.conftest import (
    SYNTHETIC_BASE_ID,
    THREE_IDS,
    MakeClient,
    Sent,
    StartSim,
    Synthetic,
)


async def test_live_board_holds_every_fixture_in_play(start_sim: StartSim, make_client: MakeClient) -> None:
    """`livescores/inplay` becomes one board of normalised snapshots, by fixture id."""
    sim = await start_sim()
    client = make_client(sim)
    board = await client.live()
    assert sorted(board.fixtures) == sorted(THREE_IDS)
    assert all(isinstance(snapshot, Snapshot) for snapshot in board.fixtures.values())
    assert board.rejected == ()
    assert abs((datetime.now(UTC) - board.fetched_at).total_seconds()) < 5
    snapshot = await client.live_snapshot(THREE_IDS[0])
    assert snapshot is not None and snapshot.events is not None and snapshot.participants is not None
    assert await client.live_snapshot(123) is None
    assert await sim.requests() == {"livescores/inplay": 1}


async def test_no_results_is_an_empty_answer_not_an_error(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """The 200 "No result(s) found" body (no `data`) is an empty board, an unknown id is None."""
    sim = await start_sim(t=-600)  # before kick-off: nothing in play
    client = make_client(sim)
    assert (await client.live()).fixtures == {}
    assert await client.fixture(42) is None
    assert await client.fixtures([42, 43]) == []


async def test_fixture_by_id(start_sim: StartSim, make_client: MakeClient) -> None:
    """`fixture(id)` returns that fixture's snapshot, from one `fixtures/multi/{ids}` request."""
    sim = await start_sim()
    snapshot = await make_client(sim).fixture(THREE_IDS[1])
    assert snapshot is not None
    assert snapshot.fixture_id == THREE_IDS[1]
    assert snapshot.state is not MatchState.UNKNOWN
    assert await sim.requests() == {"fixtures/multi/{ids}": 1}


async def test_fixtures_multi_asks_fifty_ids_at_a_time(start_sim: StartSim, make_client: MakeClient) -> None:
    """120 ids (duplicates removed) take three `fixtures/multi` requests; unknown ids are left out."""
    sim = await start_sim()
    ids = [*THREE_IDS, *range(1, 118), THREE_IDS[0]]
    snapshots = await make_client(sim).fixtures(ids)
    assert [snapshot.fixture_id for snapshot in snapshots] == list(THREE_IDS)
    assert await sim.requests() == {"fixtures/multi/{ids}": 3}


async def test_fixtures_between_follows_every_page(
    start_sim: StartSim, make_client: MakeClient, synthetic: Synthetic
) -> None:
    """`fixtures/between` is followed page by page (50 a page) until `has_more` is false."""
    sim = await start_sim([synthetic(120)], t=0)
    today = datetime.now(UTC).date()
    snapshots = await make_client(sim).fixtures_between(today - timedelta(days=1), today + timedelta(days=1))
    assert sorted(snapshot.fixture_id for snapshot in snapshots) == [
        SYNTHETIC_BASE_ID + i for i in range(120)
    ]
    assert await sim.requests() == {"fixtures/between/{start}/{end}": 3}


async def test_a_bad_fixture_is_logged_and_skipped(
    start_sim: StartSim, make_client: MakeClient, synthetic: Synthetic
) -> None:
    """One fixture the normaliser rejects is reported on the board and logged; the rest arrive."""
    sim = await start_sim([synthetic(5, broken=[2])], t=0)
    with capture_logs() as logs:
        board = await make_client(sim).live()
    assert sorted(board.fixtures) == [SYNTHETIC_BASE_ID + i for i in (0, 1, 3, 4)]
    assert [(error.fixture_id, error.path) for error in board.rejected] == [
        (SYNTHETIC_BASE_ID + 2, "2.scores")
    ]
    rejected = [line for line in logs if line["event"] == "provider.fixture_rejected"]
    assert [line["fixture_id"] for line in rejected] == [SYNTHETIC_BASE_ID + 2]


async def test_requests_are_logged_with_the_trace_id_and_carry_traceparent(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """Each request logs endpoint, status, latency and attempt, and sends the bound trace id."""
    sim = await start_sim()
    sent = Sent()
    client = make_client(sim, sent=sent)
    with capture_logs([structlog.contextvars.merge_contextvars]) as logs, bound_trace() as trace_id:
        await client.fixture(THREE_IDS[0])
    [request] = sent.requests
    assert request.url.path == f"/v3/football/fixtures/multi/{THREE_IDS[0]}"
    assert trace_id_from_traceparent(request.headers["traceparent"]) == trace_id
    assert request.headers["authorization"] == "client-test-token"
    assert "api_token" not in str(request.url)
    [line] = [line for line in logs if line["event"] == "provider.request"]
    assert line["endpoint"] == "fixtures/multi/{ids}"
    assert line["status"] == 200
    assert line["attempt"] == 1
    assert line["latency_ms"] >= 0
    assert line["outcome"] == "ok"
    assert line["trace_id"] == trace_id


async def test_a_refused_request_is_a_typed_error_and_not_retried(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """A 400 (bad dates) is `ProviderRequestError` after exactly one request."""
    sim = await start_sim()
    client = make_client(sim)
    with pytest.raises(ProviderRequestError) as caught:
        await client.transport.get("fixtures/between/{start}/{end}", "fixtures/between/2026-02-01/2026-01-01")
    assert caught.value.status == 400
    assert await sim.total() == 1
