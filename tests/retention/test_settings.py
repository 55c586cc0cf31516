"""Retention settings: ages in days, `off` per table, and what the Schedule's runs are given."""

from __future__ import annotations

from datetime import timedelta

import pytest

from domain.retention import DAY, RetentionInput
from scoreline.durations import format_duration, parse_duration
from scoreline.settings import Settings
from workers.schedules import retention_input


@pytest.mark.parametrize(
    ("text", "expected"),
    [("7d", timedelta(days=7)), ("1.5d", timedelta(hours=36)), (" 30 d ", timedelta(days=30))],
)
def test_durations_accept_days(text: str, expected: timedelta) -> None:
    """`d` is a unit (retention ages are written in days); it round-trips through the env file form."""
    assert parse_duration(text) == expected
    assert parse_duration(format_duration(expected)) == expected


def test_the_defaults_are_the_documented_ages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hourly; outbox and superseded documents 7 days, push attempts, commands, `la_push` 30; batches of 1,000."""
    for name in (
        "INTERVAL",
        "OUTBOX_AGE",
        "PUSH_ATTEMPT_AGE",
        "COMMAND_AGE",
        "LA_PUSH_AGE",
        "DOCUMENT_AGE",
        "BATCH",
    ):
        monkeypatch.delenv(f"RETENTION_{name}", raising=False)
    settings = Settings()
    assert settings.retention_interval == timedelta(hours=1)
    assert retention_input(settings) == RetentionInput()
    assert RetentionInput().outbox_age_seconds == 7 * DAY
    assert RetentionInput().command_age_seconds == 30 * DAY
    assert RetentionInput().la_push_age_seconds == 30 * DAY


def test_an_age_of_off_keeps_that_table_and_off_pauses_the_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """`RETENTION_COMMAND_AGE=off` sends no age for commands (the run skips the table); the rest are read."""
    monkeypatch.setenv("RETENTION_INTERVAL", "off")
    monkeypatch.setenv("RETENTION_COMMAND_AGE", "off")
    monkeypatch.setenv("RETENTION_OUTBOX_AGE", "2d")
    monkeypatch.setenv("RETENTION_BATCH", "250")
    settings = Settings()
    assert settings.retention_interval is None
    given = retention_input(settings)
    assert (given.command_age_seconds, given.outbox_age_seconds, given.batch) == (None, 2 * DAY, 250)


def test_the_webhook_attempt_age_reaches_the_scheduled_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`RETENTION_WEBHOOK_ATTEMPT_AGE` was read but never passed on: scheduled runs kept the delivery
    log 30 days whatever it said."""
    monkeypatch.setenv("RETENTION_WEBHOOK_ATTEMPT_AGE", "3d")
    assert retention_input(Settings()).webhook_attempt_age_seconds == 3 * DAY
    monkeypatch.setenv("RETENTION_WEBHOOK_ATTEMPT_AGE", "off")
    assert retention_input(Settings()).webhook_attempt_age_seconds is None


def test_the_la_push_age_reaches_the_scheduled_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`RETENTION_LA_PUSH_AGE` sets how long a match's published pushes are kept; `off` keeps them."""
    monkeypatch.setenv("RETENTION_LA_PUSH_AGE", "45d")
    assert retention_input(Settings()).la_push_age_seconds == 45 * DAY
    monkeypatch.setenv("RETENTION_LA_PUSH_AGE", "off")
    assert retention_input(Settings()).la_push_age_seconds is None
