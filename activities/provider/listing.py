"""Normalising a provider answer's fixtures, whichever the sport: the part both clients share.

A fixture the normaliser rejects is logged and left out; it never spoils the others. Relations the
provider silently dropped (an include it did not honour) are logged too, so a gap is visible.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from activities.provider.envelope import Envelope
from activities.provider.errors import ProviderPayloadError
from domain.snapshot import Snapshot
from scoreline.logging import get_logger

log = get_logger(__name__)

INLINE_NORMALISE_MAX = 20
"""Lists longer than this are normalised off the event loop."""

Normalise = Callable[[Iterable[object]], list[Snapshot | ProviderPayloadError]]


async def normalise_listing(
    envelope: Envelope, normalise: Normalise, relations: frozenset[str]
) -> tuple[list[Snapshot], list[ProviderPayloadError]]:
    """The envelope's fixtures as snapshots, and the rejected ones (already logged)."""
    items = envelope.items
    note_missing(envelope.endpoint, items, relations)
    if len(items) > INLINE_NORMALISE_MAX:
        # ~0.2 ms of CPU per football fixture (more for a cricket one with its balls): a 500-match
        # board would stall every other task in the worker for ~0.1 s. In a thread the loop keeps
        # its turns (the GIL is handed over every few ms) and cached-board callers are answered.
        results = await asyncio.to_thread(normalise, items)
    else:
        results = normalise(items)
    snapshots: list[Snapshot] = []
    rejected: list[ProviderPayloadError] = []
    for result in results:
        if isinstance(result, Snapshot):
            snapshots.append(result)
        else:
            rejected.append(result)
            log.warning("provider.fixture_rejected", endpoint=envelope.endpoint, **result.to_dict())
    return snapshots, rejected


def note_missing(endpoint: str, items: Sequence[Any], relations: frozenset[str]) -> None:
    """Log the relations asked for that some fixtures came without.

    The provider drops includes it does not honour without saying so; the snapshot then has
    `None` for that relation (never "empty"), and this line makes the gap visible.
    """
    missing: Counter[str] = Counter()
    for item in items:
        if isinstance(item, dict):
            keys = {str(key).lower() for key in item}
            missing.update(relation for relation in relations if relation not in keys)
    if missing:
        log.info("provider.includes_missing", endpoint=endpoint, fixtures=len(items), missing=dict(missing))
