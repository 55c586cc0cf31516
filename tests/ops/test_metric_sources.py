"""Where the gauges behind the alerts get their values: the watch registry and the feed gatherer (pure)."""

from __future__ import annotations

import time
from datetime import date

import pytest

from activities.provider.ratelimit import remaining_calls
from activities.watched import WatchedMatches
from scoreline.feeds.gather import Gatherer
from scoreline.feeds.keys import FixturesDoc, MatchDoc
from scoreline.outbox.reader import Cursor

pytestmark = pytest.mark.unit


def test_the_poll_age_is_the_longest_wait_among_in_play_matches_only() -> None:
    watched = WatchedMatches()
    watched.polled(1, in_play=True)
    polled_at = time.monotonic()
    watched.polled(2, in_play=True)
    watched.polled(3, in_play=False)  # before kickoff: not watched for lateness

    assert watched.oldest_age(polled_at + 40) == pytest.approx(40, abs=0.5)
    watched.polled(1, in_play=True)  # polled again: now match 2 waits longest
    assert watched.oldest_age(time.monotonic()) < 1


def test_a_match_leaves_the_poll_age_when_it_leaves_play_or_its_watch_ends_here() -> None:
    """A watch that returns may go on in another worker: this one must not alert for it."""
    watched = WatchedMatches()
    watched.polled(1, in_play=True)
    watched.polled(2, in_play=True)
    watched.polled(1, in_play=False)  # full time
    watched.ended(2)  # its watch returned (a material change) or failed

    assert watched.oldest_age(time.monotonic() + 1000) == 0


def test_staleness_counts_from_the_oldest_change_no_published_document_shows() -> None:
    gatherer = Gatherer(gather=1, max_hold=3)
    match, day = MatchDoc(1), FixturesDoc(date(2026, 3, 14))
    gatherer.change(match, Cursor(10, 1), now=100, happened=98)
    gatherer.change(day, Cursor(10, 1), now=100, happened=98)
    gatherer.change(match, Cursor(11, 2), now=101, happened=101)

    assert gatherer.staleness(102) == 4
    gatherer.built(match)
    assert gatherer.staleness(102) == 4  # the day's list still waits for the first change
    gatherer.retry(day, due=110)
    assert gatherer.staleness(112) == 14  # a failing rebuild keeps counting
    gatherer.built(day)
    assert gatherer.staleness(112) == 0


@pytest.mark.parametrize(
    ("block", "remaining"),
    [
        ({"remaining": 141}, 141),
        ({"remaining": 0}, 0),
        ({"remaining": -3}, None),
        ({"remaining": True}, None),
        ({}, None),
    ],
)
def test_the_budget_gauge_only_takes_a_real_count(block: dict[str, object], remaining: int | None) -> None:
    """The exporter's gauge raises on a negative value, which failed the watch on every answer of a
    provider reporting one; a negative or non-integer `remaining` is now no count at all."""
    assert remaining_calls({"rate_limit": block}) == remaining
