"""A desk goal and a provider goal on the real dev stack, then `scoreline trace` of each id, in order.

Every part is real: `scoreline dev` with its own Postgres, Redis and Temporal, the worker, the feed
builder and the API as separate processes writing JSON logs under the data dir, the provider
simulator replaying a match at 30x and the APNs simulator. A live screen follows each match over
SSE and a phone follows each with a Live Activity (it reports its activity's token when the
push-to-start arrives, as the app does). The desk goal goes over HTTP with a `traceparent`; its
trace must list the API's request line, the Update's line, the command row, the log entry, the
outbox row, the live delivery, the push attempts and the feed build. The provider goal's trace
(the id its poll made) must list the poll's line, the ingest's entry and the same outputs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
import pytest

from devkit.devstack.demo_desk import DeskMatch, create_desk_match, player
from devkit.devstack.envfile import read_env_file
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.tracing import new_trace_id, traceparent_for
from tests.push.seed import apns_token
from tests.streams.clients import sse
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "recordings" / "football-basic.jsonl"
PROVIDER_MATCH = 81000001
SPEED = 30
"""The recording's first goal (replay t=830 s) comes about half a minute after the stack is ready."""
READY_TIMEOUT = 300.0
ANSWER_TIMEOUT = 60.0
"""Seconds a command may keep answering try_again (the first one starts the match's workflow)."""


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """Outside pytest's tmp tree, which concurrent pytest runs reset to 0700 (Postgres runs as another user)."""
    scratch = Path(tempfile.mkdtemp(prefix="scoreline-trace-test-"))
    scratch.chmod(0o755)
    yield scratch / "stack"
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def stack(data_dir: Path) -> Iterator[dict[str, str]]:
    """`scoreline dev` on its own services, until ready; its addresses. Ctrl-C at the end."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "TEMPORAL_ADDRESS"}}
    argv = [sys.executable, "-m", "scoreline", "dev", "--data-dir", str(data_dir)]
    argv += ["--recording", str(RECORDING), "--speed", str(SPEED), "--start-in", "5"]
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with (data_dir.parent / "dev.stderr").open("w") as stderr:
        process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**env, "LOG_FORMAT": "json"},
            cwd=ROOT,
        )
    try:
        yield _ready(process)
    finally:
        children = psutil.Process(process.pid).children(recursive=True)
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=90)
        finally:
            for child in children:
                if child.is_running():
                    child.kill()


def _ready(process: subprocess.Popen[str]) -> dict[str, str]:
    assert process.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(f"dev exited ({process.wait()}) before ready; see dev.stderr")
        if line.startswith("ready "):
            return dict(pair.split("=", 1) for pair in line.split()[1:])
    raise AssertionError("no ready line in time")


async def _desk_match(data_dir: Path) -> DeskMatch:
    engine = create_engine(read_env_file(data_dir / "env")["DATABASE_URL"], pool_size=1)
    try:
        return await create_desk_match(engine)
    finally:
        await engine.dispose()


async def _send(
    http: httpx.AsyncClient, match: DeskMatch, code: str, input_: dict[str, Any], saw: int, trace_id: str
) -> int:
    """Send one command as a desk app does (the same key again after try_again); its accepted seq."""
    body = {"key": f"trace-test-{uuid.uuid4().hex}", "code": code, "input": input_, "saw": saw}
    headers = {"Authorization": f"Bearer {match.token}", "traceparent": traceparent_for(trace_id)}
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while True:
        response = await http.post(f"/v1/matches/{match.fixture_id}/commands", json=body, headers=headers)
        assert response.headers["x-trace-id"] == trace_id
        answer = response.json()
        if answer.get("outcome") != "try_again" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert answer["outcome"] == "accepted", answer
    seq: int = answer["seq"]
    return seq


async def _trace(data_dir: Path, trace_id: str) -> subprocess.CompletedProcess[str]:
    """`scoreline trace ID --json` beside the stack: DATABASE_URL from its env file, its logs dir."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    argv = [sys.executable, "-m", "scoreline", "trace", trace_id, "--json", "--data-dir", str(data_dir)]
    return await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )


def _names(items: list[dict[str, Any]], fixture_id: int) -> list[str]:
    """Each item as what the test looks for: a log line's `part: event`, a row's source; a feed
    row or line of another document than the match's own names it."""
    document = f"match/{fixture_id}"
    names = []
    for item in items:
        name = item["what"] if item["source"] == "log" else item["source"]
        if name in ("feed", "feeds: feeds.published"):
            doc = item["detail"].get("doc_key", item["detail"].get("doc"))
            name += "" if doc == document else f" ({doc})"
        names.append(name)
    return names


class Phone:
    """The app on one phone: follows one match and reports its Live Activity's token once started."""

    def __init__(self, api: httpx.AsyncClient, apns_admin: str) -> None:
        self.api = api
        self.apns_admin = apns_admin
        self.push_to_start = apns_token()
        self.update_token = apns_token()
        self.auth: dict[str, str] = {}
        self.device_id = ""

    async def follow(self, fixture_id: int) -> None:
        registered = await self.api.post(
            "/v1/devices",
            json={
                "install_id": f"install-{uuid.uuid4().hex}",
                "platform": "ios",
                "environment": "sandbox",
                "push_to_start_token": self.push_to_start,
                "app_version": "3.0.0",
                "locale": "en-GB",
            },
        )
        assert registered.status_code == 201, registered.text
        body = registered.json()
        self.device_id, self.auth = body["id"], {"authorization": f"Bearer {body['token']}"}
        followed = await self.api.post(
            f"/v1/devices/{self.device_id}/follows", json={"fixture_id": fixture_id}, headers=self.auth
        )
        assert followed.status_code == 201, followed.text

    async def report_when_started(self, fixture_id: int) -> None:
        async with httpx.AsyncClient(base_url=self.apns_admin, timeout=10) as admin:

            async def started() -> bool:
                pushes = (await admin.get("/_sim/pushes", params={"token": self.push_to_start})).json()
                return bool(pushes["pushes"])

            await eventually(started, within=120, every=0.2)
        reported = await self.api.put(
            f"/v1/devices/{self.device_id}/live-activities/{fixture_id}",
            json={"push_token": self.update_token},
            headers=self.auth,
        )
        assert reported.status_code == 200, reported.text


async def _provider_goal_trace(data_dir: Path) -> str | None:
    """The trace id of the provider match's first goal entry, once the ingest has logged it."""
    connection = await asyncpg.connect(asyncpg_dsn(read_env_file(data_dir / "env")["DATABASE_URL"]))
    try:
        trace_id: str | None = await connection.fetchval(
            "SELECT trace_id FROM timeline_item WHERE fixture_id = $1 AND kind = 'event'"
            " AND body->>'type' = 'goal' ORDER BY seq LIMIT 1",
            PROVIDER_MATCH,
        )
    finally:
        await connection.close()
    return trace_id


async def _traced(
    data_dir: Path, trace_id: str, fixture_id: int, expected: frozenset[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """`scoreline trace` until every expected item is there (feed builds gather for a moment)."""
    deadline = time.monotonic() + 60
    while True:
        result = await _trace(data_dir, trace_id)
        items: list[dict[str, Any]] = json.loads(result.stdout)["items"] if result.returncode == 0 else []
        names = _names(items, fixture_id)
        if expected <= set(names) or time.monotonic() > deadline:
            break
        await asyncio.sleep(1)
    assert expected <= set(names), (sorted(expected - set(names)), names, result.stderr)
    ats = [item["at"] for item in items]
    assert ats == sorted(ats)
    return items, names


def _in_order(names: list[str], chains: tuple[tuple[str, ...], ...]) -> None:
    for chain in chains:
        positions = [names.index(name) for name in chain]
        assert positions == sorted(positions), (chain, names)


IN_ORDER = (
    ("command", "entry", "outbox", "api: live.delivered"),
    ("command", "worker: desk command answered by the workflow", "api: command answered"),
    ("outbox", "feed", "feeds: feeds.published"),
    ("outbox", "push"),
)
"""What must come before what: one transaction's rows, then what followed from its commit."""
EXPECTED = frozenset(name for chain in IN_ORDER for name in chain)
PROVIDER_IN_ORDER = (
    ("worker: provider.request", "entry", "outbox", "api: live.delivered"),
    ("entry", "worker: material change"),
    ("outbox", "feed", "feeds: feeds.published"),
    ("outbox", "push"),
)
"""A provider goal: the poll's request, the ingest's rows and the watch's line, then the same outputs
(no command: no desk sent it)."""
PROVIDER_EXPECTED = frozenset(name for chain in PROVIDER_IN_ORDER for name in chain)


async def test_a_desk_goal_and_a_provider_goal_are_traced_from_their_source_to_every_output(
    stack: dict[str, str], data_dir: Path
) -> None:
    match = await _desk_match(data_dir)
    goal = new_trace_id()
    async with httpx.AsyncClient(base_url=stack["api"], timeout=30) as reads:

        async def synced() -> bool:
            return (await reads.get(f"/v1/matches/{PROVIDER_MATCH}")).status_code == 200

        # The fixture sync writes the provider's match once it has listed both APIs' fixtures.
        await eventually(synced, within=120, every=0.5)
    async with (
        httpx.AsyncClient(base_url=stack["api"], timeout=30) as http,
        sse(stack["api"], f"/v1/matches/{match.fixture_id}/stream") as screen,
        sse(stack["api"], f"/v1/matches/{PROVIDER_MATCH}/stream") as provider_screen,
    ):
        await screen.next()  # the current value: the screen follows the match from here
        await provider_screen.next()
        desk_phone, provider_phone = Phone(http, stack["apns-admin"]), Phone(http, stack["apns-admin"])
        await desk_phone.follow(match.fixture_id)
        await provider_phone.follow(PROVIDER_MATCH)
        provider_started = asyncio.create_task(provider_phone.report_when_started(PROVIDER_MATCH))
        kickoff = await _send(http, match, "football.period_start", {"period": "1H"}, 0, new_trace_id())
        await desk_phone.report_when_started(match.fixture_id)
        goal_input = {"side": "home", "minute": 19, "player_id": player("home", 9), "kind": "open_play"}
        seq = await _send(http, match, "football.goal", goal_input, kickoff, goal)
        await screen.until_version(seq)
        await provider_started
        provider_goal = await eventually(lambda: _provider_goal_trace(data_dir), within=180, every=1)

    items, names = await _traced(data_dir, goal, match.fixture_id, EXPECTED)
    _in_order(names, IN_ORDER)
    by_name = dict(zip(names, items, strict=True))
    command = by_name["command"]["detail"]
    assert (command["fixture_id"], command["code"], command["seq"]) == (
        match.fixture_id,
        "football.goal",
        seq,
    )
    assert (by_name["entry"]["detail"]["seq"], by_name["outbox"]["detail"]["seq"]) == (seq, seq)
    answered = by_name["worker: desk command answered by the workflow"]["detail"]
    assert (answered["outcome"], answered["seq"]) == ("accepted", seq)
    delivered = by_name["api: live.delivered"]["detail"]
    assert (delivered["fixture_id"], delivered["version"], delivered["subscribers"]) == (
        match.fixture_id,
        seq,
        1,
    )
    assert by_name["push"]["detail"]["status"] == 200
    assert goal in by_name["feed"]["detail"]["trace_ids"], "(with the kick-off, if one rebuild gathered both)"
    assert goal in by_name["feeds: feeds.published"]["detail"]["trace_ids"]

    items, names = await _traced(data_dir, provider_goal, PROVIDER_MATCH, PROVIDER_EXPECTED)
    _in_order(names, PROVIDER_IN_ORDER)
    assert "command" not in names
    by_name = dict(zip(names, items, strict=True))
    assert by_name["entry"]["detail"]["fixture_id"] == PROVIDER_MATCH
    assert by_name["api: live.delivered"]["detail"]["fixture_id"] == PROVIDER_MATCH
