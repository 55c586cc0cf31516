"""The desk book caught up from Postgres after the log moved without it."""

from __future__ import annotations

import pytest

from domain.desk import ALL_TOUCHES, DeskBook
from domain.rules import initial_state

pytestmark = pytest.mark.unit


def test_a_book_caught_up_from_postgres_counts_what_it_missed_as_touched() -> None:
    """A book read back from Postgres knew nothing had moved, so a command that saw the older log
    was decided as if it had seen the new entries (a takeover missed the provider's goal)."""
    book = DeskBook(rules=initial_state("football", "provider"), version=4)
    stored = DeskBook(rules=initial_state("football", "desk"), version=6)

    caught_up = book.caught_up(stored)

    assert (caught_up.version, caught_up.rules.mode) == (6, "desk")
    assert caught_up.touched.since(4, ALL_TOUCHES)
    assert not caught_up.touched.since(6, ALL_TOUCHES)
    assert book.caught_up(DeskBook(rules=stored.rules, version=4)) is book
