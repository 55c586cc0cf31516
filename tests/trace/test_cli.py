"""`scoreline trace` as a person runs it: a real process over a real database and a log directory.

The rows are written the way the system writes them: a provider change through the real ingest and
feed build, a desk command through the workflow's own decision and the real commit function. Only
the push attempt is inserted as a row (a push needs APNs and a Live Activity) and the log lines are
written to a file, as the stack's processes write them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from activities.commands.store import CommandStore
from api.command_road import payload_hash
from devkit.devstack.demo_desk import demo_draft
from domain.commands import CommandRequest, CommitStatus
from domain.desk import decide, open_book
from domain.progress import MatchProgress
from scoreline.accounts.desk_fixtures import create_fixture
from scoreline.db.tables import push_attempt
from scoreline.devices.store import Registration, register
from scoreline.feeds.build import build_document
from scoreline.feeds.keys import MatchDoc
from scoreline.tracing import new_trace_id
from tests.trace.recording import MATCH, TracedIngest


async def _scoreline_trace(
    database_url: str | None, cwd: Path, *args: str, data_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `scoreline trace ARGS` with DATABASE_URL (unset if None) and a data dir with no stack
    unless told, in a thread so the test's event loop keeps running."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    argv = [
        sys.executable,
        "-m",
        "scoreline",
        "trace",
        *args,
        "--data-dir",
        str(data_dir or cwd / "no-stack"),
    ]
    return await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


async def _provider_change(engine: AsyncEngine) -> tuple[str, int]:
    """The recording's first change through the ingest, its match document built, one push tried.

    Returns its trace id and the number of log entries the ingest wrote.
    """
    trace_id, summary = await TracedIngest(engine).next_change()
    built = await build_document(engine, MatchDoc(MATCH), trace_ids=[trace_id])
    assert built is not None and built[1]
    device = await register(
        engine, Registration("install-1", "ios", "sandbox", "pts-token", "1.0", "en"), None
    )
    async with engine.begin() as conn:
        await conn.execute(
            push_attempt.insert().values(
                fixture_id=MATCH,
                event_key="state:1",
                effect="la.start",
                device_id=device.device_id,
                token_kind="push_to_start",
                attempt=1,
                priority=10,
                payload_bytes=321,
                apns_id=uuid.uuid4(),
                status=200,
                latency_ms=4,
                trace_id=trace_id,
            )
        )
    return trace_id, summary.version - summary.previous_version


async def _desk_command(engine: AsyncEngine, trace_id: str) -> int:
    """A desk's kick-off, decided as the match workflow decides it and committed by the real commit."""
    fixture_id = await create_fixture(engine, demo_draft())
    store = CommandStore(engine)
    book = open_book(await store.context(fixture_id))
    code, input_ = "football.period_start", {"period": "1H"}
    request = CommandRequest(
        key=f"key-{uuid.uuid4().hex}",
        code=code,
        input=input_,
        saw=0,
        sender="desk:1",
        payload_hash=payload_hash(fixture_id, code, input_, 0),
    )
    decision = decide(book, fixture_id, request, MatchProgress(), has_provider=False)
    result = await store.commit(decision.commit, trace_id)
    assert result.status is CommitStatus.COMMITTED
    return fixture_id


def _log_line(at: datetime, event: str, **fields: Any) -> str:
    return json.dumps({"timestamp": at.isoformat().replace("+00:00", "Z"), "event": event, **fields})


def _write_logs(directory: Path, provider: str, desk: str) -> None:
    """Lines as the stack writes them, around now so they interleave with the rows."""
    now = datetime.now(UTC)
    directory.mkdir()
    (directory / "worker.log").write_text(
        "\n".join(
            [
                "not json: a stray print",
                _log_line(now - timedelta(seconds=5), "ingest.polled", trace_id=provider, fixture_id=MATCH),
                _log_line(now, "someone else's change", trace_id=new_trace_id()),
                _log_line(now + timedelta(seconds=5), "push.sent", trace_id=provider, effect="la.start"),
            ]
        )
        + "\n"
    )
    (directory / "api.log").write_text(
        _log_line(now, "command answered", trace_id=desk, outcome="accepted") + "\n"
    )
    (directory / "feeds.log").write_text(
        _log_line(
            now + timedelta(seconds=6), "feeds.published", trace_ids=[desk, provider], doc=f"match/{MATCH}"
        )
        + "\n"
    )


async def test_a_trace_is_every_row_and_log_line_of_its_change_in_time_order(
    engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    provider, entries = await _provider_change(engine)
    desk = new_trace_id()
    desk_fixture = await _desk_command(engine, desk)
    logs = tmp_path / "logs"
    _write_logs(logs, provider, desk)

    result = await _scoreline_trace(database_url, tmp_path, provider, "--json", "--logs", str(logs))
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["trace_id"] == provider
    items = found["items"]
    assert [item["at"] for item in items] == sorted(item["at"] for item in items)
    sources = [item["source"] for item in items]
    assert sorted(sources) == sorted(["log", "log", "log", *["entry"] * entries, "outbox", "push", "feed"])
    assert sources[0] == "log" and sources[-2:] == ["log", "log"], "logged 5 s before and after the rows"
    by_source = {item["source"]: item for item in items}
    assert by_source["outbox"]["detail"]["fixture_id"] == MATCH
    assert by_source["outbox"]["detail"]["seq"] == entries, "the match's first change: its entries are 1..n"
    assert by_source["push"]["what"] == "push la.start 200"
    assert by_source["feed"]["what"] == f"feed match/{MATCH} v1"
    assert by_source["feed"]["detail"]["trace_ids"] == [provider]
    assert "body" not in by_source["feed"]["detail"], "a document's body is not part of its trace"
    logged = [item["what"] for item in items if item["source"] == "log"]
    assert logged == ["worker: ingest.polled", "worker: push.sent", "feeds: feeds.published"]

    result = await _scoreline_trace(database_url, tmp_path, desk, "--json", "--logs", str(logs))
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    assert [item["source"] for item in items] == ["command", "entry", "outbox", "log", "log"]
    command, entry, outbox = (item["detail"] for item in items[:3])
    assert (command["fixture_id"], command["code"], command["outcome"], command["seq"]) == (
        desk_fixture,
        "football.period_start",
        "accepted",
        1,
    )
    assert (entry["fixture_id"], entry["seq"], entry["origin"]) == (desk_fixture, 1, "desk")
    assert (outbox["fixture_id"], outbox["seq"]) == (desk_fixture, 1)
    assert items[0]["what"] == "command football.period_start accepted seq 1 (desk:1)"

    table = await _scoreline_trace(database_url, tmp_path, desk, "--logs", str(logs))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith(f"trace {desk}: 5 items from ")
    assert [line.split()[2] for line in lines[2:-1]] == ["command", "entry", "outbox", "log", "log"]
    assert lines[-1] == "1 command, 1 entry, 1 outbox, 2 log"


async def test_the_default_logs_are_the_data_dirs(
    engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    """Without `--logs` the lines come from `<data-dir>/logs/*.log`, beside the stack's env file."""
    trace_id = new_trace_id()
    stack = tmp_path / "stack"
    (stack / "logs").mkdir(parents=True)
    (stack / "env").write_text(f"DATABASE_URL={database_url}\n")
    (stack / "logs" / "api.log").write_text(
        _log_line(datetime.now(UTC), "command answered", trace_id=trace_id)
    )
    result = await _scoreline_trace(None, tmp_path, trace_id, "--json", data_dir=stack)
    assert result.returncode == 0, result.stderr
    assert [item["what"] for item in json.loads(result.stdout)["items"]] == ["api: command answered"]


async def test_a_malformed_trace_id_is_refused(tmp_path: Path) -> None:
    """Exit 2 and say what a trace id looks like; nothing is searched."""
    for bad in ("not-a-trace", "4BF92F3577B34DA6A3CE929D0E0E4736", "4bf92f3577b34da6"):
        result = await _scoreline_trace("postgresql://nowhere.invalid/none", tmp_path, bad)
        assert result.returncode == 2, (bad, result.stderr)
        assert "32 lowercase hex digits" in result.stderr
        assert result.stdout == ""


async def test_a_trace_with_nothing_says_so(database_url: str, tmp_path: Path) -> None:
    """Exit 1 with the reason on stderr, nothing on stdout."""
    empty = tmp_path / "logs"
    empty.mkdir()
    trace_id = new_trace_id()
    result = await _scoreline_trace(database_url, tmp_path, trace_id, "--json", "--logs", str(empty))
    assert result.returncode == 1, result.stderr
    assert f"nothing carries trace {trace_id}" in result.stderr
    assert result.stdout == ""
