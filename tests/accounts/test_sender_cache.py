"""The API's sender cache: answers for `ttl` seconds, then asks again; never grows past its size."""

from __future__ import annotations

from api.auth import SenderCache
from scoreline.accounts.models import Sender

DESK = Sender(kind="desk", id=3, name="north", fixtures=frozenset({81000001}))


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_lives_for_the_ttl_only() -> None:
    """Within the ttl the sender comes from the cache; after it the caller must ask Postgres again."""
    clock = Clock()
    cache = SenderCache(ttl=5.0, clock=clock)
    cache.put("h", DESK)
    clock.now += 4.9
    assert cache.get("h") == DESK
    clock.now += 0.1
    assert cache.get("h") is None
    assert cache.get("unknown") is None


def test_a_full_cache_drops_expired_entries_first_then_everything() -> None:
    """At its size the cache forgets expired entries; if all are fresh it starts over, never exceeding its size."""
    clock = Clock()
    cache = SenderCache(ttl=5.0, size=2, clock=clock)
    cache.put("old", DESK)
    clock.now += 10
    cache.put("a", DESK)
    cache.put("b", DESK)
    assert (cache.get("old"), cache.get("a"), cache.get("b")) == (None, DESK, DESK)
    cache.put("c", DESK)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, None, DESK)
