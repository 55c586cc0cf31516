"""The `scoreline` command: every subcommand explains itself, and dev tools refuse production."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = [
    ["dev"],
    ["demo"],
    ["worker"],
    ["api"],
    ["migrate"],
    ["replay"],
    ["trace"],
    ["feeds"],
    ["sim", "provider"],
    ["sim", "apns"],
]


def _scoreline(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoreline", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_says_what_each_command_does(command: list[str]) -> None:
    """`--help` exits 0, shows the command's own description and its --data-dir option."""
    result = _scoreline(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout
    assert "--data-dir" in result.stdout


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    """A production environment complete enough for Settings to build (so the refusal is the command's)."""
    key = tmp_path / "AuthKey.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    return {
        "SCORELINE_ENV": "production",
        "DATABASE_URL": "postgresql://db/x",
        "REDIS_URL": "redis://r/0",
        "PROVIDER_TOKEN": "real",
        "APNS_KEY_PATH": str(key),
    }


@pytest.mark.parametrize("simulator", ["provider", "apns"])
def test_simulators_refuse_production(simulator: str, production_env: dict[str, str]) -> None:
    """With SCORELINE_ENV=production a simulator exits 2 with a message, serving nothing."""
    result = _scoreline("sim", simulator, "--port", "1", env=production_env)
    assert result.returncode == 2
    assert "production" in result.stderr
    assert "APNS_KEY_PATH" not in result.stderr


def test_dev_refuses_production(production_env: dict[str, str]) -> None:
    """`scoreline dev` would start embedded services and simulators: refused in production."""
    result = _scoreline("dev", "--data-dir", "/nonexistent-scoreline", env=production_env)
    assert result.returncode == 2
    assert "production" in result.stderr
    assert "APNS_KEY_PATH" not in result.stderr
