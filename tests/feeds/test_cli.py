"""`scoreline partners create|revoke` as an operator runs them: a real process, a real database."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.build import build_document
from scoreline.feeds.keys import MatchDoc
from scoreline.feeds.partners import KEY_PREFIX, hash_api_key
from tests.feeds.changes import MATCH
from tests.readmodel.rows import MatchLog
from tests.support.waiting import eventually


async def _scoreline(database_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SCORELINE_DATA_DIR": str(data_dir),
        "LOG_FORMAT": "json",
    }
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "scoreline", "partners", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


async def test_create_prints_the_key_alone_on_the_last_line_and_stores_only_its_hash(
    database_url: str, tmp_path: Path, engine: AsyncEngine, api: httpx.AsyncClient
) -> None:
    created = await _scoreline(database_url, tmp_path, "create", "acme", "--competitions", "8,564")
    assert created.returncode == 0, created.stderr
    api_key = created.stdout.splitlines()[-1]
    assert api_key.startswith(KEY_PREFIX)
    assert api_key == api_key.strip()
    assert len(api_key) == len(KEY_PREFIX) + 43
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        row = await connection.fetchrow(
            "SELECT api_key_hash, competitions, active FROM partner WHERE name = 'acme'"
        )
    finally:
        await connection.close()
    assert dict(row) == {"api_key_hash": hash_api_key(api_key), "competitions": [8, 564], "active": True}

    await MatchLog.create(engine, MATCH)
    await build_document(engine, MatchDoc(MATCH))
    await eventually(lambda: _status_is(api, api_key, 200), within=5)

    again = await _scoreline(database_url, tmp_path, "create", "acme", "--competitions", "8")
    assert again.returncode == 1
    assert "already exists" in again.stderr

    revoked = await _scoreline(database_url, tmp_path, "revoke", "acme")
    assert revoked.returncode == 0, revoked.stderr
    await eventually(lambda: _status_is(api, api_key, 403), within=5)

    unknown = await _scoreline(database_url, tmp_path, "revoke", "nobody")
    assert unknown.returncode == 1
    assert "no partner" in unknown.stderr


async def test_create_refuses_a_bad_competition_list(database_url: str, tmp_path: Path) -> None:
    for value in ("eight", ",", "0"):
        result = await _scoreline(database_url, tmp_path, "create", "acme", "--competitions", value)
        assert result.returncode != 0, value
        assert "competition" in result.stderr.lower(), value


async def _status_is(api: httpx.AsyncClient, key: str, status: int) -> bool:
    answer = await api.get(f"/v1/feeds/match/{MATCH}", headers={"X-Api-Key": key})
    return answer.status_code == status


async def test_delay_sets_what_the_partners_key_reads_and_refuses_out_of_range(
    database_url: str, tmp_path: Path
) -> None:
    """`scoreline partners delay NAME SECONDS`: the operator's way to delay a partner's key."""
    created = await _scoreline(database_url, tmp_path, "create", "delayed", "--competitions", "8")
    assert created.returncode == 0, created.stderr
    delayed = await _scoreline(database_url, tmp_path, "delay", "delayed", "45")
    too_long = await _scoreline(database_url, tmp_path, "delay", "delayed", "301")
    nobody = await _scoreline(database_url, tmp_path, "delay", "nobody", "10")

    assert delayed.returncode == 0, delayed.stderr
    assert too_long.returncode != 0 and nobody.returncode != 0
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        stored = await connection.fetchval("SELECT delay_seconds FROM partner WHERE name = 'delayed'")
    finally:
        await connection.close()
    assert stored == 45
