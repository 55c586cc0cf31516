"""The gathering rules and the cursor bookkeeping, on a clock the test controls (no sleeping)."""

from __future__ import annotations

from datetime import date

import pytest

from scoreline.feeds.gather import Gatherer
from scoreline.feeds.keys import FixturesDoc, MatchDoc
from scoreline.outbox.reader import Cursor

pytestmark = pytest.mark.unit

A = MatchDoc(1)
B = MatchDoc(2)
DAY = FixturesDoc(date(2026, 3, 14))


def test_a_burst_is_gathered_but_never_held_past_the_limit() -> None:
    """Each change pushes the build back by the gather time, up to max_hold after the first change."""
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    gatherer.change(A, Cursor(10, 1), now=0.0, happened=0.0)
    assert gatherer.next_due() == 1.0
    gatherer.change(A, Cursor(10, 2), now=0.6, happened=0.6)
    assert gatherer.next_due() == pytest.approx(1.6)
    for moment in (1.2, 1.8, 2.4, 2.9):
        gatherer.change(A, Cursor(10, 3), now=moment, happened=moment)
    assert gatherer.next_due() == 3.0
    assert gatherer.due(2.99) == []
    assert gatherer.due(3.0) == [A]


def test_a_change_read_late_counts_from_when_it_happened() -> None:
    """A row held back behind an open transaction for 2.5 s is built 0.5 s after it is read."""
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    gatherer.change(A, Cursor(10, 1), now=100.0, happened=97.5)
    assert gatherer.next_due() == 100.5


def test_due_documents_come_longest_waiting_first() -> None:
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    gatherer.change(B, Cursor(10, 1), now=0.5, happened=0.5)
    gatherer.change(A, Cursor(10, 2), now=0.0, happened=0.0)
    assert gatherer.due(5.0) == [A, B]


def test_the_cursor_only_passes_rows_whose_documents_are_built() -> None:
    """Rows r1 (A), r2 (B), r3 (A): building A settles r1 only; building B then settles through r3."""
    r1, r2, r3 = Cursor(10, 1), Cursor(11, 2), Cursor(12, 3)
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    for row, doc in ((r1, A), (r2, B), (r3, A)):
        gatherer.change(doc, row, now=0.0, happened=0.0)
        gatherer.read(row)
    assert gatherer.settled() is None
    gatherer.built(A)
    assert gatherer.settled() == r1
    assert gatherer.settled() is None
    gatherer.built(B)
    assert gatherer.settled() == r3


def test_a_failed_build_keeps_holding_its_rows() -> None:
    row = Cursor(10, 1)
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    gatherer.change(A, row, now=0.0, happened=0.0)
    gatherer.read(row)
    gatherer.retry(A, due=4.0)
    assert gatherer.settled() is None
    assert gatherer.due(3.5) == []
    assert gatherer.due(4.0) == [A]


def test_a_sweep_holds_no_row_back() -> None:
    """A document asked for by the periodic sweep alone does not stop the cursor."""
    row = Cursor(10, 1)
    gatherer = Gatherer(gather=1.0, max_hold=3.0)
    gatherer.change(DAY, None, now=0.0, happened=0.0)
    gatherer.read(row)
    assert gatherer.settled() == row
    assert gatherer.due(1.0) == [DAY]


def test_gather_must_fit_in_the_hold() -> None:
    with pytest.raises(ValueError, match="gather"):
        Gatherer(gather=4.0, max_hold=3.0)
