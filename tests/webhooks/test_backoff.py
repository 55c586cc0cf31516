"""Backoff and Retry-After: pure arithmetic."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from scoreline.webhooks.backoff import RETRY_AFTER_LIMIT, backoff, next_delay, parse_retry_after

pytestmark = pytest.mark.unit

FIRST = timedelta(seconds=1)
CAP = timedelta(minutes=10)
NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


def test_full_jitter_stays_under_the_capped_exponential() -> None:
    rng = random.Random(7)
    for attempts in range(1, 80):
        ceiling = min(CAP.total_seconds(), 2 ** (attempts - 1))
        draws = [backoff(attempts, FIRST, CAP, rng).total_seconds() for _ in range(50)]
        assert all(0 <= d <= ceiling for d in draws)
    late = [backoff(30, FIRST, CAP, rng).total_seconds() for _ in range(200)]
    assert max(late) > CAP.total_seconds() * 0.8, "late retries spread up to the cap"
    assert min(late) < CAP.total_seconds() * 0.2, "and down towards zero (full jitter)"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", timedelta(seconds=120)),
        (" 0 ", timedelta(0)),
        ("Sat, 14 Mar 2026 15:01:30 GMT", timedelta(seconds=90)),
        ("Sat, 14 Mar 2026 14:00:00 GMT", timedelta(0)),
        (None, None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(value: str | None, expected: timedelta | None) -> None:
    assert parse_retry_after(value, NOW) == expected


def test_retry_after_is_a_floor_bounded_by_its_limit() -> None:
    rng = random.Random(1)
    assert next_delay(1, FIRST, CAP, timedelta(seconds=300), rng) == timedelta(seconds=300)
    assert next_delay(1, FIRST, CAP, timedelta(days=3), rng) == RETRY_AFTER_LIMIT
    assert next_delay(1, FIRST, CAP, None, rng) <= FIRST
