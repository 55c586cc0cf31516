"""The merge: a trace's rows and log lines as one timeline.

Items are ordered by time. Rows are stamped with their transaction's start (`created_at` is
Postgres' `now()`), log lines with the writing process's clock; on one machine, or on machines
whose clocks agree, that is the order things happened. The rows one transaction writes share one
instant, so ties are broken in the order a change makes them (command, entry, outbox row, push,
feed build, then log lines), and items of one source keep the order they were read in.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from scoreline.trace.models import Source, TraceItem

TIE_ORDER: dict[Source, int] = {"command": 0, "entry": 1, "outbox": 2, "push": 3, "feed": 4, "log": 5}


def merge(*sources: Iterable[TraceItem]) -> list[TraceItem]:
    """Every item of every source, in time order."""
    return sorted(chain(*sources), key=lambda item: (item.at, TIE_ORDER[item.source]))
