"""Per-fixture calls gathered into `fixtures/multi` requests of up to 50 ids (`batching`).

Against the real simulator: 120 concurrent `fixture()` calls for distinct ids cost three
requests and each caller gets its own fixture (an unknown id None, a rejected one
`ProviderPayloadInvalid`); a failed request fails every caller in it with the same
`ProviderError`; cancelling one caller, while it waits for company or while the request is out,
leaves the others their answer. As pure units with a fake fetch: a batch goes at 50 ids without
waiting, the earliest deadline wins, and a batch is deferrable only if every caller in it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from activities.provider import ProviderAuthError, ProviderError, ProviderPayloadInvalid, ProviderUnavailable
from activities.provider.batching import Batcher
from domain.snapshot import Snapshot
from tests.provider_client.conftest import (
    SYNTHETIC_BASE_ID,
    THREE_IDS,
    MakeClient,
    StartSim,
    Synthetic,
)

MULTI = "fixtures/multi/{ids}"
UNKNOWN_ID = 42


async def test_concurrent_fixture_calls_share_fifty_id_requests(
    start_sim: StartSim, make_client: MakeClient, synthetic: Synthetic
) -> None:
    """120 callers of distinct ids (and one of an unknown id) within the window: three requests,
    each caller its own snapshot, the unknown id None."""
    sim = await start_sim([synthetic(120)], t=0)
    client = make_client(sim)
    ids = [SYNTHETIC_BASE_ID + index for index in range(120)]
    results = await asyncio.gather(*(client.fixture(fixture_id) for fixture_id in [*ids, UNKNOWN_ID]))
    *found, unknown = results
    assert [snapshot.fixture_id if snapshot is not None else None for snapshot in found] == ids
    assert all(isinstance(snapshot, Snapshot) for snapshot in found)
    assert unknown is None
    assert await sim.requests() == {MULTI: 3}
    assert client.stats.transport.sent == 3


async def test_a_rejected_fixture_fails_only_its_own_caller(
    start_sim: StartSim, make_client: MakeClient, synthetic: Synthetic
) -> None:
    """One request for five ids, one of which the normaliser rejects: that caller gets
    `ProviderPayloadInvalid`, the other four their snapshots."""
    sim = await start_sim([synthetic(5, broken=[2])], t=0)
    client = make_client(sim)
    ids = [SYNTHETIC_BASE_ID + index for index in range(5)]
    results = await asyncio.gather(*(client.fixture(i) for i in ids), return_exceptions=True)
    broken = results.pop(2)
    assert isinstance(broken, ProviderPayloadInvalid) and broken.fixture_id == ids[2]
    assert [r.fixture_id for r in results if isinstance(r, Snapshot)] == [*ids[:2], *ids[3:]]
    assert await sim.requests() == {MULTI: 1}


@pytest.mark.parametrize(
    ("fault", "error_type", "requests"),
    [
        ({"kind": "status", "status": 401}, ProviderAuthError, 1),
        ({"kind": "status", "status": 503}, ProviderUnavailable, 3),  # every attempt, then given up
    ],
    ids=["status_401", "lasting_503"],
)
async def test_a_failed_request_fails_every_caller_in_it(
    fault: dict[str, Any],
    error_type: type[ProviderError],
    requests: int,
    start_sim: StartSim,
    make_client: MakeClient,
    synthetic: Synthetic,
) -> None:
    """Twenty callers in one batch whose request fails all get that request's one error."""
    sim = await start_sim([synthetic(20)], t=0)
    client = make_client(sim)
    await sim.fault(**fault, endpoints=[MULTI])
    ids = [SYNTHETIC_BASE_ID + index for index in range(20)]
    results = await asyncio.gather(*(client.fixture(i) for i in ids), return_exceptions=True)
    assert {type(result) for result in results} == {error_type}
    assert len({id(result) for result in results}) == 1  # the same error, not twenty of its kind
    assert await sim.requests() == {MULTI: requests}


async def test_cancelling_one_caller_leaves_the_others_their_answer(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """One caller cancelled while waiting for company and one while the (slow) request is out:
    the request still goes, once, and the remaining callers get their fixtures."""
    sim = await start_sim()
    client = make_client(sim)
    await sim.fault(kind="latency", seconds=0.3, endpoints=[MULTI])
    waiting = asyncio.create_task(client.fixture(THREE_IDS[0], within=0.1))
    in_flight = asyncio.create_task(client.fixture(THREE_IDS[1], within=0.1))
    others = [asyncio.create_task(client.fixture(i, within=0.1)) for i in (THREE_IDS[1], THREE_IDS[2])]
    await asyncio.sleep(0.02)
    waiting.cancel()
    await asyncio.sleep(0.2)  # the batch has gone and is held up by the latency fault
    assert client.stats.transport.in_flight == 1
    in_flight.cancel()
    snapshots = await asyncio.gather(*others)
    assert [snapshot.fixture_id if snapshot else None for snapshot in snapshots] == list(THREE_IDS[1:])
    for cancelled in (waiting, in_flight):
        with pytest.raises(asyncio.CancelledError):
            await cancelled
    assert await sim.requests() == {MULTI: 1}


class FakeFetch:
    """A `fixtures/multi` stand-in: records each request, answers every id but `missing`."""

    def __init__(self, *, missing: frozenset[int] = frozenset(), error: Exception | None = None) -> None:
        self.calls: list[tuple[list[int], bool]] = []
        self.missing = missing
        self.error = error
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, ids: Sequence[int], deferrable: bool) -> Mapping[int, str]:
        self.calls.append((list(ids), deferrable))
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return {fixture_id: f"fixture {fixture_id}" for fixture_id in ids if fixture_id not in self.missing}


async def _until(condition: Any, timeout: float = 1.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.001)


@pytest.mark.unit
async def test_a_batch_goes_at_fifty_ids_without_waiting() -> None:
    """Fifty ids with a minute to wait go at once in one request; the 51st waits for its own."""
    fetch = FakeFetch()
    batcher = Batcher[str](fetch, 50)
    loop = asyncio.get_running_loop()
    began = loop.time()
    first = await asyncio.gather(*(batcher.get(i, within=60) for i in range(50)))
    assert loop.time() - began < 1
    assert first == [f"fixture {i}" for i in range(50)]
    assert fetch.calls == [(list(range(50)), False)]
    assert await batcher.get(50, within=0.01) == "fixture 50"
    assert fetch.calls[1] == ([50], False)
    await batcher.aclose()


@pytest.mark.unit
async def test_one_id_asked_twice_is_asked_for_once() -> None:
    """Two callers of one id share its place in the request and both get the answer."""
    fetch = FakeFetch()
    batcher = Batcher[str](fetch, 50)
    assert await asyncio.gather(batcher.get(7, within=0.01), batcher.get(7, within=0.01)) == [
        "fixture 7",
        "fixture 7",
    ]
    assert fetch.calls == [([7], False)]
    await batcher.aclose()


@pytest.mark.unit
@pytest.mark.parametrize("patient_first", [True, False])
async def test_the_earliest_deadline_wins(patient_first: bool) -> None:
    """A caller willing to wait 10 s and one willing to wait 0.05 s share a request that goes
    after 0.05 s, whichever asked first."""
    fetch = FakeFetch()
    batcher = Batcher[str](fetch, 50)
    loop = asyncio.get_running_loop()
    began = loop.time()
    waits = [(1, 10.0), (2, 0.05)] if patient_first else [(2, 0.05), (1, 10.0)]
    results = await asyncio.gather(*(batcher.get(i, within=within) for i, within in waits))
    elapsed = loop.time() - began
    assert sorted(results) == ["fixture 1", "fixture 2"]
    assert 0.04 <= elapsed < 1.0
    assert [sorted(ids) for ids, _ in fetch.calls] == [[1, 2]]
    await batcher.aclose()


@pytest.mark.unit
@pytest.mark.parametrize(
    ("callers", "expected"),
    [
        ([(1, True), (2, True)], True),
        ([(1, True), (2, False)], False),
        ([(1, True), (1, False)], False),  # one id, one impatient caller
        ([(1, False)], False),
    ],
)
async def test_a_batch_is_deferrable_only_if_every_caller_is(
    callers: list[tuple[int, bool]], expected: bool
) -> None:
    fetch = FakeFetch()
    batcher = Batcher[str](fetch, 50)
    await asyncio.gather(*(batcher.get(i, within=0.01, deferrable=d) for i, d in callers))
    assert [deferrable for _, deferrable in fetch.calls] == [expected]
    await batcher.aclose()


@pytest.mark.unit
async def test_an_id_the_answer_leaves_out_is_none() -> None:
    fetch = FakeFetch(missing=frozenset({2}))
    batcher = Batcher[str](fetch, 50)
    assert await asyncio.gather(*(batcher.get(i, within=0.01) for i in (1, 2, 3))) == [
        "fixture 1",
        None,
        "fixture 3",
    ]
    await batcher.aclose()


@pytest.mark.unit
async def test_a_failed_fetch_fails_every_caller_with_its_error() -> None:
    error = ProviderUnavailable(MULTI, "retries_exhausted")
    batcher = Batcher[str](FakeFetch(error=error), 50)
    results = await asyncio.gather(*(batcher.get(i, within=0.01) for i in range(5)), return_exceptions=True)
    assert all(result is error for result in results)
    await batcher.aclose()


@pytest.mark.unit
async def test_a_cancelled_caller_does_not_cancel_the_request() -> None:
    """The request in flight outlives a caller that leaves; the others get their answers."""
    fetch = FakeFetch()
    fetch.release.clear()
    batcher = Batcher[str](fetch, 50)
    leaving = asyncio.create_task(batcher.get(1, within=0.01))
    staying = [asyncio.create_task(batcher.get(i, within=0.01)) for i in (1, 2)]
    await _until(lambda: fetch.calls)
    leaving.cancel()
    await asyncio.sleep(0.01)
    fetch.release.set()
    assert await asyncio.gather(*staying) == ["fixture 1", "fixture 2"]
    assert leaving.cancelled()
    assert len(fetch.calls) == 1
    await batcher.aclose()


@pytest.mark.unit
async def test_aclose_cancels_callers_still_waiting() -> None:
    batcher = Batcher[str](FakeFetch(), 50)
    waiting = asyncio.create_task(batcher.get(1, within=60))
    await asyncio.sleep(0.01)
    await batcher.aclose()
    with pytest.raises(asyncio.CancelledError):
        await waiting
