"""One desk goal on the real dev stack, then `scoreline trace` of its id: the whole path, in order.

Every part is real: `scoreline dev` with its own Postgres, Redis and Temporal, the worker, the feed
builder and the API as separate processes writing JSON logs under the data dir. The goal goes over
HTTP with a `traceparent`, a live screen follows the match over SSE, and the trace must list the
API's request line, the command row, the log entry, the outbox row, the live delivery and the feed
build of that one change.
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

import httpx
import psutil
import pytest

from scoreline.db.engine import create_engine
from scoreline.devstack.demo_desk import DeskMatch, create_desk_match, player
from scoreline.devstack.envfile import read_env_file
from scoreline.tracing import new_trace_id, traceparent_for
from tests.streams.clients import sse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "recordings" / "football-basic.jsonl"
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
    argv += ["--recording", str(RECORDING), "--start-in", "3600"]
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


IN_ORDER = (
    ("command", "entry", "outbox", "api: live.delivered"),
    ("command", "api: command answered"),
    ("outbox", "feed", "feeds: feeds.published"),
)
"""What must come before what: one transaction's rows, then what followed from its commit."""
EXPECTED = frozenset(name for chain in IN_ORDER for name in chain)


async def test_a_desk_goal_is_traced_from_request_to_screen_and_feed(
    stack: dict[str, str], data_dir: Path
) -> None:
    match = await _desk_match(data_dir)
    goal = new_trace_id()
    async with (
        httpx.AsyncClient(base_url=stack["api"], timeout=30) as http,
        sse(stack["api"], f"/v1/matches/{match.fixture_id}/stream") as screen,
    ):
        await screen.next()  # the current value: the screen follows the match from here
        kickoff = await _send(http, match, "football.period_start", {"period": "1H"}, 0, new_trace_id())
        goal_input = {"side": "home", "minute": 19, "player_id": player("home", 9), "kind": "open_play"}
        seq = await _send(http, match, "football.goal", goal_input, kickoff, goal)
        await screen.until_version(seq)

    # The feed build gathers for a moment; its log line follows its row.
    deadline = time.monotonic() + 60
    while True:
        result = await _trace(data_dir, goal)
        items: list[dict[str, Any]] = json.loads(result.stdout)["items"] if result.returncode == 0 else []
        names = _names(items, match.fixture_id)
        if EXPECTED <= set(names) or time.monotonic() > deadline:
            break
        await asyncio.sleep(1)
    assert EXPECTED <= set(names), (sorted(EXPECTED - set(names)), names, result.stderr)
    ats = [item["at"] for item in items]
    assert ats == sorted(ats)
    for chain in IN_ORDER:
        positions = [names.index(name) for name in chain]
        assert positions == sorted(positions), (chain, names)

    by_name = dict(zip(names, items, strict=True))
    command = by_name["command"]["detail"]
    assert (command["fixture_id"], command["code"], command["seq"]) == (
        match.fixture_id,
        "football.goal",
        seq,
    )
    assert (by_name["entry"]["detail"]["seq"], by_name["outbox"]["detail"]["seq"]) == (seq, seq)
    delivered = by_name["api: live.delivered"]["detail"]
    assert (delivered["fixture_id"], delivered["version"], delivered["subscribers"]) == (
        match.fixture_id,
        seq,
        1,
    )
    assert goal in by_name["feed"]["detail"]["trace_ids"], "(with the kick-off, if one rebuild gathered both)"
    assert goal in by_name["feeds: feeds.published"]["detail"]["trace_ids"]
    assert any(name.startswith("worker: ") for name in names), "the workflow's lines carry it too"
