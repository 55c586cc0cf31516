"""Last interval's board, kept fixture by fixture while a fixture's part of it is unchanged.

Both live boards (Football v3's `livescores/inplay`, Cricket v2's `livescores`) list every match
in play each interval, and most are as they were. A fixture whose mark (football: its payload
itself, compared at C speed; cricket: a fingerprint of its balls) equals last interval's keeps
its snapshot, the very same object, so nothing normalises it again and its watch recognises it
without a Redis or Postgres trip. Only the rest go to the normaliser.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from domain.snapshot import Snapshot

M = TypeVar("M")


class BoardMemo(Generic[M]):
    """Snapshots of the last board by the provider's fixture id, with the mark each was made from.

    Args:
        mark: What decides "unchanged" for a payload; None: never reuse it.
        provider_id: The provider's id of a snapshot (the key its payload's `id` gave).
    """

    def __init__(
        self, mark: Callable[[Any], M | None], provider_id: Callable[[Snapshot], int | None]
    ) -> None:
        self._mark = mark
        self._provider_id = provider_id
        self._seen: dict[int, tuple[M, Snapshot]] = {}
        self._pending: dict[int, M] = {}

    def split(self, items: Iterable[Any]) -> tuple[list[Snapshot], list[Any]]:
        """This board's unchanged fixtures (their kept snapshots) and the payloads to normalise.

        Fixtures missing from this board are forgotten."""
        seen, self._seen, self._pending = self._seen, {}, {}
        kept: list[Snapshot] = []
        changed: list[Any] = []
        for item in items:
            mark = self._mark(item)
            raw_id = item.get("id") if mark is not None and isinstance(item, dict) else None
            fixture_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
            if mark is None or fixture_id is None:
                changed.append(item)
                continue
            known = seen.get(fixture_id)
            if known is not None and known[0] == mark:
                kept.append(known[1])
                self._seen[fixture_id] = known
                continue
            self._pending[fixture_id] = mark
            changed.append(item)
        return kept, changed

    def remember(self, fresh: Iterable[Snapshot]) -> None:
        """Keep the snapshots just normalised from `split`'s changed payloads for next board."""
        for snapshot in fresh:
            fixture_id = self._provider_id(snapshot)
            if fixture_id is not None and fixture_id in self._pending:
                self._seen[fixture_id] = (self._pending[fixture_id], snapshot)
        self._pending = {}
