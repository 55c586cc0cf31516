"""`scoreline provider fetch FIXTURE_ID` against the simulator: the snapshot, or exit 2 with why."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from tests.support.provider import TOKEN, running_provider


async def _fetch(
    provider_url: str, fixture_id: int, token: str = TOKEN, *options: str
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "scoreline", "provider", "fetch", str(fixture_id), *options,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "PROVIDER_URL": provider_url,
            "PROVIDER_TOKEN": token,
            "CRICKET_PROVIDER_URL": f"{provider_url}/api/v2.0",
            "CRICKET_PROVIDER_TOKEN": token,
            "LOG_LEVEL": "warning",
        },
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_fetch_prints_the_normalised_fixture() -> None:
    """A known fixture prints as snapshot JSON with its id, state and teams; exit 0."""
    async with running_provider(["football-basic"], t=3000.0) as provider:
        code, out, err = await _fetch(provider.url, 81000001)
    assert code == 0, err
    snapshot = json.loads(out)
    assert snapshot["fixture_id"] == 81000001
    assert snapshot["participants"]["home"]["name"] == "Riverside FC"
    assert snapshot["state"] in {"live_first_half", "half_time", "live_second_half"}


async def test_fetch_of_an_unknown_fixture_or_with_a_bad_token_exits_2() -> None:
    """No such fixture, or a token the provider refuses: a message on stderr and exit 2."""
    async with running_provider(["football-basic"]) as provider:
        missing = await _fetch(provider.url, 42)
        refused = await _fetch(provider.url, 81000001, token="wrong")
    assert missing[0] == 2 and "no fixture 42" in missing[2]
    assert refused[0] == 2 and "ProviderAuthError" in refused[2]


async def test_fetch_of_a_cricket_fixture_by_its_provider_id() -> None:
    """`--sport cricket 58328` asks Cricket v2 and prints the snapshot under Scoreline's id."""
    async with running_provider(["cricket-t20"], t=6000.0) as provider:
        code, out, err = await _fetch(provider.url, 58328, TOKEN, "--sport", "cricket")
    assert code == 0, err
    snapshot = json.loads(out)
    assert (snapshot["sport"], snapshot["fixture_id"], snapshot["state"]) == (
        "cricket",
        2000000058328,
        "innings_1",
    )
    assert snapshot["cricket"]["innings"][0]["team_id"] == 8
