"""`scoreline provider normalize` prints a snapshot (exit 0) or the error on stderr (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from activities.provider.normaliser import normalise_fixture
from scoreline.cli.provider import provider_app
from tests.normaliser.samples import sample

runner = CliRunner()


@pytest.mark.parametrize("wrap", ["bare", "envelope", "recording line"])
def test_normalize_file(tmp_path: Path, wrap: str) -> None:
    """A bare fixture, a response envelope and a recording line all print the same snapshot."""
    fixture = sample()
    document = {
        "bare": fixture,
        "envelope": {"data": fixture, "timezone": "UTC"},
        "recording line": {"t": 5400.0, "fixture": fixture},
    }[wrap]
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(document))
    result = runner.invoke(provider_app, ["normalize", str(path)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == normalise_fixture(fixture).model_dump(mode="json")


def test_normalize_stdin() -> None:
    """`-` (and no argument) reads stdin."""
    for args in (["normalize", "-"], ["normalize"]):
        result = runner.invoke(provider_app, args, input=json.dumps(sample()))
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["fixture_id"] == 81000001


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": "x"}', "id: "),
        ("[1, 2]", "<payload>"),
        ("not json", "cannot read"),
        (
            '{"t": 1, "fixture": {"id": 1, "events": [{"id": 1, "type_id": 14, "minute": "9"}]}}',
            "events.0.minute",
        ),
    ],
)
def test_normalize_errors_exit_2(text: str, message: str) -> None:
    """A non-fixture or unreadable input exits 2 with the error on stderr and nothing on stdout."""
    result = runner.invoke(provider_app, ["normalize", "-"], input=text)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr


def test_normalize_missing_file(tmp_path: Path) -> None:
    """A missing file exits 2."""
    result = runner.invoke(provider_app, ["normalize", str(tmp_path / "nope.json")])
    assert result.exit_code == 2 and "cannot read" in result.stderr
