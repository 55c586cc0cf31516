"""`scoreline desks|operators|fixtures` as real processes: the token or id is alone on the last line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.store import authenticate
from scoreline.db.tables import desk, fixture
from tests.accounts.bodies import player


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        return self.stdout.rstrip("\n").splitlines()[-1]


Scoreline = Callable[..., Awaitable[Run]]


@pytest.fixture
def scoreline(database_url: str, tmp_path: Path) -> Scoreline:
    """Run `python -m scoreline ...` against this test's database (an empty data dir: no dev env file)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SCORELINE_DATA_DIR": str(tmp_path),
        "LOG_FORMAT": "json",
    }

    async def run(*args: str) -> Run:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "scoreline",
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode is not None
        return Run(process.returncode, stdout.decode(), stderr.decode())

    return run


async def test_operators_create_prints_a_token_that_authenticates(
    scoreline: Scoreline, engine: AsyncEngine
) -> None:
    """The last line is the token alone; it authenticates as that operator; revoke ends it."""
    created = await scoreline("operators", "create", "ops")
    assert created.code == 0, created.stderr
    token = created.last_line
    assert token.startswith("sl_op_") and " " not in token
    assert "store it now" in created.stderr
    sender = await authenticate(engine, token)
    assert sender is not None and (sender.kind, sender.name) == ("operator", "ops")

    revoked = await scoreline("operators", "revoke", "ops")
    assert revoked.code == 0, revoked.stderr
    assert await authenticate(engine, token) is None


async def test_desks_create_prints_a_token_scoped_to_its_fixtures(
    scoreline: Scoreline, engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """`--fixtures A,B` scopes the desk; the token on the last line authenticates as it."""
    first, second = provider_fixtures
    created = await scoreline("desks", "create", "north", "--fixtures", f"{first},{second}")
    assert created.code == 0, created.stderr
    sender = await authenticate(engine, created.last_line)
    assert sender is not None and sender.fixtures == frozenset({first, second})

    assert (await scoreline("desks", "revoke", "north")).code == 0
    assert await authenticate(engine, created.last_line) is None


async def test_desk_errors_go_to_stderr_with_a_failing_exit(
    scoreline: Scoreline, engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """Unknown fixtures, a taken name, bad ids and an unknown desk: a message on stderr, non-zero exit, no token."""
    unknown = await scoreline("desks", "create", "north", "--fixtures", f"{provider_fixtures[0]},42")
    assert unknown.code != 0 and "no such fixture: 42" in unknown.stderr and unknown.stdout == ""
    async with engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(desk))).scalar_one() == 0

    assert (await scoreline("desks", "create", "north", "--fixtures", str(provider_fixtures[0]))).code == 0
    taken = await scoreline("desks", "create", "north", "--fixtures", str(provider_fixtures[0]))
    assert taken.code != 0 and "already exists" in taken.stderr and taken.stdout == ""

    garbled = await scoreline("desks", "create", "south", "--fixtures", "12,abc")
    assert garbled.code != 0 and "--fixtures" in garbled.stderr

    ghost = await scoreline("desks", "revoke", "ghost")
    assert ghost.code != 0 and "no desk named 'ghost'" in ghost.stderr


async def test_fixtures_create_prints_the_new_id(
    scoreline: Scoreline, engine: AsyncEngine, tmp_path: Path
) -> None:
    """With a squads file the row holds the players (ids assigned); the id is alone on the last line."""
    squads = tmp_path / "squads.json"
    squads.write_text(
        json.dumps({"home": [player(1), player(12, starting=False)], "away": [player(9, id=77)]})
    )
    created = await scoreline(
        "fixtures", "create", "--sport", "cricket", "--home", "Harbour CC", "--away", "Quarry CC",
        "--kickoff", "2026-06-01T10:30:00+01:00", "--competition", "County Cup", "--squads", str(squads),
    )  # fmt: skip
    assert created.code == 0, created.stderr
    fixture_id = int(created.last_line)
    async with engine.connect() as conn:
        row = (await conn.execute(select(fixture).where(fixture.c.id == fixture_id))).one()
    assert (row.sport, row.source, row.scoring_mode, row.name) == (
        "cricket",
        "desk",
        "desk",
        "Harbour CC vs Quarry CC",
    )
    assert [p["id"] for p in row.squads["home"]] == [1, 2]
    assert [p["id"] for p in row.squads["away"]] == [77]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--kickoff", "2026-06-01T10:30:00"], "kickoff: Input should have timezone info"),
        (
            ["--kickoff", "2026-06-01T10:30:00Z", "--away", "harbour cc"],
            "home and away must be different teams",
        ),
        (
            ["--kickoff", "2026-06-01T10:30:00Z", "--squads", "SQUADS"],
            "home.players: shirt number used more than once: 7",
        ),
        (["--kickoff", "2026-06-01T10:30:00Z", "--squads", "/nonexistent/squads.json"], "squads"),
    ],
    ids=["naive-kickoff", "same-teams", "duplicate-shirts", "missing-file"],
)
async def test_fixtures_create_refuses_bad_input(
    scoreline: Scoreline, engine: AsyncEngine, tmp_path: Path, extra: list[str], message: str
) -> None:
    """Each problem is one clear line on stderr, the exit is non-zero, and no fixture is written."""
    squads = tmp_path / "squads.json"
    squads.write_text(json.dumps({"home": [player(7), player(7)]}))
    args = [str(squads) if arg == "SQUADS" else arg for arg in extra]
    refused = await scoreline(
        "fixtures", "create", "--sport", "football", "--home", "Harbour CC", "--away", "Quarry CC", *args
    )
    assert refused.code != 0
    assert message in refused.stderr, refused.stderr
    assert refused.stdout == ""
    async with engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(fixture))).scalar_one() == 0


async def test_without_a_database_url_the_command_says_so(tmp_path: Path) -> None:
    """No DATABASE_URL (and no dev env file): a clear error, non-zero exit."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "scoreline", "operators", "create", "ops", "--data-dir", str(tmp_path),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode != 0
    assert "DATABASE_URL is not set" in stderr.decode()
    assert stdout == b""
