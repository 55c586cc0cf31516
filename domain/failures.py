"""Failures that cross the workflow boundary as Temporal `ApplicationError`s.

Temporal tells errors apart by their type's *name* (a string: retry policies list the ones not worth
retrying, callers read `cause.type`). Each name is therefore defined once, here, beside the
exception it stands for, and everyone raises and matches through these.
"""

from __future__ import annotations


class UnknownFixture(LookupError):
    """No fixture row with this id: nothing to start, decide or push; retrying cannot help."""


UNKNOWN_FIXTURE = UnknownFixture.__name__


APNS_CONFIG_ERROR = "ApnsConfigError"
"""APNs refused our own request (key, topic, request shape), or the worker has no APNs settings:
every push would fail the same way, so none is retried. Raised only as this `ApplicationError`
type, by the fan-out."""
