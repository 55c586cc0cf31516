"""Requests received per data endpoint, for tests that count a client's upstream calls."""

from __future__ import annotations

from collections import Counter

from devkit.simulators.provider.endpoints import Endpoint


class RequestStats:
    """Counts every request that reaches a data endpoint, whatever it was answered with."""

    def __init__(self) -> None:
        self._requests: Counter[str] = Counter()

    def count(self, endpoint: Endpoint) -> None:
        """Record one request for `endpoint`."""
        self._requests[endpoint] += 1

    @property
    def requests(self) -> dict[str, int]:
        """Requests per endpoint name, only endpoints that were called."""
        return dict(self._requests)

    @property
    def total(self) -> int:
        """Requests over all endpoints."""
        return sum(self._requests.values())

    def reset(self) -> None:
        """Start counting from zero."""
        self._requests.clear()
