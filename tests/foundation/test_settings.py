"""Settings and duration strings: every interval is `<number><unit>` or `off`, production is strict."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from scoreline.durations import DurationError, format_duration, parse_duration
from scoreline.settings import Environment, Settings, load_settings

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.5s", timedelta(seconds=2.5)),
        ("500ms", timedelta(milliseconds=500)),
        ("1m", timedelta(minutes=1)),
        ("1h", timedelta(hours=1)),
        (" 60s ", timedelta(seconds=60)),
        ("off", None),
        ("OFF", None),
    ],
)
def test_parse_duration_accepts_units_and_off(text: str, expected: timedelta | None) -> None:
    """Each documented spelling parses to the right length, and `off` to None."""
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["2.5", "fast", "-1s", "0s", "1 day", "", "1.2.3s"])
def test_parse_duration_refuses_ambiguous_or_bad_values(text: str) -> None:
    """A number without a unit, a non-positive length or junk is refused with a DurationError."""
    with pytest.raises(DurationError):
        parse_duration(text)


def test_format_duration_round_trips() -> None:
    """What the dev stack writes into env files reads back to the same value."""
    for value in (timedelta(seconds=2.5), timedelta(minutes=1), None):
        assert parse_duration(format_duration(value)) == value


def test_poll_interval_off_disables_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """POLL_INTERVAL_LIVE=off is the kill switch: the setting becomes None, not an error."""
    monkeypatch.setenv("POLL_INTERVAL_LIVE", "off")
    monkeypatch.setenv("POLL_INTERVAL_IDLE", "7.5s")
    settings = Settings()
    assert settings.poll_interval_live is None
    assert settings.poll_interval_idle == timedelta(seconds=7.5)


def test_bad_interval_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed interval fails at start, naming the field, rather than polling at a guess."""
    monkeypatch.setenv("RECONCILE_INTERVAL", "soon")
    with pytest.raises(ValidationError, match="reconcile_interval"):
        Settings()


def test_la_min_update_interval_cannot_be_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pacing of Live Activity updates is required; turning it off is refused."""
    monkeypatch.setenv("LA_MIN_UPDATE_INTERVAL", "off")
    with pytest.raises(ValidationError, match="la_min_update_interval"):
        Settings()


def test_production_refuses_missing_services(monkeypatch: pytest.MonkeyPatch) -> None:
    """In production there are no embedded fallbacks: DATABASE_URL and REDIS_URL are required."""
    monkeypatch.setenv("SCORELINE_ENV", "production")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    with pytest.raises(ValidationError, match="DATABASE_URL, REDIS_URL"):
        Settings()


def test_production_refuses_the_dev_provider_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The placeholder provider token is a development value only."""
    key = tmp_path / "AuthKey.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    monkeypatch.setenv("SCORELINE_ENV", "production")
    monkeypatch.setenv("DATABASE_URL", "postgresql://db/scoreline")
    monkeypatch.setenv("REDIS_URL", "redis://cache/0")
    monkeypatch.setenv("APNS_KEY_PATH", str(key))
    with pytest.raises(ValidationError, match="PROVIDER_TOKEN"):
        Settings()
    monkeypatch.setenv("PROVIDER_TOKEN", "real-token")
    assert Settings().scoreline_env is Environment.PRODUCTION


def test_production_apns_key_path_names_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: production started with a missing key file and every push then failed for good,
    one warning per push; now Settings refuse a path that is no file, naming the variable. Without
    the variable they build (only the worker needs the key, and it refuses to start without it:
    tests/ops/test_production_shape.py)."""
    monkeypatch.setenv("SCORELINE_ENV", "production")
    monkeypatch.setenv("DATABASE_URL", "postgresql://db/scoreline")
    monkeypatch.setenv("REDIS_URL", "redis://cache/0")
    monkeypatch.setenv("PROVIDER_TOKEN", "real-token")
    monkeypatch.delenv("APNS_KEY_PATH", raising=False)
    assert Settings().apns_key_path is None
    missing = tmp_path / "nowhere" / "AuthKey.p8"
    monkeypatch.setenv("APNS_KEY_PATH", str(missing))
    with pytest.raises(ValidationError, match=f"APNS_KEY_PATH {missing} is not a file"):
        Settings()
    monkeypatch.setenv("APNS_KEY_PATH", str(tmp_path))
    with pytest.raises(ValidationError, match="is not a file"):
        Settings()
    missing.parent.mkdir()
    missing.write_text("-----BEGIN PRIVATE KEY-----\n")
    monkeypatch.setenv("APNS_KEY_PATH", str(missing))
    assert Settings().apns_key_path == missing
    # Development keeps working without a key: the worker then skips pushes that have no target.
    monkeypatch.setenv("SCORELINE_ENV", "development")
    monkeypatch.delenv("APNS_KEY_PATH")
    assert Settings().apns_key_path is None


def test_env_file_is_under_the_real_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`<data-dir>/env` supplies a running stack's addresses; a real variable still wins."""
    (tmp_path / "env").write_text("DATABASE_URL=postgresql://from-file/db\nREDIS_URL=redis://from-file/0\n")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", "redis://from-env/0")
    settings = load_settings(tmp_path)
    assert settings.database_url == "postgresql://from-file/db"
    assert settings.redis_url == "redis://from-env/0"
    assert settings.data_dir == tmp_path


def test_production_reads_from_no_other_origin_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Development lets any origin's page read the public API (`*`); production only the origins
    API_CORS_ORIGINS names, none when it is unset (issue 13: explicit origins in production)."""
    key = tmp_path / "AuthKey.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    assert Settings().api_cors_origins == "*"
    for name, value in {
        "SCORELINE_ENV": "production",
        "DATABASE_URL": "postgresql://db/scoreline",
        "REDIS_URL": "redis://cache/0",
        "PROVIDER_TOKEN": "real-token",
        "APNS_KEY_PATH": str(key),
    }.items():
        monkeypatch.setenv(name, value)
    assert Settings().api_cors_origins == ""
    monkeypatch.setenv("API_CORS_ORIGINS", "https://scores.example.com")
    assert Settings().api_cors_origins == "https://scores.example.com"


def test_a_list_of_durations_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`CRICKET_POST_MATCH_RECHECKS=2m,10m` as an operator writes it. Before `NoDecode`,
    pydantic-settings read the variable as JSON and a worker given it refused to start."""
    monkeypatch.setenv("CRICKET_POST_MATCH_RECHECKS", "2m,10m,1h")
    assert Settings().cricket_post_match_rechecks == (
        timedelta(minutes=2),
        timedelta(minutes=10),
        timedelta(hours=1),
    )
    monkeypatch.setenv("CRICKET_POST_MATCH_RECHECKS", "off")
    assert Settings().cricket_post_match_rechecks == ()
    monkeypatch.setenv("CRICKET_POST_MATCH_RECHECKS", "2m,10")
    with pytest.raises(ValidationError, match=r"needs a unit|is not like"):
        Settings()
