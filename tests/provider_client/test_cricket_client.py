"""The Cricket v2 client against the real provider simulator over HTTP (issue 12).

The same transport as football's, pointed at `/api/v2.0` with the token as `api_token` and
comma-separated includes; Scoreline's cricket ids mapped to the provider's and back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import date
from typing import Any

import httpx
import pytest

from activities.provider import ProviderAuthError, SportMonksTransport
from activities.provider.cricket.client import FIXTURE_INCLUDES, CricketClient
from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import MatchState, Sport
from tests.match.cricket import recorded_lines
from tests.provider_client.conftest import ManualClock, Sent, Sim, StartSim, client_config

T20 = BUNDLED_RECORDINGS_DIR / "cricket-t20.jsonl.gz"
T20_ID = cricket_fixture_id(58328)
IN_PLAY_T = 5000.0
"""Replay time in the first innings of the T20."""

MakeCricket = Callable[..., CricketClient]


@pytest.fixture
async def make_cricket() -> AsyncIterator[MakeCricket]:
    made: list[tuple[CricketClient, httpx.AsyncClient]] = []

    def make(sim: Sim, *, sent: Sent | None = None, **overrides: Any) -> CricketClient:
        hooks = {"request": [sent.hook]} if sent is not None else {}
        http = httpx.AsyncClient(base_url=f"{sim.base_url}/api/v2.0", event_hooks=hooks)
        config = replace(
            client_config(**overrides),
            prefix="",
            token_in="query",
            upstream="cricket",
            includes=FIXTURE_INCLUDES,
        )
        client = CricketClient(SportMonksTransport(http, config))
        made.append((client, http))
        return client

    yield make
    for client, http in made:
        await client.aclose()
        await http.aclose()


async def test_a_fixture_is_fetched_by_scoreline_id_with_the_token_in_the_query(
    start_sim: StartSim, make_cricket: MakeCricket
) -> None:
    """`fixtures/58328?api_token=…&include=balls,runs,…`, never an `Authorization` header; the
    snapshot carries Scoreline's id and the balls bowled so far."""
    sim = await start_sim((T20,), t=IN_PLAY_T)
    sent = Sent()
    client = make_cricket(sim, sent=sent)
    snapshot = await client.fixture(T20_ID)
    assert snapshot is not None
    assert (snapshot.sport, snapshot.fixture_id, snapshot.state) == (
        Sport.CRICKET,
        T20_ID,
        MatchState.INNINGS_1,
    )
    shown = [line for line in recorded_lines("cricket-t20") if line["t"] <= IN_PLAY_T][-1]["fixture"]
    assert snapshot.balls is not None
    assert [ball.provider_id for ball in snapshot.balls] == [ball["id"] for ball in shown["balls"]]
    assert snapshot.cricket is not None and snapshot.cricket.current is not None
    [fixture_request] = [r for r in sent.requests if r.url.path.endswith("/fixtures/58328")]
    assert fixture_request.url.params["api_token"] == "client-test-token"
    assert fixture_request.url.params["include"] == "balls,runs,localteam,visitorteam"
    assert "authorization" not in fixture_request.headers


async def test_an_unknown_fixture_is_none_and_a_football_id_is_not_asked_for(
    start_sim: StartSim, make_cricket: MakeCricket
) -> None:
    sim = await start_sim((T20,), t=IN_PLAY_T)
    client = make_cricket(sim)
    assert await client.fixture(cricket_fixture_id(1)) is None
    before = await sim.total()
    assert await client.fixture(81000001) is None
    assert await sim.total() == before


async def test_every_live_cricket_match_shares_one_livescores_request(
    start_sim: StartSim, make_cricket: MakeCricket
) -> None:
    """100 watchers asking at once cost one `livescores` request."""
    sim = await start_sim((T20,), t=IN_PLAY_T)
    client = make_cricket(sim, clock=ManualClock())
    boards = await asyncio.gather(*(client.live_snapshot(T20_ID) for _ in range(100)))
    assert all(board is not None and board.fixture_id == T20_ID for board in boards)
    counts = await sim.requests()
    assert counts.get("cricket/livescores") == 1


async def test_fixtures_between_reads_every_page(start_sim: StartSim, make_cricket: MakeCricket) -> None:
    """The listing follows Laravel's `meta` to the last page (one page here) and maps the ids."""
    sim = await start_sim((T20,), t=IN_PLAY_T)
    client = make_cricket(sim)
    found = await client.fixtures_between(date(2000, 1, 1), date(2100, 1, 1))
    assert [snapshot.fixture_id for snapshot in found] == [T20_ID]


async def test_the_score_table_is_fetched_once(start_sim: StartSim, make_cricket: MakeCricket) -> None:
    sim = await start_sim((T20,), t=IN_PLAY_T)
    client = make_cricket(sim)
    table = await client.scores()
    assert table is not None and 47 in table and 53 in table
    await client.fixture(T20_ID)
    await client.fixture(T20_ID)
    assert (await sim.requests()).get("cricket/scores") == 1


async def test_a_wrong_token_is_an_auth_error(start_sim: StartSim, make_cricket: MakeCricket) -> None:
    sim = await start_sim((T20,), t=IN_PLAY_T)
    client = make_cricket(sim, token="wrong")
    with pytest.raises(ProviderAuthError):
        await client.live()


async def test_an_unchanged_fixture_on_the_board_is_not_normalised_again(
    start_sim: StartSim, make_cricket: MakeCricket
) -> None:
    """Two boards a moment apart share the snapshot of a fixture nothing happened to; the next ball
    makes a new one (the board's cost follows the balls bowled, not the matches on it)."""
    sim = await start_sim((T20,), t=IN_PLAY_T)
    clock = ManualClock()
    client = make_cricket(sim, clock=clock)
    first = await client.live_snapshot(T20_ID)
    clock.advance(10)
    again = await client.live_snapshot(T20_ID)
    assert first is not None and again is first
    later = next(line for line in recorded_lines("cricket-t20") if line["t"] > IN_PLAY_T)
    await sim.clock(t=later["t"], freeze=True)
    clock.advance(10)
    moved = await client.live_snapshot(T20_ID)
    assert moved is not None and moved is not first
    assert moved.balls is not None and first.balls is not None
    assert len(moved.balls) == len(later["fixture"]["balls"]) > len(first.balls)
    assert (await sim.requests()).get("cricket/livescores") == 3
